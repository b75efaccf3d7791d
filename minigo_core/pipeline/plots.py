"""The report's plots that `minigo ratings` does not draw, and the status table, from a run's files.

    minigo plots --root ROOT --out-dir ROOT/summary

Writes `loss.png` (training losses against the global step, every generation), `game_lengths.png` (self-play
game length per generation: mean and spread), `resign_false_positives.png` (per generation, with the count of
resignation-disabled games it rests on) and `status.txt` (`minigo status ROOT`).
"""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minigo_core.base.command import Command  # noqa: E402
from minigo_core.data import layout, storage  # noqa: E402
from minigo_core.data.schedule import selfplay_generations  # noqa: E402
from minigo_core.jobs.ratings import png_bytes  # noqa: E402
from minigo_core.pipeline import status  # noqa: E402
from minigo_core.pipeline.games_complete import read_marker  # noqa: E402


def _empty(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="grey")


def read_steps(path: str) -> list[dict]:
    """The `step` records of a training metrics.jsonl file."""
    records = []
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("event", "step") == "step" and "loss" in record:
                    records.append(record)
    except OSError:
        pass
    return records


def plot_loss(cfg) -> bytes:
    fig, ax = plt.subplots(figsize=(7, 4))
    drawn = False
    steps: list = []
    series: dict[str, list] = {
        "loss": [],
        "policy_loss": [],
        "value_loss": [],
        "ownership_loss": [],
        "score_loss": [],
    }
    boundaries = []
    for g in range(1, cfg.generations + 1):
        records = read_steps(layout.train_metrics_path(cfg.root, g))
        if records:
            boundaries.append((records[0].get("global_step", records[0].get("step", 0)), g))
        for r in records:
            steps.append(r.get("global_step", r.get("step", len(steps))))
            for key in series:
                series[key].append(r.get(key))
    for key, label in (
        ("loss", "total"),
        ("policy_loss", "policy (cross-entropy)"),
        ("value_loss", "value (MSE)"),
        ("ownership_loss", "ownership (cross-entropy per point)"),
        ("score_loss", "score margin / N² (MSE)"),
    ):
        points = [(s, v) for s, v in zip(steps, series[key], strict=True) if isinstance(v, (int, float))]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], label=label, lw=1)
            drawn = True
    for step, _ in boundaries[1:]:
        ax.axvline(step, color="grey", lw=0.5, alpha=0.4)
    ax.set_xlabel("global training step (grey lines: a new generation starts)")
    ax.set_ylabel("loss")
    ax.set_title("Training losses")
    if drawn:
        ax.legend()
    else:
        _empty(ax, "no training steps recorded yet")
    return png_bytes(fig)


def plot_game_lengths(cfg, markers: dict[int, dict]) -> bytes:
    fig, ax = plt.subplots(figsize=(7, 4))
    gens = sorted(g for g, m in markers.items() if m.get("game_lengths"))
    if gens:
        data = [markers[g]["game_lengths"] for g in gens]
        ax.boxplot(data, positions=gens, widths=0.6, showfliers=False)
        ax.plot(gens, [sum(d) / len(d) for d in data], "o-", color="tab:blue", label="mean", ms=3)
        ax.axhline(2 * cfg.board_size**2, color="grey", ls="--", lw=0.8, label="move cap 2N²")
        ax.legend()
    else:
        _empty(ax, "no finished self-play generations yet")
    ax.set_xlabel("generation (model that played)")
    ax.set_ylabel("moves per game")
    ax.set_title(f"Self-play game lengths ({cfg.board_size}x{cfg.board_size})")
    return png_bytes(fig)


def plot_resign(cfg, markers: dict[int, dict]) -> bytes:
    fig, ax = plt.subplots(figsize=(7, 4))
    gens = sorted(g for g, m in markers.items() if m.get("resign_false_positive_rate") is not None)
    if gens:
        rates = [markers[g]["resign_false_positive_rate"] for g in gens]
        ax.plot(gens, rates, "o-", ms=3, label="false-positive rate")
        for g, r in zip(gens, rates, strict=True):
            ax.annotate(str(markers[g]["resign_disabled_would_resign"]), (g, r), fontsize=7, alpha=0.7)
        ax.axhline(0.05, color="grey", ls="--", lw=0.8, label="5% (MiniGo's aim)")
        ax.set_ylim(-0.02, 1.02)
        ax.legend()
    else:
        _empty(ax, "no resignation-disabled game fell below the threshold yet")
    ax.set_xlabel("generation")
    ax.set_ylabel("fraction that would have resigned wrongly")
    ax.set_title(f"Resignation false positives (threshold {cfg.selfplay.resign_threshold}; numbers: games)")
    return png_bytes(fig)


def read_markers(cfg) -> dict[int, dict]:
    """generation -> its games-complete marker, for the generations that have one."""
    markers = {g: read_marker(cfg.root, g) for g in selfplay_generations(cfg)}
    return {g: m for g, m in markers.items() if m is not None}


def write_plots(args) -> None:
    cfg = status.load_run_config(args.root)
    markers = read_markers(cfg)
    storage.write_bytes(storage.join(args.out_dir, "loss.png"), plot_loss(cfg))
    storage.write_bytes(storage.join(args.out_dir, "game_lengths.png"), plot_game_lengths(cfg, markers))
    storage.write_bytes(storage.join(args.out_dir, "resign_false_positives.png"), plot_resign(cfg, markers))
    table = status.format_table(cfg, status.collect(cfg))
    storage.write_text(storage.join(args.out_dir, "status.txt"), table + "\n")
    print(table)


def cli_main(argv: list[str]) -> int:
    cmd = Command("plots", __doc__.split("\n\n")[0], errors=(OSError,))
    cmd.parser.add_argument("--root", required=True, help="the run directory")
    cmd.parser.add_argument("--out-dir", required=True, help="where to write the plots ({root}/summary)")
    return cmd.run(argv, write_plots)

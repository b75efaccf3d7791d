"""Every plot of a run's report, as PNG bytes, and the small readers they draw from: the only module that
imports matplotlib (once, here, with the Agg backend: no display is needed).

- `minigo ratings` draws `learning_curve.png` (the fixed-scale Elo of `report.fixed_scale` against wall time
  and self-play positions, the ladder's rungs as lines), `elo.png` (the run-relative Bradley-Terry Elo per
  generation, generation 0 = 0) and `winrate.png` (win rate against the target over wall time);
- `minigo plots` draws `loss.png` (training losses against the global step, every generation),
  `game_lengths.png` (self-play game length per generation: mean and spread) and
  `resign_false_positives.png` (per generation, with the count of resignation-disabled games it rests on).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from minigo_core.data import layout, storage  # noqa: E402
from minigo_core.data.games_complete import read_marker  # noqa: E402
from minigo_core.data.schedule import selfplay_generations  # noqa: E402
from minigo_core.report.fixed_scale import rung_labels, rungs_around  # noqa: E402

# ------------------------------------------------------------------------------- ratings (`minigo ratings`)


def plot_elo(
    rows: Sequence[dict], title: str = "Run-relative Elo per generation (Bradley-Terry, gen0000 = 0)"
) -> bytes:
    """PNG: Elo of each generation with 95% intervals; GNU Go levels and other players as horizontal lines."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    gens = [r for r in rows if r["generation"] is not None and r["elo"] is not None]
    if gens:
        x = [r["generation"] for r in gens]
        y = [r["elo"] for r in gens]
        err = [[r["elo"] - r["elo_low95"] for r in gens], [r["elo_high95"] - r["elo"] for r in gens]]
        ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, label="model (95% interval)")
    others = [r for r in rows if r["generation"] is None and r["elo"] is not None]
    for i, r in enumerate(others):
        colour = f"C{(i + 1) % 10}"
        ax.axhline(r["elo"], linestyle="--", color=colour, linewidth=1)
        ax.axhspan(r["elo_low95"], r["elo_high95"], color=colour, alpha=0.1)
        ax.annotate(
            r["player"],
            xy=(0.01, r["elo"]),
            xycoords=("axes fraction", "data"),
            color=colour,
            fontsize=8,
            va="bottom",
        )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("generation")
    ax.set_ylabel("Elo (generation 0 = 0)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if gens:
        ax.legend(loc="lower right", fontsize=8)
    return png_bytes(fig)


def plot_winrate(ttt: dict, title: str | None = None) -> bytes:
    """PNG: win rate against the target over wall time since the run's start, with the 50% line."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    pts = [p for p in ttt["per_generation"] if p["model_time_s"] is not None]
    if pts:
        x = [p["model_time_s"] / 3600.0 for p in pts]
        y = [p["win_rate"] for p in pts]
        err = [[p["win_rate"] - p["ci95"][0] for p in pts], [p["ci95"][1] - p["win_rate"] for p in pts]]
        ax.errorbar(x, y, yerr=err, fmt="o-", capsize=3, label="win rate (95% Wilson interval)")
        for xi, yi, p in zip(x, y, pts, strict=True):
            ax.annotate(str(p["generation"]), (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    if ttt["reached"] and ttt["hours"] is not None:
        ax.axvline(
            ttt["hours"],
            color="C3",
            linewidth=1,
            label=f"time to target {ttt['hours']:.2f} h (gen {ttt['generation']})",
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("wall time since the run started (hours, model creation)")
    ax.set_ylabel(f"win rate against {ttt['target']}")
    ax.set_title(title or f"Win rate against the target ({ttt['target']})")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return png_bytes(fig)


def plot_learning_curve(
    points: Sequence[dict], rungs: Sequence[tuple[str, float]] | None, board_size: int
) -> bytes:
    """The run's learning curve (`learning_curve.png`), PNG, two panels: each evaluated generation's
    fixed-scale Elo with its 95% interval against wall time (minutes since generation 0's model) and against
    the self-play positions recorded before it (a first rating's number ends in `~`); the ladder's rungs
    within the plotted range (and the nearest above and below) as labelled lines. Without a ladder or
    ratings, the panels say so."""
    fig, axes = plt.subplots(2, 1, figsize=(7, 7))
    axis_keys = (
        ("minutes", "wall time since generation 0's model (minutes)"),
        ("positions", "self-play positions recorded before the model (generations 0 .. g-1)"),
    )
    lows = [p["ci95"][0] for p in points]
    highs = [p["ci95"][1] for p in points]
    shown = rungs_around(list(rungs), min(lows), max(highs)) if rungs and points else []
    for ax, (key, label) in zip(axes, axis_keys, strict=True):
        pts = [p for p in points if p[key] is not None]
        if rungs is None:
            _empty(
                ax, f"no ladder for board size {board_size} (config/ladder/{board_size}x{board_size}.json)"
            )
        elif not pts:
            _empty(ax, "no fixed-scale ratings yet (eval/gen*/ladder.json)")
        else:
            err = [
                [max(0.0, p["elo"] - p["ci95"][0]) for p in pts],
                [max(0.0, p["ci95"][1] - p["elo"]) for p in pts],
            ]
            ax.errorbar([p[key] for p in pts], [p["elo"] for p in pts], yerr=err, fmt="o-", ms=3, capsize=2,
                        lw=1, label="model (95% interval)")  # fmt: skip
            for xi, p in zip([p[key] for p in pts], pts, strict=True):
                tag = str(p["generation"]) + ("~" if p.get("first") else "")
                ax.annotate(tag, (xi, p["elo"]), textcoords="offset points", xytext=(3, 3), fontsize=7)
            for _, elo in shown:
                ax.axhline(elo, ls="--", lw=0.8, color="grey")
            span = max([e for _, e in shown] + highs) - min([e for _, e in shown] + lows)
            for name, elo in rung_labels(shown, 0.04 * max(span, 1.0)):
                ax.annotate(name, xy=(0.01, elo), xycoords=("axes fraction", "data"), color="grey",
                            fontsize=7, va="bottom")  # fmt: skip
            ax.legend(loc="lower right", fontsize=8)
        ax.set_xlabel(label)
        ax.set_ylabel("Elo (fixed ladder, gnugo:10 = 1800)")
        ax.grid(alpha=0.3)
    axes[0].set_title(f"Learning curve on the fixed Elo ladder ({board_size}x{board_size})")
    return png_bytes(fig)


def png_bytes(fig) -> bytes:
    """A matplotlib figure as PNG bytes (closed afterwards): every plot of a run is written this way."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


# -------------------------------------------------------------------- training and self-play (`minigo plots`)


def _empty(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="grey")


def read_steps(path: str) -> list[dict]:
    """The `step` records of a training metrics.jsonl file."""
    records = storage.read_json_lines(path)
    return [r for r in records if r.get("event", "step") == "step" and "loss" in r]


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
        "reply_loss": [],
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
        ("reply_loss", "opponent's reply (cross-entropy)"),
    ):
        points = [(s, v) for s, v in zip(steps, series[key], strict=True) if isinstance(v, (int, float))]
        if points and (key != "reply_loss" or any(v for _, v in points)):  # 0 throughout: no reply head
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

"""Training benchmarks: `python -m minigo_core.bench train [--backend dsp|torch] [--steps 40]`.

(b) Table 3 in kind: data wait per training step with prefetch off (each batch read, decompressed, unpacked
    and augmented on demand) and on (a background thread keeps `train.prefetch_batches` ready batches), as ms
    per step and as a share of the step time; steady state (the first batch's start-up wait is shown apart).
(c) training throughput in examples/s for 1 and 2 ranks (weak scaling: the per-rank batch is fixed) and the
    scaling efficiency, eps(2) / (2 * eps(1)). Both runs go through `minigo train`; on a machine with 2 cores
    and other load the 2-rank figure is a lower bound.

The data is a synthetic window built by `minigo window` from synthetic game files (see bench.window).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile

from minigo_core.base import config as config_mod
from minigo_core.bench.window import SyntheticGames, make_window_games
from minigo_core.data import layout, window
from minigo_core.jobs import train
from minigo_core.nn import model

SETUPS = {
    # name: board, features, blocks, filters, batch per rank, steps scale
    "9x9": (9, "agz", 4, 32, 32, 1.0),
    "19x19": (19, "mlperf07", 6, 64, 96, 0.25),
}


def _config(root: str, setup: str, backend: str, ranks: int, prefetch: int) -> dict:
    board, feats, blocks, filters, batch, _ = SETUPS[setup]
    return {
        "root": root,
        "board_size": board,
        "features": feats,
        "model": {"blocks": blocks, "filters": filters, "fc_width": 64, "backend": backend},
        "window": {"sample_fraction": 1.0},
        "train": {
            "ranks": ranks,
            "batch_per_rank": batch,
            "backend": backend,
            "prefetch_batches": prefetch,
            "checkpoint_every": 10**6,
            "threads_per_rank": 1,
            "learning_rate": [[0, 0.01]],
        },
    }


def _prepare(scratch: str, setup: str, backend: str, steps: int) -> dict:
    board, feats, _, _, batch, _ = SETUPS[setup]
    root = os.path.join(scratch, setup)
    games = max(8, int(2 * steps * batch / (0.75 * 0.7 * board * board)) + 4)
    shape = SyntheticGames(board, features=feats, max_moves=int(0.7 * board * board), pool=0, seed=1)
    make_window_games(root, [0], games, shape)
    out = {"root": root}
    for ranks in (1, 2):
        cfg = config_mod.from_dict(_config(root, setup, backend, ranks, 8))
        out[f"window{ranks}"] = window.build_window(cfg, 1, os.path.join(root, f"window{ranks}"))
        out[f"window{ranks}_dir"] = os.path.join(root, f"window{ranks}")
    cfg = config_mod.from_dict(_config(root, setup, backend, 1, 8))
    parent = layout.model_path(root, 0)
    model.save_model(parent, model.random_model(model.ModelConfig.from_run(cfg), seed=1), {"generation": 0})
    out["parent"] = parent
    return out


def _end_record(work: str) -> dict:
    with open(os.path.join(work, layout.METRICS)) as fh:
        return [json.loads(line) for line in fh if '"event": "end"' in line][-1]


def _run(
    scratch: str, data: dict, setup: str, backend: str, ranks: int, prefetch_threads: int, tag: str
) -> dict:
    cfg_path = os.path.join(scratch, f"{setup}-{tag}.yaml")
    with open(cfg_path, "w") as fh:
        json.dump(_config(data["root"], setup, backend, ranks, 8), fh)
    work = os.path.join(scratch, f"work-{setup}-{tag}")
    shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(scratch, f"{setup}-{tag}.safetensors")
    argv = [
        "--config", cfg_path, "--generation", "1", "--window-dir", data[f"window{ranks}_dir"],
        "--parent", data["parent"], "--out", out, "--ranks", str(ranks),
        "--work-dir", work, "--prefetch-threads", str(prefetch_threads),
    ]  # fmt: skip
    with contextlib.redirect_stderr(io.StringIO()):
        code = train.cli_main(argv)
    if code != 0:
        raise RuntimeError(f"minigo train {' '.join(argv)} failed with code {code}")
    return _end_record(work)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m minigo_core.bench train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--backend", default="dsp", choices=["torch", "dsp"], help="training backend [dsp]")
    p.add_argument("--steps", type=int, default=40, help="training steps per run (19x19 runs a quarter) [40]")
    p.add_argument(
        "--setups", default="9x9,19x19", help="which of 9x9 (4x32, batch 32), 19x19 (6x64, batch 96)"
    )
    p.add_argument("--tmp", default=None, help="scratch directory (default: a fresh temporary directory)")
    args = p.parse_args(argv)
    scratch = args.tmp or tempfile.mkdtemp(prefix="minigo-bench-train-")
    try:
        for setup in args.setups.split(","):
            board, feats, blocks, filters, batch, scale = SETUPS[setup]
            steps = max(4, int(args.steps * scale))
            data = _prepare(scratch, setup, args.backend, steps)
            rows = min(s["rows"] for s in data["window2"]["shards"])
            print(f"{setup}: {blocks} blocks x {filters} filters, {feats}, batch {batch}/rank, "
                  f"backend {args.backend}, {rows // batch} steps per run, "
                  f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
            off = _run(scratch, data, setup, args.backend, 1, 0, "off")
            on = _run(scratch, data, setup, args.backend, 1, 1, "on")
            for name, rec in (("off", off), ("on", on)):
                steps_run = rec["steps_run"]
                first = rec["first_batch_wait_s_per_rank"][0]
                wait_ms = 1000 * (rec["data_wait_s_per_rank"][0] - first) / max(1, steps_run - 1)
                step_ms = 1000 * batch / rec["examples_per_s"]
                share = 100 * wait_ms / step_ms
                print(f"  (b) prefetch {name:3s}: data wait {wait_ms:7.2f} ms/step = {share:5.1f}% "
                      f"of a {step_ms:7.1f} ms step (first batch {1000 * first:.1f} ms)")  # fmt: skip
            two = _run(scratch, data, setup, args.backend, 2, 1, "two")
            eps1, eps2 = on["examples_per_s"], two["examples_per_s"]
            print(
                f"  (c) 1 rank {eps1:8.0f} ex/s, 2 ranks {eps2:8.0f} ex/s: scaling efficiency "
                f"{100 * eps2 / (2 * eps1):.0f}% (2-rank data wait {100 * two['data_wait_fraction']:.1f}%)"
            )
            sys.stdout.flush()
    finally:
        if args.tmp is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One training step on a device: `python -m minigo_core.bench train_step [--device cuda] [--json FILE]`.

The step `minigo train` runs for one rank (`training.sgd_step`: forward with the auxiliary heads, the four
losses, backward, SGD with momentum and L2 through `FlatSGD`) on the torch backend, on random planes and
targets, for the default 9x9 net and the paper's 19x19 net (6x64, mlperf07) at their per-rank batches and at
a larger batch a GPU can fill. Each setup runs a few warm-up steps, then timed steps (wall clock; on CUDA with
a synchronize after each step); the median ms per step and examples per second are printed, with the same
step on the CPU (torch backend, `--cpu-threads` threads) as the baseline measured in the same run.

No data pipeline, no process group: this is the device's share of a step (data wait and the all-reduce are
`python -m minigo_core.bench train`'s). TF32 follows torch's settings, printed with the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

from minigo_core.nn.flatsgd import FlatSGD
from minigo_core.nn.model import ModelConfig, random_model
from minigo_core.nn.steptime import random_micro_batch
from minigo_core.nn.training import param_groups, sgd_step, torch_state_kept

SETUPS = {
    # name: board, features, blocks, filters, batch
    "9x9": (9, "agz", 4, 32, 128),
    "9x9-b512": (9, "agz", 4, 32, 512),
    "19x19": (19, "mlperf07", 6, 64, 96),
    "19x19-b512": (19, "mlperf07", 6, 64, 512),
}
WEIGHTS = (1.0, 1.5, 1.0)  # value, ownership, score: config.yaml's


def step_ms(setup: str, device: torch.device, warmup: int, steps: int) -> float:
    """Median wall-clock ms of one `sgd_step` of `setup` on `device` (after `warmup` steps)."""
    board, feats, blocks, filters, batch = SETUPS[setup]
    cfg = ModelConfig(board_size=board, blocks=blocks, filters=filters, fc_width=64, feature_set=feats,
                      aux_heads=True)  # fmt: skip
    net = random_model(cfg, seed=0).to(device).train()
    opt = FlatSGD(param_groups(net, 1e-4), lr=0.01, momentum=0.9)
    micro = [random_micro_batch(cfg, batch, seed=1)]  # moved to the device inside each step, as in training
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = []
    for i in range(warmup + steps):
        sync()
        start = time.perf_counter()
        sgd_step(net, opt, micro, 0.01, WEIGHTS, 1, device)  # returns floats: waits for the device
        sync()
        if i >= warmup:
            times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def device_description(device: torch.device) -> str:
    if device.type != "cuda":
        return f"CPU, {torch.get_num_threads()} torch threads"
    props = torch.cuda.get_device_properties(device)
    return (
        f"{props.name} (compute {props.major}.{props.minor}, {props.total_memory / 2**30:.0f} GiB), "
        f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
        f"TF32 matmul {torch.backends.cuda.matmul.allow_tf32} conv {torch.backends.cudnn.allow_tf32}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m minigo_core.bench train_step", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                   help="cuda, cuda:N or cpu [cuda if torch sees a GPU]")  # fmt: skip
    p.add_argument("--setups", default=",".join(SETUPS), help=f"of {', '.join(SETUPS)} [all]")
    p.add_argument("--steps", type=int, default=20, help="timed steps per setup on the device [20]")
    p.add_argument("--cpu-steps", type=int, default=3, help="timed steps of the CPU baseline; 0: none [3]")
    p.add_argument("--cpu-threads", type=int, default=len(os.sched_getaffinity(0)),
                   help="torch threads of the CPU baseline [the cores this process may use]")  # fmt: skip
    p.add_argument("--json", default=None, help="also write the results to this file")
    args = p.parse_args(argv)
    device = torch.device(args.device)
    setups = [s for s in args.setups.split(",") if s]
    unknown = sorted(set(setups) - set(SETUPS))
    if unknown:
        p.error(f"unknown setups {', '.join(unknown)}; known: {', '.join(SETUPS)}")
    if device.type == "cuda" and not torch.cuda.is_available():
        p.error(f"--device {args.device}: torch {torch.__version__} sees no CUDA GPU; use --device cpu")
    rows = []
    with torch_state_kept():
        torch.set_num_threads(max(1, args.cpu_threads))
        print(f"device: {device_description(device)}")
        for setup in setups:
            board, feats, blocks, filters, batch = SETUPS[setup]
            ms = step_ms(setup, device, warmup=3, steps=args.steps)
            row = {"setup": setup, "board": board, "blocks": blocks, "filters": filters, "batch": batch,
                   "device": str(device), "ms_per_step": ms, "examples_per_s": 1000 * batch / ms}  # fmt: skip
            line = f"{setup:11s} {blocks}x{filters} batch {batch:4d}: {device.type} {ms:8.2f} ms/step"
            line += f" {row['examples_per_s']:9.0f} ex/s"
            if args.cpu_steps > 0 and device.type != "cpu":
                cpu_ms = step_ms(setup, torch.device("cpu"), warmup=1, steps=args.cpu_steps)
                row.update(cpu_ms_per_step=cpu_ms, cpu_threads=args.cpu_threads, speedup=cpu_ms / ms)
                line += f"; CPU ({args.cpu_threads} threads) {cpu_ms:8.1f} ms/step: {cpu_ms / ms:5.1f}x"
            print(line, flush=True)
            rows.append(row)
            if args.json:  # after each setup: a run stopped part way keeps what it measured
                with open(args.json, "w") as fh:
                    json.dump({"device": device_description(device), "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

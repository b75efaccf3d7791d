"""Network operators, torch vs the DSP emulation: `python -m minigo_core.bench ops [--preset paper|selfplay]`.

Prints, like the paper's Table 4, one row per operator (conv3_initial, conv3_residual, conv1_policy,
conv1_value, bn_relu), forward and backward: milliseconds with PyTorch's CPU operators (oneDNN,
channels_last) and with the DSP-emulation kernels, the speedup, each conv's effective GFLOP/s (the direct
conv's flops over the time) and as a percentage of the FP32 peak, and for dsp the percentage of the peak in
the multiplications it actually does (Winograd F(3x3,3x3) does 3.24x fewer on 9x9; `dsp conv` says which).
Then a whole training step (forward + loss + backward + SGD; dsp with Winograd and with direct convs) and
inference at batch 1, 8, 16, 32 and 64, self-play's batches (`predict`: the fused one-call path on dsp,
Winograd and direct conv).

Instruction sets: the dsp kernels come in several builds chosen at run time. `--isa best` (default) runs the
widest this CPU has, `--isa NAME` one of `dsp.supported_isas()`, `--isa all` the whole benchmark once per
vector build (avx512, avx2; not the portable builds, which on x86 call libm's fmaf per lane), one report each.
oneDNN chooses its own ISA: a tiny channels_last conv run in a subprocess with ONEDNN_VERBOSE=1 tells which
(ONEDNN_MAX_CPU_ISA, if set, is inherited and so honoured). The header names the CPU, the dsp kernels' ISA,
oneDNN's and ATen's CPU capability.

Honest peak: the peak is an FMA loop in the extension on the vectors of an ISA, one core, measured in the same
run, times the threads. The dsp %pk column is against the peak of the dsp kernels' ISA; torch's against the
peak of the wider of oneDNN's ISA and the dsp one, so oneDNN on AVX-512 is not flattered by an AVX2 peak when
the dsp kernels are forced to avx2 (both peaks are printed).

torch and dsp are timed interleaved (one torch run, one dsp run, repeated) and medians reported, so a busy
shared machine slows both alike. Both get the same number of threads (`--threads N`, or `all`: the cores
given to the job): torch.set_num_threads, and the DSP cores of the Runtime every dsp op and network is given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from minigo_core.base.machine import cpu_model
from minigo_core.base.runtime import Runtime, job_cores
from minigo_core.nn.dsp import ops as dsp
from minigo_core.nn.model import DualNet, ModelConfig, random_model

PRESETS = {
    # the paper's network and batch: 19x19, 6 blocks x 64 filters, mlperf07 features, batch 96
    "paper": dict(board_size=19, blocks=6, filters=64, fc_width=64, features="mlperf07", batch=96),
    # the self-play shape: 9x9, 6 blocks x 32 filters
    "selfplay": dict(board_size=9, blocks=6, filters=32, fc_width=64, features="agz", batch=96),
}


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = time.perf_counter

VECTOR_LANES = {"avx512": 16, "avx2": 8}  # FP32 lanes; other ISAs (the portable builds) rank below these
NOT_IN_ALL = ("portable", "portable16")  # left out of --isa all: portable16 is for tests; portable is slow

# A conv that oneDNN runs (batch 2, 16 channels, channels_last: ATen takes its own path for tinier ones).
_ONEDNN_PROBE = (
    "import torch, torch.nn.functional as F\n"
    "x = torch.randn(2, 16, 9, 9).contiguous(memory_format=torch.channels_last)\n"
    "w = torch.randn(16, 16, 3, 3).contiguous(memory_format=torch.channels_last)\n"
    "F.conv2d(x, w, padding=1)\n"
)


def onednn_isa() -> tuple[str, str]:
    """(name, oneDNN's words) of the ISA oneDNN's convolutions run: "avx512", "avx2", else oneDNN's words;
    ("unknown", "") if the probe fails. From the "isa:" line of a verbose conv in a subprocess, which
    inherits ONEDNN_MAX_CPU_ISA."""
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    try:
        out = subprocess.run(
            [sys.executable, "-c", _ONEDNN_PROBE], env=env, capture_output=True, text=True, timeout=120
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown", ""
    for line in out.splitlines():
        if "isa:" in line:
            raw = line.split("isa:", 1)[1].strip()
            upper = raw.upper()
            if "AVX-512" in upper or "AVX512" in upper or "/512" in upper:
                return "avx512", raw
            if "AVX2" in upper:
                return "avx2", raw
            return (raw or "unknown"), raw
    return "unknown", ""


def machine_info() -> dict:
    """The CPU, oneDNN's ISA and ATen's CPU capability (measured once, shared by every ISA's run)."""
    onednn, onednn_text = onednn_isa()
    try:
        aten = str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        aten = "unknown"
    return {"cpu": cpu_model(), "onednn_isa": onednn, "onednn_isa_text": onednn_text, "aten_capability": aten}


def resolve_isas(name: str) -> list[str]:
    """The dsp ISAs that `--isa name` runs, in order; ValueError naming what this CPU runs otherwise."""
    supported = dsp.supported_isas()
    if name == "best":
        return supported[:1]
    if name == "all":
        return [isa for isa in supported if isa not in NOT_IN_ALL] or supported[:1]
    if name not in supported:
        raise ValueError(
            f"--isa {name}: this CPU ({cpu_model()}) cannot run dsp kernels {name!r}; "
            f"it runs: {', '.join(supported)} (or best: {supported[0]}; all: every vector build)"
        )
    return [name]


def measure_peaks(isa: str, onednn: str, seconds: float = 0.5) -> tuple[float, float, str]:
    """(dsp peak, torch peak, ISA of the torch peak), FP32 GFLOP/s of one core's FMA loop. The dsp peak is on
    the dsp ISA; torch's on oneDNN's ISA where it is wider and the extension has it, else the dsp peak."""
    peak = dsp.measure_peak_gflops(seconds, Runtime(isa=isa))
    if VECTOR_LANES.get(onednn, 0) > VECTOR_LANES.get(isa, 0) and onednn in dsp.supported_isas():
        return peak, dsp.measure_peak_gflops(seconds, Runtime(isa=onednn)), onednn
    return peak, peak, isa


def interleaved(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 1) -> dict[str, float]:
    """Median seconds of each function, timed round-robin so machine noise hits all of them alike."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = _clock()
            fn()
            times[name].append(_clock() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _nchw(x: torch.Tensor) -> torch.Tensor:
    return x.permute(0, 3, 1, 2)  # NHWC storage viewed as channels_last NCHW


def bench_conv(
    name: str, shape: tuple[int, int, int, int, int], input_grad: bool, repeats: int, rt: Runtime
) -> list[dict]:
    """One conv `name` of `shape` (batch, board, input and output channels, kernel size), torch vs dsp."""
    b, n, c, k, r = shape
    run = dsp.kernel_run(rt)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(b, n, n, c, generator=g)
    w = torch.randn(k, c, r, r, generator=g) * 0.1
    w_cl = w.contiguous(memory_format=torch.channels_last)
    dy = torch.randn(b, n, n, k, generator=g)
    flops = 2.0 * b * n * n * c * k * r * r

    def torch_fwd():
        return F.conv2d(_nchw(x), w_cl, padding=r // 2)

    def dsp_fwd():
        return dsp._C.conv_forward(run, x, w)

    xg = x.clone().requires_grad_(input_grad)
    wg = w_cl.clone().requires_grad_(True)
    yt = F.conv2d(_nchw(xg), wg, padding=r // 2)
    inputs_t = (xg, wg) if input_grad else (wg,)

    def torch_bwd():
        return torch.autograd.grad(yt, inputs_t, _nchw(dy), retain_graph=True)

    def dsp_bwd():
        return dsp._C.conv_backward(run, dy, x, w, input_grad, True)

    fwd = interleaved({"torch": torch_fwd, "dsp": dsp_fwd}, repeats)
    bwd = interleaved({"torch": torch_bwd, "dsp": dsp_bwd}, repeats)
    bwd_flops = flops * (2 if input_grad else 1)
    rows = [
        _row(name, "forward", fwd, flops, (b, n, c, k, r)),
        _row(name, "backward", bwd, bwd_flops, (b, n, c, k, r)),
    ]
    tile = dsp.winograd_training_tile(n, n, c, k, rt.winograd_training) if r == 3 else 0
    for row in rows:  # the multiplications the dsp kernels actually do (Winograd: fewer than direct)
        row["dsp_conv"] = f"F({tile}x{tile},3x3)" if tile else "direct"
        row["dsp_mult_flops"] = row["flops"] * winograd_mult_ratio(n, tile)
    return rows


def winograd_mult_ratio(n: int, tile: int) -> float:
    """Multiplications of Winograd F(tile x tile, 3x3) on an n x n board over the direct conv's (1 if 0)."""
    if not tile:
        return 1.0
    tiles = -(-n // tile)
    return tiles * tiles * (tile + 2) ** 2 / (9 * n * n)


def _row(op: str, direction: str, t: dict[str, float], flops: float | None, shape: tuple) -> dict:
    row = {
        "op": op,
        "direction": direction,
        "shape": shape,
        "torch_ms": t["torch"] * 1e3,
        "dsp_ms": t["dsp"] * 1e3,
        "speedup": t["torch"] / t["dsp"],
    }
    if flops:
        row["flops"] = flops
        row["torch_gflops"] = flops / t["torch"] / 1e9
        row["dsp_gflops"] = flops / t["dsp"] / 1e9
    return row


def bench_bn_relu(b: int, n: int, c: int, repeats: int, rt: Runtime) -> tuple[list[dict], dict]:
    """Fused dsp bn_relu vs torch batch_norm + relu (training mode), forward and backward."""
    run = dsp.kernel_run(rt)

    g = torch.Generator().manual_seed(1)
    bn = torch.nn.BatchNorm2d(c, momentum=0.05)
    x = torch.randn(b, n, n, c, generator=g).requires_grad_(True)
    dy = torch.randn(b, n, n, c, generator=g)
    y_torch = dsp.torch_bn_relu(x, bn, True)
    state = dsp.BnState(bn.running_mean, bn.running_var, True, 0.05, 1e-5)
    y_dsp = dsp.BnReluFunction.apply(x, bn.weight, bn.bias, None, state, run)
    params = (x, bn.weight, bn.bias)

    def torch_fwd():
        return dsp.torch_bn_relu(x.detach(), bn, True)

    def dsp_fwd():
        return dsp._C.bn_relu_forward(
            run,
            x.detach(),
            bn.weight.detach(),
            bn.bias.detach(),
            bn.running_mean,
            bn.running_var,
            None,
            True,
            0.05,
            1e-5,
        )

    def torch_bwd():
        return torch.autograd.grad(y_torch, params, dy, retain_graph=True)

    def dsp_bwd():
        return torch.autograd.grad(y_dsp, params, dy, retain_graph=True)

    fwd = interleaved({"torch": torch_fwd, "dsp": dsp_fwd}, repeats)
    bwd = interleaved({"torch": torch_bwd, "dsp": dsp_bwd}, repeats)
    rows = [
        _row("bn_relu", "forward", fwd, None, (b, n, c)),
        _row("bn_relu", "backward", bwd, None, (b, n, c)),
    ]
    total_dsp, total_torch = fwd["dsp"] + bwd["dsp"], fwd["torch"] + bwd["torch"]
    choice = {
        "faster": "dsp" if total_dsp <= total_torch else "torch",
        "dsp_ms": total_dsp * 1e3,
        "torch_ms": total_torch * 1e3,
        "backend_uses": "dsp",
    }
    return rows, choice


def _nets(args: argparse.Namespace, rt: Runtime):

    cfg = ModelConfig(args.board_size, args.blocks, args.filters, args.fc_width, args.features)
    net_t = random_model(cfg, 0, backend="torch")
    net_d = DualNet(cfg, backend="dsp", runtime=rt)
    net_d.load_state_dict(net_t.state_dict())
    return cfg, net_t, net_d


def bench_training_step(args: argparse.Namespace, repeats: int, rt: Runtime) -> dict:
    cfg, net_t, net_d = _nets(args, rt)
    g = torch.Generator().manual_seed(2)
    b, n = args.batch, cfg.board_size
    x = torch.randint(0, 2, (b, cfg.planes, n, n), generator=g).float()
    pi = torch.softmax(torch.randn(b, n * n + 1, generator=g), 1)
    z = torch.sign(torch.randn(b, generator=g))
    steps = {}
    for name, net in (("torch", net_t), ("dsp", net_d)):
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9, weight_decay=1e-4)

        def step(net=net, opt=opt):
            logits, value = net(x)
            loss = -(pi * F.log_softmax(logits, 1)).sum(1).mean() + F.mse_loss(value, z)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        steps[name] = step
    t = interleaved(steps, repeats)
    return _row("training_step", f"batch {b}", t, None, (b, n, cfg.blocks, cfg.filters))


WINOGRAD_LABELS = {1: "", 3: ", Winograd F(3x3)", 2: ", Winograd F(2x2)", 0: ", direct conv"}


def bench_inference(
    args: argparse.Namespace, batch: int, repeats: int, rt: Runtime, winograd: int = 1
) -> dict:
    """torch predict vs the fused dsp predict; 3x3 convs: `winograd` 1 = the engine's choice for the board
    (F(3x3,3x3) on 5x5 to 19x19), 2 / 3 = F(2x2,3x3) / F(3x3,3x3), 0 = direct."""

    cfg, net_t, net_d = _nets(args, rt.replace(winograd=winograd))
    net_t.eval()
    net_d.eval()
    rng = np.random.default_rng(3)
    planes = rng.integers(0, 2, (batch, cfg.planes, cfg.board_size, cfg.board_size), dtype=np.uint8)
    t = interleaved(
        {"torch": lambda: net_t.predict(planes), "dsp": lambda: net_d.predict(planes)}, repeats, 3
    )
    label = f"batch {batch}{WINOGRAD_LABELS[winograd]}"
    return _row("inference", label, t, None, (batch, cfg.board_size, cfg.blocks, cfg.filters))


def run(args: argparse.Namespace, machine: dict | None = None) -> dict:
    """The whole benchmark on one dsp ISA (`args.isa`: a name, or best); `machine`: from machine_info()."""
    global _clock

    machine = machine or machine_info()
    threads = job_cores(os.environ) if args.threads == "all" else int(args.threads)
    if args.clock == "auto":
        args.clock = "cpu" if threads == 1 else "wall"
    _clock = CLOCKS[args.clock]
    torch.set_num_threads(threads)
    isa = resolve_isas(args.isa)[0]
    rt = Runtime(threads=threads, isa=isa)
    peak_core, torch_peak_core, torch_peak_isa = measure_peaks(isa, machine["onednn_isa"])
    b, n, f = args.batch, args.board_size, args.filters

    planes = ModelConfig(n, args.blocks, f, args.fc_width, args.features).planes
    r = args.repeats
    rows = []
    rows += bench_conv("conv3_initial", (b, n, planes, f, 3), False, r, rt)
    rows += bench_conv("conv3_residual", (b, n, f, f, 3), True, r, rt)
    rows += bench_conv("conv1_policy", (b, n, f, 2, 1), True, r, rt)
    rows += bench_conv("conv1_value", (b, n, f, 1, 1), True, r, rt)
    bn_rows, bn_choice = bench_bn_relu(b, n, f, r, rt)
    rows += bn_rows
    for row in rows:
        if "flops" in row:
            row["torch_pct_peak"] = 100 * row["torch_gflops"] / (torch_peak_core * threads)
            row["dsp_pct_peak"] = 100 * row["dsp_gflops"] / (peak_core * threads)
        if "dsp_mult_flops" in row:
            row["dsp_mult_pct_peak"] = (
                100 * row["dsp_mult_flops"] / (row["dsp_ms"] / 1e3) / 1e9 / (peak_core * threads)
            )
    whole = [bench_training_step(args, max(3, r // 2), rt)]
    whole.append(bench_training_step(args, max(3, r // 2), rt.replace(winograd_training=0)))
    whole[-1]["direction"] += ", direct conv"
    for batch in args.infer_batches:
        whole.append(bench_inference(args, batch, max(10, 4 * r), rt))
        for mode in args.other_convs:
            whole.append(bench_inference(args, batch, max(10, 4 * r), rt, winograd=mode))
    return {
        "shape": {
            k: getattr(args, k) for k in ("board_size", "blocks", "filters", "fc_width", "features", "batch")
        },
        "threads": threads,
        "torch_threads": torch.get_num_threads(),
        "dsp_threads": rt.threads,
        "clock": args.clock,
        **machine,
        "isa": dsp.isa_of(rt),
        "peak_gflops_per_core": peak_core,
        "peak_gflops": peak_core * threads,
        "torch_peak_isa": torch_peak_isa,
        "torch_peak_gflops_per_core": torch_peak_core,
        "torch_peak_gflops": torch_peak_core * threads,
        "operators": rows,
        "bn_relu_choice": bn_choice,
        "whole_network": whole,
    }


def print_header(res: dict) -> None:
    """Network, machine, ISAs, threads, peaks and clock."""
    s = res["shape"]
    print(
        f"network {s['board_size']}x{s['board_size']}, {s['blocks']} blocks x {s['filters']} filters, "
        f"{s['features']}, batch {s['batch']}"
    )
    onednn = res["onednn_isa"]
    if res["onednn_isa_text"] and res["onednn_isa_text"] != onednn:
        onednn += f" ({res['onednn_isa_text']})"
    print(
        f"cpu: {res['cpu']}; dsp kernels: {res['isa']}; oneDNN: {onednn}; "
        f"ATen capability: {res['aten_capability']}"
    )
    print(f"threads: {res['torch_threads']} torch, {res['dsp_threads']} dsp cores")
    t = res["threads"]
    print(f"FP32 peak (FMA loop on one core, thread CPU time; x {t} thread{'s' if t > 1 else ''}):")

    def peak(isa: str, prefix: str, columns: str) -> None:
        per_core, total = res[prefix + "peak_gflops_per_core"], res[prefix + "peak_gflops"]
        print(f"  {isa} {per_core:.1f} GFLOP/s per core, {total:.1f} in all: {columns}")

    if res["torch_peak_isa"] != res["isa"]:
        peak(res["isa"], "", "dsp %pk")
        peak(res["torch_peak_isa"], "torch_", "torch %pk (oneDNN's ISA)")
    else:
        peak(res["isa"], "", "torch and dsp %pk")
        if VECTOR_LANES.get(res["onednn_isa"], 0) > VECTOR_LANES.get(res["isa"], 0):
            print(f"  (oneDNN's {res['onednn_isa']} peak not measured: the dsp extension lacks that build)")
    clock = (
        "process CPU time: time-sharing with other jobs not counted" if res["clock"] == "cpu" else "wall time"
    )
    print(f"times: medians of interleaved runs, {clock}\n")


def print_report(res: dict) -> None:
    print_header(res)
    head = f"{'operator':<16}{'pass':<10}{'torch ms':>10}{'dsp ms':>10}{'speedup':>9}"
    head += f"{'torch GF/s':>11}{'dsp GF/s':>10}{'torch %pk':>10}{'dsp %pk':>9}{'dsp mult %pk':>14}  dsp conv"
    print(head)
    print("-" * len(head))
    for row in res["operators"]:
        tp = f"{row['torch_pct_peak']:.0f}%" if "torch_pct_peak" in row else "-"
        dp = f"{row['dsp_pct_peak']:.0f}%" if "dsp_pct_peak" in row else "-"
        mp = f"{row['dsp_mult_pct_peak']:.0f}%" if "dsp_mult_pct_peak" in row else "-"
        tg = f"{row['torch_gflops']:.1f}" if "torch_gflops" in row else "-"
        dg = f"{row['dsp_gflops']:.1f}" if "dsp_gflops" in row else "-"
        print(
            f"{row['op']:<16}{row['direction']:<10}{row['torch_ms']:>10.2f}{row['dsp_ms']:>10.2f}"
            f"{row['speedup']:>8.2f}x{tg:>11}{dg:>10}{tp:>10}{dp:>9}{mp:>14}  {row.get('dsp_conv', '')}"
        )
    print(
        "GF/s: direct-equivalent (2*B*H*W*C*K*R*R per pass), so Winograd's exceed the peak; %pk of the FP32 "
        "peak; mult %pk: the multiply-adds the dsp kernels actually do"
    )
    c = res["bn_relu_choice"]
    print(
        f"\nbn_relu fwd+bwd: dsp fused {c['dsp_ms']:.2f} ms, torch batch_norm+relu {c['torch_ms']:.2f} ms -> "
        f"{c['faster']} is faster here; the dsp backend uses: {c['backend_uses']}\n"
    )
    print(f"{'whole network':<42}{'torch ms':>10}{'dsp ms':>10}{'speedup':>9}")
    print("-" * 71)
    for row in res["whole_network"]:
        print(
            f"{row['op']:<16}{row['direction']:<26}{row['torch_ms']:>10.2f}{row['dsp_ms']:>10.2f}"
            f"{row['speedup']:>8.2f}x"
        )


def _threads(text: str) -> int | str:
    """--threads: a positive integer, or "all" (the job's cores, `runtime.job_cores`, resolved by run)."""
    if text == "all":
        return text
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of threads or 'all', not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"at least 1 thread, not {n}")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minigo_core.bench ops",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="paper",
        help="network shape: paper (19x19, 6x64, mlperf07, batch 96; default) or selfplay (9x9, 6x32)",
    )
    parser.add_argument("--board-size", type=int)
    parser.add_argument("--blocks", type=int)
    parser.add_argument("--filters", type=int)
    parser.add_argument("--fc-width", type=int)
    parser.add_argument("--features", choices=["agz", "mlperf07"])
    parser.add_argument("--batch", type=int, help="batch for the operators and the training step")
    parser.add_argument(
        "--infer-batches",
        type=int,
        nargs="+",
        default=[1, 8, 16, 32, 64],
        help="inference batches (1 8 16 32 64: self-play's are 16-64)",
    )
    parser.add_argument(
        "--other-convs",
        type=int,
        nargs="*",
        default=[2, 0],
        help="inference rows with other 3x3 convs besides the engine's choice: 2 Winograd F(2x2,3x3), "
        "3 F(3x3,3x3), 0 direct (default: 2 0)",
    )
    parser.add_argument(
        "--threads",
        type=_threads,
        default=1,
        help="threads for torch and DSP cores for dsp, the same number: N or all (the job's cores); 1",
    )
    supported = dsp.supported_isas()
    parser.add_argument(
        "--isa",
        default="best",
        help=f"dsp kernels: best (the widest, {supported[0]}; default), all (each vector build, one report "
        f"each), or one this CPU runs: {', '.join(supported)}",
    )
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per operator (median; default 7)")
    parser.add_argument(
        "--clock",
        choices=["auto", "cpu", "wall"],
        default="auto",
        help="cpu: process CPU time (robust on a shared machine); auto: cpu for 1 thread, else wall",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object (a list for --isa all)")
    args = parser.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    try:
        isas = resolve_isas(args.isa)
    except ValueError as e:
        parser.error(str(e))
    machine = machine_info()
    results = []
    for i, isa in enumerate(isas):
        results.append(run(argparse.Namespace(**{**vars(args), "isa": isa}), machine))
        if not args.json:
            if i:
                print("\n" + "=" * 71 + "\n")
            print_report(results[-1])
    if args.json:
        json.dump(results if args.isa == "all" else results[0], sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

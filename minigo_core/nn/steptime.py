"""The CPU time of one training step of a run's net, measured here (`minigo cost` scales it to a generation).

One rank's step as `training.sgd_step` runs it (forward with the auxiliary heads, the four losses, backward,
SGD with momentum and L2), on random planes and targets of the run's board, features and net, at the rank's
batch, with the run's training backend, `threads` torch threads and DSP cores. The first step is a warm-up;
the rest are timed in process CPU seconds and the median is returned.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch

from minigo_core.base.config import RunConfig
from minigo_core.base.runtime import Runtime
from minigo_core.nn.flatsgd import FlatSGD
from minigo_core.nn.model import ModelConfig, random_model
from minigo_core.nn.training import MicroBatch, param_groups, sgd_step, torch_state_kept


def random_micro_batch(cfg: ModelConfig, batch: int, seed: int) -> MicroBatch:
    """`batch` random examples for `cfg`'s net: 0/1 planes, a normalized policy target, +-1 results and
    ownership, normal scores (drawn in that order from `seed`)."""
    rng = np.random.default_rng(seed)
    n = cfg.board_size
    planes = rng.integers(0, 2, size=(batch, cfg.planes, n, n), dtype=np.uint8)
    pi = rng.random((batch, n * n + 1), dtype=np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    z = np.sign(rng.standard_normal(batch)).astype(np.float32)
    own = np.sign(rng.standard_normal((batch, n * n))).astype(np.float32)
    score = rng.standard_normal(batch).astype(np.float32)
    return MicroBatch.from_arrays(planes, pi, z, own, score)


def step_seconds(run_cfg: RunConfig, batch: int, steps: int = 3, threads: int = 1) -> float:
    """Median CPU seconds of one training step at `batch` examples (after one warm-up step)."""
    if batch < 1 or steps < 1:
        raise ValueError(f"batch and steps must be positive, got {batch} and {steps}")
    cfg = ModelConfig.from_run(run_cfg)
    micro = [random_micro_batch(cfg, batch, seed=0)]
    tcfg = run_cfg.train
    weights = (tcfg.value_weight, tcfg.ownership_weight, tcfg.score_weight)
    times = []
    with torch_state_kept():
        torch.set_num_threads(threads)
        net = random_model(cfg, 0, backend=tcfg.backend, runtime=Runtime(threads=threads))
        net.train()
        opt = FlatSGD(param_groups(net, tcfg.l2), lr=1e-3, momentum=tcfg.momentum)
        for i in range(steps + 1):
            start = time.process_time()
            sgd_step(net, opt, micro, 1e-3, weights, 1, torch.device("cpu"))
            if i:
                times.append(time.process_time() - start)
    return statistics.median(times)

"""One rank of test_cuda.py's `nccl` test, run as a script (a real process per rank, as `minigo train` starts
them): `python tests/gpu/nccl_rank.py SPEC.json RANK`.

The rank sets up torch as `minigo train` does (`Trainer.from_parent`: the GPU of its local rank), meets the
other ranks over `nccl` (`Trainer.join_group`), runs the spec's SGD steps on its rows of the batch (one flat
all-reduce of the gradients a step when there are several ranks), checks one explicit all-reduce and the
gathers, and rank 0 writes its weights and losses to the spec's `out` (torch.save) for the test to compare
with one CPU process. The spec is JSON: parent, batch (.npz of planes, pi, z, own, score), rows_per_rank,
steps, lr, weights, port, world, out, and require_cuda (default true; false lets the script run on the CPU
over gloo, to try it without a GPU). Not collected by pytest (no test_ prefix).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch
import torch.distributed as dist

from minigo_core.base import config as config_mod
from minigo_core.nn import training


def main(spec_path: str, rank: int) -> int:
    with open(spec_path) as fh:
        spec = json.load(fh)
    world = int(spec["world"])
    tcfg = config_mod.TrainSettings(backend="torch", learning_rate=((0, spec["lr"]),), threads_per_rank=1)
    trainer = training.Trainer.from_parent(spec["parent"], tcfg, seed=1, local_rank=rank, world=world)
    if trainer.device.type != "cuda" and spec.get("require_cuda", True):  # False: a CPU rehearsal over gloo
        raise SystemExit(f"rank {rank}: Trainer.from_parent picked {trainer.device}, not a GPU")
    torch.backends.cuda.matmul.allow_tf32 = False  # the test's tolerance is float32's
    torch.backends.cudnn.allow_tf32 = False
    trainer.join_group("127.0.0.1", int(spec["port"]), rank, timeout_s=120)
    backend = dist.get_backend()
    data = np.load(spec["batch"])
    rows = slice(rank * spec["rows_per_rank"], (rank + 1) * spec["rows_per_rank"])
    micro = [training.MicroBatch.from_arrays(*(data[k][rows] for k in ("planes", "pi", "z", "own", "score")))]
    losses = [trainer.step(micro, spec["lr"], tuple(spec["weights"])) for _ in range(spec["steps"])]
    # one all-reduce made here: with one rank sgd_step makes none, and nccl should still carry one
    probe = torch.full((1,), float(rank + 1), device=trainer.device)
    dist.all_reduce(probe)
    gathered = trainer.gather([float(rank)])
    names = trainer.gather_strings(f"rank {rank} on {trainer.device}")
    if rank == 0:
        state = {k: v.detach().cpu().clone() for k, v in trainer.net.state_dict().items()}
        result = {"state": state, "losses": losses, "backend": backend, "all_reduce": float(probe.item()),
                  "gathered": gathered, "names": names, "device": str(trainer.device)}  # fmt: skip
        torch.save(result, spec["out"])
    trainer.leave_group()  # several ranks: a barrier, then the group is taken down
    if dist.is_initialized():  # one rank: leave_group has nothing to do
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))

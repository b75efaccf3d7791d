"""How the training ranks of the workflow's `train` rule start: the `srun` command in front of `minigo train`
under Slurm, or `--ranks N` for `minigo train` to start them itself."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from minigo_core.base.config import ConfigError


def train_launcher(resources: Mapping) -> str:
    """The command that starts the ranks, from the train rule's resources (`tasks`, `cpus_per_task`, `mpi`,
    `nodes`): under Slurm (mpi="srun") `srun -n N -c T --kill-on-bad-exit=1` (one rank dying stops the
    others), with `-N K --ntasks-per-node ceil(N/K)` when the resource `nodes` (`--set-resources
    train:nodes=K`, which the Slurm plugin also passes to sbatch as --nodes=K) spreads the ranks over K > 1
    nodes; else '' (`minigo train --ranks N` starts them). ConfigError for a `nodes` that cannot work."""
    ranks, nodes, mpi = int(resources["tasks"]), int(resources.get("nodes", 1) or 1), resources.get("mpi")
    if not mpi:
        # e.g. --set-resources train:nodes=2 on the command line, which drops the profile's mpi
        if nodes > 1:
            raise ConfigError(
                f"resource nodes={nodes} of rule train needs mpi='srun' (profiles/slurm); a command-line "
                "--set-resources replaces the profile's, so pass \"train:mpi='srun'\" with it"
            )
        return ""
    if not 1 <= nodes <= ranks:
        raise ConfigError(
            f"resource nodes={nodes} (the train rule) must be between 1 and the {ranks} ranks (train.ranks)"
        )
    spread = f" -N {nodes} --ntasks-per-node {-(-ranks // nodes)}" if nodes > 1 else ""
    return f"{shlex.quote(mpi)} -n {ranks}{spread} -c {int(resources['cpus_per_task'])} --kill-on-bad-exit=1"


def ranks_option(resources: Mapping) -> str:
    """`--ranks N` when `minigo train` starts its ranks itself (no launcher); under srun each task is a
    rank."""
    return "" if resources.get("mpi") else f"--ranks {int(resources['tasks'])}"

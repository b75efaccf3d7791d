"""The launcher of the workflow's train rule (`minigo_core.pipeline.srun`): the srun command under Slurm, with
the ranks spread over nodes, `--ranks N` without it, and the errors of a `nodes` resource that cannot work."""

from __future__ import annotations

import pytest

from minigo_core.base.config import ConfigError
from minigo_core.pipeline import srun


def test_srun_command_of_the_ranks():
    one_node = {"tasks": 4, "cpus_per_task": 2, "mpi": "srun"}
    assert srun.train_launcher(one_node) == "srun -n 4 -c 2 --kill-on-bad-exit=1"
    assert srun.train_launcher({**one_node, "nodes": 1}) == "srun -n 4 -c 2 --kill-on-bad-exit=1"
    three = {"tasks": 4, "cpus_per_task": 2, "mpi": "srun", "nodes": 3}
    assert srun.train_launcher(three) == "srun -n 4 -N 3 --ntasks-per-node 2 -c 2 --kill-on-bad-exit=1"
    assert srun.train_launcher({**one_node, "mpi": "my srun"}).startswith("'my srun' -n 4")  # quoted
    assert srun.ranks_option(one_node) == ""


def test_without_slurm_minigo_train_starts_the_ranks():
    local = {"tasks": 3, "cpus_per_task": 2, "mpi": ""}
    assert srun.train_launcher(local) == ""
    assert srun.ranks_option(local) == "--ranks 3"


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"tasks": 2, "cpus_per_task": 1, "mpi": "", "nodes": 2}, "nodes=2 of rule train needs mpi='srun'"),
        ({"tasks": 2, "cpus_per_task": 1, "mpi": "srun", "nodes": 3}, "between 1 and the 2 ranks"),
    ],
)
def test_nodes_that_cannot_work_are_refused(resources, message):
    with pytest.raises(ConfigError, match=message):
        srun.train_launcher(resources)

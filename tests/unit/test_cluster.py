"""Where the ranks run (no Slurm needed): host lists, srun's rank environment, the rendezvous address and
port, and the local launcher of N ranks."""

from __future__ import annotations

import socket
import sys

import pytest

from minigo_core.cluster import launch, slurm


# ---- srun's tasks: rank, host list, the TCP store's address and port ---------------------------------------
def test_slurm_rank_env():
    env = {
        "SLURM_JOB_ID": "812",
        "SLURM_STEP_ID": "3",
        "SLURM_PROCID": "1",
        "SLURM_NTASKS": "4",
        "SLURM_LOCALID": "1",
    }
    assert slurm.slurm_rank_env(env) == (1, 4, 1)
    assert slurm.slurm_rank_env({"SLURM_JOB_ID": "812", "SLURM_NTASKS": "4"}) is None  # not an srun task
    assert slurm.slurm_rank_env({**env, "SLURM_STEP_ID": "4294967291"}) is None  # the batch script's step
    for step in ("batch", "extern", "interactive", "4294967290", "4294967292", "4294967294", "4294967295"):
        assert slurm.slurm_rank_env({**env, "SLURM_STEP_ID": step}) is None, step
    assert slurm.slurm_rank_env({k: v for k, v in env.items() if k != "SLURM_LOCALID"}) == (1, 4, 0)


def test_expand_hostlist():
    assert slurm.expand_hostlist("node[1-3,5],gpu07") == ["node1", "node2", "node3", "node5", "gpu07"]
    assert slurm.expand_hostlist("localhost") == ["localhost"]
    assert slurm.expand_hostlist("n[08-10]") == ["n08", "n09", "n10"]  # zero padding kept
    assert slurm.expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]
    assert slurm.expand_hostlist("a-1,b[2],c[3-4]-ib") == ["a-1", "b2", "c3-ib", "c4-ib"]
    assert slurm.expand_hostlist("") == []
    assert slurm.expand_hostlist("gpu[1,3-4],cpu[009-011]") == [
        "gpu1",
        "gpu3",
        "gpu4",
        "cpu009",
        "cpu010",
        "cpu011",
    ]
    assert slurm.expand_hostlist(" a , b ") == ["a", "b"]
    for bad in ("node[1-3", "node1-3]", "node[a-b]"):
        with pytest.raises(ValueError):
            slurm.expand_hostlist(bad)


def test_master_port_is_per_attempt_and_outside_the_ephemeral_range():
    ports = {slurm.master_port(job, step) for job in range(1000, 1100) for step in range(3)}
    assert len(ports) == 300  # consecutive jobs and the steps of a job never share a port
    assert all(20000 <= p < 32000 for p in ports)  # below Linux's ephemeral ports (32768 ..)
    assert slurm.master_port(812, 0, restart_count=1) != slurm.master_port(812, 0)  # a requeued job
    assert slurm.master_port(10**12, 4294967290) in range(20000, 32000)


def _srun_env(**extra: str) -> dict:
    env = {"SLURM_JOB_ID": "812", "SLURM_STEP_ID": "3", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}
    return {**env, **extra}


def test_slurm_master_from_the_step_node_list():
    resolved = []

    def resolve(name: str) -> str:
        resolved.append(name)
        return "10.0.0.7"

    env = _srun_env(SLURM_STEP_NODELIST="gpu[07-08]", SLURM_JOB_NODELIST="gpu[01-08]")
    master = slurm.slurm_master(env, resolve=resolve)
    assert master == slurm.Master("10.0.0.7", slurm.master_port(812, 3))
    assert resolved == ["gpu07"]  # the step's first node, not the job's
    assert slurm.slurm_master({**env, "SLURM_PROCID": "0"}, resolve=resolve) == master  # every task agrees
    env.pop("SLURM_STEP_NODELIST")
    slurm.slurm_master(env, resolve=resolve)
    assert resolved[-1] == "gpu01"  # else the job's first node
    with pytest.raises(slurm.ClusterError, match="set MASTER_ADDR"):
        slurm.slurm_master(_srun_env(), resolve=resolve)


def test_slurm_master_honours_master_addr_and_port():
    def no_resolve(name: str) -> str:
        raise AssertionError("MASTER_ADDR is set: nothing to resolve")

    env = _srun_env(SLURM_STEP_NODELIST="node[1-2]", MASTER_ADDR="192.168.1.5", MASTER_PORT="29555")
    assert slurm.slurm_master(env, resolve=no_resolve) == slurm.Master("192.168.1.5", 29555)
    only_addr = {k: v for k, v in env.items() if k != "MASTER_PORT"}
    assert slurm.slurm_master(only_addr, resolve=no_resolve).port == slurm.master_port(812, 3)
    with pytest.raises(slurm.ClusterError, match="MASTER_PORT"):
        slurm.slurm_master({**env, "MASTER_PORT": "http"}, resolve=no_resolve)


def test_resolve_host_falls_back_to_slurm_node_addr():
    assert (
        slurm.resolve_host("localhost", scontrol=lambda n: pytest.fail("resolved: no scontrol"))
        == "127.0.0.1"
    )
    shown = "NodeName=node1 Arch=x86_64\n   NodeAddr=127.0.0.1 NodeHostName=localhost Port=53409\n"
    assert slurm.resolve_host("no-such-node.invalid", scontrol=lambda n: shown) == "127.0.0.1"
    with pytest.raises(slurm.ClusterError, match="set MASTER_ADDR"):
        slurm.resolve_host("no-such-node.invalid", scontrol=lambda n: "")


def test_node_name():
    assert slurm.node_name({"SLURMD_NODENAME": "node2"}) == "node2"
    assert slurm.node_name({}) == socket.gethostname()


# ---- the local launcher ------------------------------------------------------------------------------------
def _python(code: str):
    """A rank command: `python -c code` with the rank, world size and master port as its arguments."""

    def command(rank: int, master: slurm.Master) -> list[str]:
        return [sys.executable, "-c", code, str(rank), master.addr, str(master.port)]

    return command


def test_launch_local_runs_every_rank(tmp_path):
    code = "import sys, pathlib; pathlib.Path(sys.argv[4], sys.argv[1]).write_text(' '.join(sys.argv[2:4]))"

    def command(rank: int, master: slurm.Master) -> list[str]:
        return _python(code)(rank, master) + [str(tmp_path)]

    result = launch.launch_local(command, 2, poll_s=0.05)
    assert result == launch.Launch([0, 0], None)
    seen = [(tmp_path / str(r)).read_text().split() for r in range(2)]
    assert seen[0] == seen[1] and seen[0][0] == "127.0.0.1" and 0 < int(seen[0][1]) < 65536  # one master


def test_launch_local_names_the_failed_rank_and_stops_the_others(caplog):
    code = "import sys, time; sys.exit(5) if sys.argv[1] == '1' else time.sleep(60)"
    with caplog.at_level("ERROR", logger="minigo_core"):
        result = launch.launch_local(_python(code), 2, poll_s=0.05)
    assert result.failed == 1 and result.codes[1] == 5
    assert result.codes[0] != 0  # rank 0 was stopped, not left sleeping
    assert "rank 1 of 2 exited with code 5; the other ranks were stopped" in caplog.text


def test_launch_local_accepts_the_caller_s_ok_codes():
    code = "import sys; sys.exit(3 if sys.argv[1] == '0' else 0)"
    assert launch.launch_local(_python(code), 2, ok_codes=(0, 3), poll_s=0.05) == launch.Launch([3, 0])
    assert launch.launch_local(_python(code), 2, poll_s=0.05).failed == 0


def test_launch_local_names_the_rank_that_caused_a_lost_peer(caplog):
    """Rank 1 fails; rank 0 then exits with a secondary code (its peer is lost) before rank 1 is seen gone:
    the launch names rank 1 (within the grace), or rank 0 when no other failure comes."""
    code = "import sys, time; r = sys.argv[1]; sys.exit(4) if r == '0' else (time.sleep(0.5), sys.exit(1))"
    with caplog.at_level("ERROR", logger="minigo_core"):
        result = launch.launch_local(_python(code), 2, poll_s=0.05, secondary_codes=(4,))
    assert result.failed == 1 and result.codes == [4, 1]
    assert "rank 1 of 2 exited with code 1" in caplog.text
    code = "import sys, time; sys.exit(4) if sys.argv[1] == '0' else time.sleep(60)"
    result = launch.launch_local(_python(code), 2, poll_s=0.05, secondary_codes=(4,))
    assert result.failed == 0 and result.codes[0] == 4  # named after the grace; rank 1 stopped

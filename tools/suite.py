"""The whole test suite, its independent slow parts run side by side: `python -m tools.suite` (`make test`).

    python -m tools.suite [--serial] [PYTEST_ARGS...]

The Slurm tests (`tests/cluster`, ~a third of the suite's wall time on 2 cores) spend most of it waiting: on
Slurm's scheduling and status checks, on a job's start on a node, on the moment a test disturbs a run. So they
run as one pytest process beside another that runs everything else, each stream in its own order, and the
suite takes about as long as its longer stream instead of the sum. The two share no files (each test has its
own `tmp_path`; the Slurm cluster is the cluster stream's alone) and no process the other looks for (the
Slurm tests find their jobs' processes by Slurm's environment variables, the others only their own children).

The rest stream prints as it goes; the cluster stream's output is kept in a file and printed once it ends,
then one line per stream: its exit status and wall time. The exit status is the first failing stream's (0 when
both pass). `--serial` runs the same streams one after the other (to compare the wall times, or to debug).
Extra arguments go to both pytest processes (e.g. `-x`, `--durations=30`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# name -> the pytest arguments of one stream; together they run every test once
STREAMS = {
    "cluster": ["tests/cluster"],
    "rest": ["tests", "--ignore=tests/cluster"],
}


@dataclass
class Stream:
    name: str
    argv: list[str]
    log: Path | None = None  # None: its output goes to this process's stdout as it comes
    started: float = 0.0
    seconds: float = 0.0
    returncode: int | None = None
    process: subprocess.Popen | None = field(default=None, repr=False)

    def start(self) -> None:
        out = open(self.log, "wb") if self.log else None  # noqa: SIM115 (closed when the stream ends)
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            self.argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT if out else None
        )
        if out:
            out.close()  # the child holds its own descriptor

    def poll(self) -> bool:
        """True once the stream has ended (its status and wall time recorded)."""
        if self.returncode is None and self.process is not None and self.process.poll() is not None:
            self.returncode = self.process.returncode
            self.seconds = time.monotonic() - self.started
        return self.returncode is not None


def pytest_argv(args: list[str], extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-ra", *args, *extra]


def summary(streams: list[Stream]) -> str:
    lines = []
    for s in streams:
        args = " ".join(STREAMS[s.name])
        lines.append(f"tools.suite: stream {s.name}: exit {s.returncode}, {s.seconds / 60:.1f} min ({args})")
    return "\n".join(lines)


def show(stream: Stream) -> None:
    if stream.log is not None:
        print(f"\n==== tools.suite: the {stream.name} stream's output ====", flush=True)
        sys.stdout.buffer.write(stream.log.read_bytes())
        sys.stdout.flush()


def run(extra: list[str], serial: bool) -> int:
    with tempfile.TemporaryDirectory(prefix="minigo-suite-") as tmp:
        streams = [
            Stream(name, pytest_argv(args, extra), log=None if name == "rest" else Path(tmp) / f"{name}.log")
            for name, args in STREAMS.items()
        ]
        start = time.monotonic()
        try:
            if serial:
                for s in streams:
                    s.start()
                    s.process.wait()
                    s.poll()
                    show(s)
            else:
                for s in streams:
                    s.start()
                while not all([s.poll() for s in streams]):  # every stream polled: each ends when it ends
                    time.sleep(0.5)
                for s in streams:
                    show(s)
        except KeyboardInterrupt:
            for s in streams:
                if s.process is not None and s.process.poll() is None:
                    s.process.send_signal(signal.SIGINT)
            for s in streams:
                if s.process is not None:
                    s.process.wait()
            raise
        print(f"\n{summary(streams)}")
        print(f"tools.suite: {len(streams)} streams {'one after another' if serial else 'side by side'} in "
              f"{(time.monotonic() - start) / 60:.1f} min on {os.cpu_count()} cores")  # fmt: skip
        failed = [s.returncode for s in streams if s.returncode != 0]
        return failed[0] if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    serial = "--serial" in args
    return run([a for a in args if a != "--serial"], serial)


if __name__ == "__main__":
    sys.exit(main())

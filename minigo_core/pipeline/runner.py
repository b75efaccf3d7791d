"""`minigo run --profile P --config C`: run the Snakemake workflow to the end, with progress; show results.

What `make run` calls. Each Snakemake invocation plans a bounded number of generations (config key
`plan_max_jobs`, see `minigo_core.pipeline.plan`); this command invokes Snakemake again until every generation
is done, so one command runs a whole run on a laptop or, with `--profile profiles/slurm`, from a login node.
Snakemake's full output goes to `{root}/logs/snakemake/*.log`; the terminal shows the plan of each
invocation, Snakemake's error lines, and one status line (`minigo_core.report.progress`):

    gen 7/24 · jobs 45/120 · 5:12 elapsed · ~12:30 left · Elo 758 [663, 855], between uct:512 and ... (gen 6)

redrawn in place on a terminal (`--progress live`), printed as a plain line when the generation changes or
at most once a minute otherwise (`--progress lines`: logs, CI, nohup), or not at all (`--progress none`,
`--quiet-progress`). At the end it prints where the results are, each evaluated generation's Elo on the fixed
ladder and `minigo status`.

    minigo run --profile profiles/local --config config.yaml [--no-report] [--progress {live,lines,none}]
               [--unlock] [-- extra snakemake options]

One launcher per run root: `minigo run` holds `{root}/minigo-run.lock` (`run_lock`) while it runs; a second
one on the same root is refused at once, naming the host and pid of the first. `--unlock` removes a lock that
a gone run left (and Snakemake's own lock of the run), then exits.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import yaml
from snakemake.utils import update_config

from minigo_core.base import project_files
from minigo_core.base.command import Command
from minigo_core.base.config import ConfigError, RunConfig, from_dict
from minigo_core.data import layout
from minigo_core.pipeline import budget, run_lock
from minigo_core.pipeline.plan import DEFAULT_MAX_JOBS, default_report_generation, plan
from minigo_core.pipeline.workflow import split_workflow_keys, without_unavailable_opponents
from minigo_core.report import status
from minigo_core.report.progress import MODES, SHOWN, ProgressDisplay, RunProgress

log = logging.getLogger(__name__)
# the Snakefile, config.yaml and profiles/: the checkout's, or the copy an installed wheel carries
PROJECT = project_files.project_dir()
# where Snakemake runs (relative run roots live there): the checkout; with an installed wheel, the current
# directory
REPO = PROJECT if project_files.is_checkout() else Path.cwd()


def effective_config(config_file: str, workdir: Path = REPO) -> tuple[RunConfig, dict]:
    """The run config Snakemake will see: the Snakefile's `config.yaml`, then `config_file` merged over it."""
    data: dict = {}
    default = PROJECT / "config.yaml"  # the Snakefile's configfile
    for path in (default, Path(config_file)):
        if path.exists() and (path.resolve() != default.resolve() or not data):
            loaded = yaml.safe_load(path.read_text()) or {}
            if not isinstance(loaded, dict):
                raise ConfigError(f"config file {path} must hold a mapping of keys")
            update_config(data, loaded)  # Snakemake's own merge of --configfile over configfile:
    if not Path(config_file).exists():
        raise ConfigError(f"config file {config_file} not found")
    data, workflow = split_workflow_keys(data)
    cfg = from_dict(data)
    root = cfg.root if os.path.isabs(cfg.root) else str(workdir / cfg.root)
    return from_dict({**data, "root": root}), workflow


def snakemake_command(profile: str, config_file: str, extra: list[str]) -> list[str]:
    snakefile = str(PROJECT / "Snakefile")
    return [sys.executable, "-m", "snakemake", "--snakefile", snakefile, "--profile", profile,
            "--configfile", config_file, *extra]  # fmt: skip


def run_snakemake(
    cmd: list[str], log_path: Path, echo=print, progress: ProgressDisplay | None = None, stop_when=None
) -> int:
    """Run one Snakemake invocation; full output to `log_path`, to the terminal: its error lines (`SHOWN`,
    through `echo`) and, with `progress`, the status line (which then shows the error lines itself).
    `stop_when` (a callable, asked every few seconds): when it returns true, Snakemake is stopped (SIGINT,
    then SIGTERM) and its jobs with it."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        assert proc.stdout is not None
        if stop_when is not None:
            threading.Thread(target=_stop_when, args=(proc, stop_when), daemon=True).start()
        try:
            if progress is None:
                for line in proc.stdout:
                    log.write(line)
                    if SHOWN.match(line.rstrip()):
                        echo("  " + line.rstrip())
            else:
                with progress.invocation():
                    for line in proc.stdout:
                        log.write(line)
                        progress.line(line.rstrip())
        except KeyboardInterrupt:
            for line in proc.stdout:  # Snakemake got the Ctrl-C too: its last words go to the log
                log.write(line)
            proc.wait()
            raise
        return proc.wait()


def _stop_when(proc: subprocess.Popen, stop_when, poll_s: float = 5.0, grace_s: float = 30.0) -> None:
    """Ask `stop_when` every `poll_s` while Snakemake runs; when it says so, stop Snakemake: SIGINT (it
    cancels its running jobs and marks their outputs incomplete), SIGTERM after `grace_s`."""
    while proc.poll() is None:
        if stop_when():
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    proc.send_signal(sig)
                    proc.wait(timeout=grace_s)
                    return
                except subprocess.TimeoutExpired:
                    continue
                except ProcessLookupError:
                    return
            return
        time.sleep(poll_s)


def print_results(cfg: RunConfig, echo=print) -> None:
    """Where the results are, the fixed-scale Elo table and the status table."""
    root = cfg.root
    summary = layout.summary_dir(root)
    echo("")
    echo(f"results of the run in {root}:")
    echo(f"  models         {layout.model_path(root, 'GGGG')}")
    complete = os.path.basename(layout.complete_marker_path(root, "GGGG"))
    echo(f"  self-play      {layout.game_path(root, 'GGGG', 'IIIII')} (+ {complete} per generation)")
    echo(f"  evaluations    {layout.eval_path(root, 'GGGG', 'OPPONENT')}")
    echo(
        f"  summary        {summary}/ ({layout.RATINGS_CSV}, {layout.TIME_TO_TARGET_FILE}, *.png,"
        f" {layout.STATUS_FILE})"
    )
    report = Path(layout.summary_path(root, layout.REPORT_FILE))
    if report.exists():
        echo(f"  report         {report}")
    echo(f"  logs           {layout.logs_dir(root)}/")
    board = layout.tensorboard_dir(root)
    echo(f"  tensorboard    {board}/ (tensorboard --logdir {board})")
    echo("")
    echo(status.fixed_scale_summary(cfg))
    if Path(layout.ratings_path(root)).exists():
        echo(f"  (run-relative Bradley-Terry fit, anchor gen0000 = 0: {layout.ratings_path(root)})")
    ttt_file = Path(layout.summary_path(root, layout.TIME_TO_TARGET_FILE))
    if ttt_file.exists():
        ttt = json.loads(ttt_file.read_text())
        if ttt.get("reached"):
            echo(
                f"time to target ({cfg.evaluate.target}): {ttt['seconds']:.0f} s,"
                f" generation {ttt['generation']}"
            )
        else:
            echo(f"time to target ({cfg.evaluate.target}): not reached")
    echo("")
    echo(status.format_table(cfg, status.collect(cfg)))


def run_until_done(
    cmd: list[str],
    cfg: RunConfig,
    workflow: dict,
    profile: str,
    config: str,
    max_invocations: int = 100000,
    progress: ProgressDisplay | None = None,
    run_budget: budget.Budget | None = None,
) -> tuple[int, RunConfig]:
    """Invoke Snakemake until the plan reaches the run's last generation; stop when one makes no progress.
    `progress` shows the status line (None: Snakemake's error lines only). With `run_budget`, the run ends
    at the generation the budget allows (`pipeline.budget`). Returns the exit code and the run's config
    (its `generations` the budget's when it shortened the run)."""
    logs = Path(layout.snakemake_logs_dir(cfg.root))
    previous = None
    ended_at: list[int] = []  # the generation the budget ended the run at (set by the watcher)

    def over_budget() -> bool:
        if run_budget is None or ended_at:
            return False
        last = run_budget.last_generation(cfg)
        if last is not None:
            ended_at.append(last)
        return last is not None

    for invocation in range(1, max_invocations + 1):
        planned = plan(cfg, max_jobs=workflow.get("plan_max_jobs", DEFAULT_MAX_JOBS))
        if planned.finished and invocation > 1:
            break  # (a first invocation always runs: it brings the summary up to date)
        if planned == previous:
            log.error(
                "no progress in the last Snakemake invocation (%s); see the logs in %s",
                planned.describe(),
                logs,
            )
            return 1, cfg
        previous = planned
        print(f"[{time.strftime('%H:%M:%S')}] invocation {invocation}: {planned.describe()}")
        log_path = Path(layout.snakemake_log_path(cfg.root, time.strftime("%Y%m%d-%H%M%S"), invocation))
        try:
            watch = over_budget if run_budget else None
            code = run_snakemake(cmd, log_path, progress=progress, stop_when=watch)
        except KeyboardInterrupt:
            print(f"\nminigo run: interrupted; rerun the same command to continue (log: {log_path})")
            return 130, cfg
        if ended_at and cfg.generations != ended_at[0]:
            print(
                f"[{time.strftime('%H:%M:%S')}] minigo run: the budget ends the run at generation "
                f"{ended_at[0]} of {cfg.generations}: its matches next (Snakemake --config "
                f"generations={ended_at[0]})"
            )
            cmd = [*cmd, *budget.shortened(cfg, ended_at[0])]
            cfg = replace(cfg, generations=ended_at[0])
            previous = None
            continue
        if code != 0:
            log.error("snakemake failed (exit %d); full log: %s", code, log_path)
            try:
                text = log_path.read_text(errors="replace")
            except OSError:  # the run's folder was removed while Snakemake ran
                text = ""
            if "Directory cannot be locked" in text:
                log.error(
                    "  another Snakemake runs in this directory, or one was killed: if none runs, "
                    "`minigo run --profile %s --config %s --unlock`",
                    profile,
                    config,
                )
            return code, cfg
        if planned.complete_run:
            break
    return 0, cfg


def with_config(cmd: list[str], *items: str) -> list[str]:
    """`cmd` with Snakemake `--config` KEY=VALUE `items` added. Snakemake keeps only the last `--config`
    option's values, so they join the last one there is (with the user's or the budget's keys)."""
    flags = [i for i, arg in enumerate(cmd) if arg in ("--config", "-C")]
    if not flags:
        return [*cmd, "--config", *items]
    at = flags[-1] + 1
    return [*cmd[:at], *items, *cmd[at:]]


def report_command(cmd: list[str], cfg: RunConfig) -> list[str]:
    """The Snakemake command that writes the run's HTML report: `cmd` with one finished generation's jobs
    in its DAG (config key `report_generation`, `plan.default_report_generation`), so that the report's
    rule graph draws a whole generation beside the summary rules; a finished run's plan holds only these."""
    report = layout.summary_path(cfg.root, layout.REPORT_FILE)
    shown = f"report_generation={default_report_generation(cfg)}"
    return [*with_config(cmd, shown), "--report", str(report)]


def write_report(cmd: list[str], cfg: RunConfig) -> None:
    report_cmd = report_command(cmd, cfg)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    code = subprocess.run(report_cmd, cwd=REPO, **quiet).returncode
    if code != 0:
        print(f"minigo run: the HTML report failed (exit {code}); run {shlex.join(report_cmd)}")


def run(args: argparse.Namespace) -> int:
    # Snakemake runs in REPO (relative roots live there); paths given relative to the caller's directory are
    # made absolute first; one found neither there nor in the project's files is left to the error below
    # (the config) or to Snakemake (a profile name: ~/.config/snakemake/NAME).
    config = _located(args.config) or str(Path(args.config).resolve())
    profile = _located(args.profile) or args.profile
    cfg, workflow = effective_config(config)
    cfg, left_out = without_unavailable_opponents(cfg)  # as the workflow does (common.smk), so plans agree
    if left_out:
        print(f"minigo run: {left_out}")
    cmd = snakemake_command(profile, config, args.extra)
    budget.budget_from_args(args.budget, args.reserve, 0.0)  # a bad --budget fails before the run is locked
    if args.unlock:
        return unlock(cmd, cfg)
    holder = run_lock.acquire(cfg.root, shlex.join(sys.argv))
    try:
        return _run_locked(args, cfg, workflow, cmd, profile, config)
    finally:
        run_lock.release(cfg.root, holder)


def _located(path: str) -> str | None:
    """`path` from the current directory, else from the project's files (`config/tiny.yaml`,
    `profiles/slurm` from anywhere with an installed wheel); None when neither has it."""
    try:
        return str(project_files.find(path))
    except FileNotFoundError:
        return None


def unlock(cmd: list[str], cfg: RunConfig) -> int:
    """`minigo run --unlock`: remove the run root's lock and Snakemake's lock of the run."""
    print(f"minigo run: {run_lock.unlock(cfg.root)}")
    code = subprocess.run([*cmd, "--unlock"], cwd=REPO, capture_output=True, text=True).returncode
    print(f"minigo run: Snakemake's lock {'removed' if code == 0 else f'not removed (exit {code})'}")
    return code


def _run_locked(
    args: argparse.Namespace, cfg: RunConfig, workflow: dict, cmd: list[str], profile: str, config: str
) -> int:
    print(
        f"minigo run: {cfg.generations} generations of {cfg.selfplay.games} games (self-play jobs of "
        f"{cfg.selfplay.games_per_job}), {cfg.board_size}x"
        f"{cfg.board_size}, profile {profile}, run root {cfg.root}"
    )
    start = time.time()
    display = ProgressDisplay(RunProgress(cfg.root, cfg.generations, start), mode=args.progress)
    run_budget = budget.budget_from_args(args.budget, args.reserve, start)
    code, cfg = run_until_done(cmd, cfg, workflow, profile, config, args.max_invocations, display, run_budget)
    if code != 0:
        return code
    print(f"minigo run: done in {time.time() - start:.0f} s")
    if not args.no_report:
        write_report(cmd, cfg)
    print_results(cfg)
    return 0


def cli_main(argv: list[str]) -> int:
    cmd = Command(
        "run",
        "Run the Snakemake workflow until every generation is done, then print the results.",
        errors=(run_lock.RunLocked,),
    )
    cmd.parser.epilog = "Options after `--` go to snakemake unchanged (e.g. -- --cores 2)."
    cmd.parser.add_argument("--profile", default="profiles/local", help="Snakemake profile (profiles/local)")
    cmd.add_config(required=False, help="run config (config.yaml)")
    cmd.parser.set_defaults(config="config.yaml")
    cmd.parser.add_argument("--no-report", action="store_true", help="skip the HTML report at the end")
    cmd.parser.add_argument(
        "--max-invocations", type=int, default=100000, help="stop after this many Snakemake invocations"
    )
    cmd.parser.add_argument(
        "--progress",
        choices=MODES,
        default=None,
        help="the status line: redrawn in place (live, the default on a terminal), a line per generation "
        "and at most one a minute (lines, the default otherwise), or none",
    )
    cmd.parser.add_argument(
        "--quiet-progress", dest="progress", action="store_const", const="none", help="= --progress none"
    )
    cmd.parser.add_argument(
        "--budget",
        default=None,
        help="wall-time budget (55m, 1h, 3300s): stop starting generations in time for the last one's "
        "matches, ending the run at the generation the budget allows (pipeline/budget.py)",
    )
    cmd.parser.add_argument(
        "--reserve",
        default=None,
        help="with --budget: the time kept for the last generation's matches and rating (default: 15%% of "
        "the budget)",
    )
    cmd.parser.add_argument(
        "--unlock",
        action="store_true",
        help="remove the lock that a gone `minigo run` left in the run root (and Snakemake's), then exit",
    )
    return cmd.run(argv, run, pass_on=True)

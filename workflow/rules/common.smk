# Helpers shared by the rules: the validated config, the bounded plan, paths and small input functions.
# Nothing here lists a directory of game files: every Slurm job re-parses this file.

import os
import shlex
import sys

from snakemake.utils import validate

from minigo_core.data import layout
from minigo_core.pipeline import srun, targets
from minigo_core.pipeline import workflow as minigo

validate(config, "../schemas/config.schema.yaml", set_default=False)
try:
    RUN = minigo.run_config(config)
except minigo.ConfigError as exc:
    raise WorkflowError(f"invalid config: {exc}") from None
# without GNU Go the run goes on without its matches against GNU Go (README.md, "Set-up without root")
RUN, LEFT_OUT = minigo.without_unavailable_opponents(RUN)
if LEFT_OUT and not workflow.remote_exec:
    logger.warning(f"minigo: {LEFT_OUT}")
if "://" in RUN.root:
    raise WorkflowError(
        f"config key 'root' = {RUN.root!r}: the workflow needs a path on a (shared) filesystem; "
        "fsspec URLs are for the library commands only"
    )

ROOT = RUN.root.rstrip("/")
# The interpreter running Snakemake: its environment (the project's .venv) has minigo_core.
PYTHON = sys.executable
MINIGO = f"{shlex.quote(PYTHON)} -m minigo_core.cli"
# the nice level of evaluation and rating jobs: `evaluate.share` of a core beside a loop job
EVAL_NICE = minigo.evaluation_nice(RUN)


def eval_nice(wildcards):
    """EVAL_NICE, but 0 for the last generation's jobs (no loop job is left beside them)."""
    return minigo.evaluation_nice_at(RUN, int(wildcards.generation))


def evaluation_slots(wildcards):
    """The `evaluations` slots a job holds: the last generation's none (it never waits for a mid-run one)."""
    return minigo.evaluation_slots(RUN, int(wildcards.generation))


# The bounded plan (see minigo_core/pipeline/plan.py): in the main Snakemake process it is read from the run's files;
# in a cluster job (which builds no DAG beyond its own job) every generation is allowed, so a job never
# disagrees with the plan that submitted it.
if workflow.remote_exec:
    PLAN = None
    PLANNED = r"\d{4}"
    EVALUATED = r"\d{4}"
    BOOTSTRAPPED = r"0000"
    PACKED = r"\d{4}"
else:
    try:
        PLAN = minigo.plan(
            RUN,
            first=config.get("first_generation"),
            last=config.get("last_generation"),
            max_jobs=config.get("plan_max_jobs", minigo.DEFAULT_MAX_JOBS),
            # `minigo run`'s report: one finished generation's complete jobs join the DAG, so the report's
            # rule graph draws a whole generation, not the summary rules alone
            report_generation=config.get("report_generation"),
        )
    except minigo.ConfigError as exc:
        raise WorkflowError(str(exc)) from None

    def _alternatives(generations):
        return "|".join(f"{g:04d}" for g in sorted(set(generations))) or "(?!)"

    PLANNED = _alternatives([*PLAN.planned, *PLAN.shown])
    EVALUATED = _alternatives([*PLAN.late_evaluations, *PLAN.planned, *PLAN.shown])
    BOOTSTRAPPED = "0000" if 0 in PLAN.planned else "(?!)"
    PACKED = _alternatives([*PLAN.packs, *PLAN.shown_packs])
    logger.info(f"minigo: plan = {PLAN.describe()} (run root {ROOT})")


def opponent_slugs():
    return "|".join(minigo.opponent_slugs(RUN)) or "(?!)"


def equal_time_slugs():
    return "|".join(minigo.equal_time_slugs(RUN)) or "(?!)"


# ---------------------------------------------------------------------------------------------- paths
EFFECTIVE_CONFIG = layout.effective_config_path(ROOT)
# Path patterns: the run layout (minigo_core/data/layout.py) with Snakemake wildcards for the variable parts.
MODEL = layout.model_path(ROOT, "{generation}")
# the `--out` of a self-play job: the game file with `{game:05d}` for the index
GAME_PATTERN = layout.game_path_pattern(ROOT, "{generation}")
# next to, not inside, the generation's directory of game files (see layout.complete_marker_path)
GAMES_COMPLETE = layout.complete_marker_path(ROOT, "{generation}")
# the window parts' manifest (minigo_core/data/parts.py): written by games_complete, before the marker
WINDOW_PARTS = layout.parts_manifest_path(ROOT, "{generation}")
# a packed generation's marker; the pack itself (layout.pack_path) is no output, so Snakemake never deletes it
PACKED_MARKER = layout.packed_marker_path(ROOT, "{generation}")
SELFPLAY_JOB = layout.selfplay_job_path(ROOT, "{generation}", "{job}")
SELFPLAY_JOBS = minigo.selfplay_jobs(RUN)  # the game indices of each job
WINDOW_MANIFEST = layout.window_manifest_path(ROOT, "{generation}")
TRAIN_METRICS = layout.train_metrics_path(ROOT, "{generation}")
EVAL = layout.eval_path(ROOT, "{generation}", "{opponent}")
EQUAL_TIME_EVAL = layout.equal_time_eval_path(ROOT, "{generation}", "{opponent}")
LADDER_RATING = layout.ladder_rating_path(ROOT, "{generation}")
FIRST_RATING = layout.ladder_first_rating_path(ROOT, "{generation}")
SUMMARY = layout.summary_dir(ROOT)
# One window shard per training rank.
SHARDS = [
    layout.shard_path(ROOT, "{generation}", rank) for rank in range(RUN.train.ranks)
]


def effective_config_text():
    """The validated run config as YAML: what every library command reads."""
    return minigo.effective_config_text(RUN)


# ---------------------------------------------------------------------------------------------- targets
# the per-generation files this invocation produces (late evaluations, planned generations, packed markers)
GENERATION_TARGETS = [] if PLAN is None else targets.generation_targets(RUN, PLAN)


def all_targets():
    """Everything the current plan produces, and the run summary."""
    if PLAN is None:
        return []
    targets = [EFFECTIVE_CONFIG, *GENERATION_TARGETS]
    if not PLAN.explicit and PLAN.last >= 1 and minigo.opponent_slugs(RUN):
        targets += summary_outputs()
    return targets


def summary_outputs():
    return [f"{SUMMARY}/{name}" for name in layout.SUMMARY_FILES]


# ---------------------------------------------------------------------------------------------- inputs
def parent_model(wildcards):
    return layout.model_path(ROOT, int(wildcards.generation) - 1)


def selfplay_model(wildcards):
    """The model that plays the generation's games: model g, or g-1 with selfplay.model_lag 1."""
    return layout.model_path(ROOT, selfplay_model_generation(wildcards))


def selfplay_model_generation(wildcards):
    return minigo.selfplay_model_generation(RUN, int(wildcards.generation))


def selfplay_priority(wildcards):
    """Older generations' self-play first (its games-complete marker is on the critical path), always after
    the critical path's own jobs (games-complete, window, train: priority 10)."""
    return -int(wildcards.generation)


def job_first_game(wildcards):
    return SELFPLAY_JOBS[int(wildcards.job)].start


def job_game_count(wildcards):
    return len(SELFPLAY_JOBS[int(wildcards.job)])


def job_records(wildcards):
    """The self-play job records of one generation (one per job, not per game)."""
    g = int(wildcards.generation)
    return [layout.selfplay_job_path(ROOT, g, j) for j in range(len(SELFPLAY_JOBS))]


def window_markers(wildcards):
    """Games-complete markers of the W generations before `generation` (not their game files); W is its
    window size: window.generations, or window.generations_schedule at the generation.
    """
    g = int(wildcards.generation)
    return [layout.complete_marker_path(ROOT, h) for h in minigo.window_of(RUN, g)]


def last_window(wildcards):
    """The manifest of the last window that reads a generation's games (generation + W's, or a growing
    window's): once it exists, the generation can be packed. Ancient: a rebuilt window (it reads packs
    too) does not repack it.
    """
    g = int(wildcards.generation)
    return ancient(layout.window_manifest_path(ROOT, minigo.last_window(RUN, g)))


def evaluate_options(wildcards):
    return minigo.evaluate_options(RUN, int(wildcards.generation), wildcards.opponent)


def equal_time_options(wildcards):
    return minigo.equal_time_options(RUN, int(wildcards.generation))


def opponent_spec(wildcards):
    return minigo.opponent_text(wildcards.opponent)


def opponent_model(wildcards):
    """The opponent's model file (none for GNU Go or the random player)."""
    g = int(wildcards.generation)
    other = minigo.opponent_model_generation(wildcards.opponent, g)
    return [] if other is None else [layout.model_path(ROOT, other)]


def ladder_start(wildcards):
    """The generation's own first rating, when the run makes them: where its full rating starts."""
    return minigo.ladder_start(RUN, int(wildcards.generation))


def ladder_options(wildcards):
    return minigo.ladder_options(RUN, int(wildcards.generation))


def first_rating_start(wildcards):
    """Nothing: a first rating starts at the ladder's middle."""
    return minigo.first_rating_start(RUN, int(wildcards.generation))


def first_rating_options(wildcards):
    return minigo.first_rating_options(RUN, int(wildcards.generation))


def summary_inputs(wildcards):
    """The results the summary reads: those that exist or that this invocation produces."""
    return [] if PLAN is None else targets.summary_inputs(RUN, PLAN, GENERATION_TARGETS)


def directory_of(name):
    """A params function: the directory of the named input or output file (e.g. the window of a manifest)."""

    def directory(wildcards, input, output):
        files = output if name in output.keys() else input
        return os.path.dirname(getattr(files, name))

    directory.__name__ = f"directory_of_{name}"
    return directory


def launcher(wildcards, resources):
    """How the training ranks start: `srun ...` under Slurm (resource mpi="srun"), else nothing."""
    return srun.train_launcher(resources)


def ranks_option(wildcards, resources):
    """`--ranks N` when `minigo train` starts its ranks itself (no launcher)."""
    return srun.ranks_option(resources)

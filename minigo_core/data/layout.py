"""The run layout: every path of a run on the shared filesystem, in one place.

    {root}/config.yaml                            the validated config the run was started with
    {root}/models/gen0007.safetensors             model of generation 7 (weights, config, provenance)
    {root}/games/gen0007/game00042.arrow          one self-play game
    {root}/games/gen0007/job00002.json            one self-play job's record: its games' digests, its timings
    {root}/games/gen0007.complete.json            all of generation 7's games verified (beside the folder)
    {root}/games/gen0002.pack.arrow               games, job records and logs of a generation past the window
    {root}/games/gen0002.packed.json              its pack verified and the loose files gone
    {root}/window/gen0008/shard003.arrow          training data of generation 8, one shard per rank
    {root}/window/gen0008/manifest.json           which games, positions, skipped files and why
    {root}/window/parts/gen0007/part1.arrow       generation 7's rows for window 9 (written with its marker)
    {root}/window/parts/gen0007/parts.json        its parts' rows, checksums and games (written last)
    {root}/train/gen0008/metrics.jsonl            losses and throughput (+ checkpoint.pt while training)
    {root}/eval/gen0008/vs_gnugo-1.json           a match's games, win rate and interval
    {root}/eval/gen0015/vs_gnugo-1_equal-time.json  the last generation's match at equal time per move
    {root}/eval/gen0008/ladder.json               its rating on the fixed Elo ladder (if one exists)
    {root}/eval/gen0008/ladder_first.json         its first, quick rating there (few games, wide interval)
    {root}/summary/elo.json                       ratings, time to target, plots, status
    {root}/tensorboard/train/events.out.tfevents.gen0008  its scalars for TensorBoard, one folder per kind
    {root}/logs/train/gen0008.log                 one log per job (logs/snakemake/: `minigo run`'s output)
    {root}/minigo-run.lock                        host and pid of the `minigo run` that runs the root

Every function takes a generation as an int (`7` -> `gen0007`) or, for the workflow's path patterns, as a
Snakemake wildcard string (`"{generation}"` -> `gen{generation}`), so the library,
`workflow/rules/common.smk`, `minigo run` and the run comparison (`data/compare.py`) spell each file name
the same way.
"""

from __future__ import annotations

import re
from pathlib import Path

from minigo_core.base.project_files import project_dir
from minigo_core.data.storage import join

EFFECTIVE_CONFIG = "config.yaml"
RUN_LOCK = "minigo-run.lock"  # held by the `minigo run` of the root while it runs (pipeline/run_lock.py)
SUMMARY = "summary"
# The summary's files ({root}/summary/): `minigo ratings` writes the first six, `minigo plots` the next four,
# `minigo run` the HTML report (Snakemake's `--report`).
RATINGS_CSV = "elo.csv"
RATINGS_FILE = "elo.json"
TIME_TO_TARGET_FILE = "time_to_target.json"
ELO_PLOT = "elo.png"
WINRATE_PLOT = "winrate.png"
LEARNING_CURVE_PLOT = "learning_curve.png"
LOSS_PLOT = "loss.png"
GAME_LENGTHS_PLOT = "game_lengths.png"
RESIGN_PLOT = "resign_false_positives.png"
STATUS_FILE = "status.txt"
REPORT_FILE = "report.html"
RATINGS_OUTPUTS = (
    RATINGS_CSV,
    RATINGS_FILE,
    TIME_TO_TARGET_FILE,
    ELO_PLOT,
    WINRATE_PLOT,
    LEARNING_CURVE_PLOT,
)
PLOTS_OUTPUTS = (LOSS_PLOT, GAME_LENGTHS_PLOT, RESIGN_PLOT, STATUS_FILE)
SUMMARY_FILES = RATINGS_OUTPUTS + PLOTS_OUTPUTS  # what the workflow's summary rules produce
MANIFEST = "manifest.json"
METRICS = "metrics.jsonl"
CHECKPOINT = "checkpoint.pt"
MODEL_SUFFIX = ".safetensors"
GAME_SUFFIX = ".arrow"
JOB_SUFFIX = ".json"
COMPLETE_SUFFIX = ".complete.json"
PACK_SUFFIX = ".pack.arrow"
PACKED_SUFFIX = ".packed.json"

Generation = int | str  # an int, or a wildcard pattern such as "{generation}"


def generation_name(generation: Generation) -> str:
    """`gen0007` for 7; `gen{generation}` for the wildcard `"{generation}"` (its values are 4 digits)."""
    return f"gen{generation}" if isinstance(generation, str) else f"gen{int(generation):04d}"


GAME_NAME = "game{game:05d}"  # str.format pattern of a game's file name (without the suffix)


def game_name(game: int | str) -> str:
    return f"game{game}" if isinstance(game, str) else GAME_NAME.format(game=int(game))


def effective_config_path(root: str) -> str:
    return join(root, EFFECTIVE_CONFIG)


def models_dir(root: str) -> str:
    return join(root, "models")


def model_path(root: str, generation: Generation) -> str:
    return join(models_dir(root), generation_name(generation) + MODEL_SUFFIX)


def games_dir(root: str, generation: Generation) -> str:
    return join(root, "games", generation_name(generation))


def game_path(root: str, generation: Generation, game: int | str) -> str:
    return join(games_dir(root, generation), game_name(game) + GAME_SUFFIX)


def game_path_pattern(root: str, generation: Generation) -> str:
    """`game_path` with `{game:05d}` for the index: the `--out` of `minigo selfplay --count K`."""
    return join(games_dir(root, generation), GAME_NAME + GAME_SUFFIX)


JOB_NAME = "job{job:05d}"  # str.format pattern of a self-play job record's name (without the suffix)


def selfplay_job_name(job: int | str) -> str:
    return f"job{job}" if isinstance(job, str) else JOB_NAME.format(job=int(job))


def selfplay_job_path(root: str, generation: Generation, job: int | str) -> str:
    """`games/gen0007/job00002.json`: the record a self-play job writes after its last game (its games'
    names, sizes and digests; its timings). The workflow's output of the job: Snakemake tracks one file per
    job, not one per game, so its planning and its metadata do not grow with the games."""
    return join(games_dir(root, generation), selfplay_job_name(job) + JOB_SUFFIX)


def complete_marker_path(root: str, generation: Generation) -> str:
    """`games/genXXXX.complete.json`: written once every self-play game of the generation is verified.

    It sits next to the generation's game directory, not in it: Snakemake caches the listing of every
    directory holding an input file, and a directory of 8192 game files per generation would make that cost
    grow with the run's history.
    """
    return join(root, "games", generation_name(generation) + COMPLETE_SUFFIX)


def pack_path(root: str, generation: Generation) -> str:
    """`games/genXXXX.pack.arrow`: a generation's game files, job records and self-play logs in one archive
    (`minigo_core.data.pack`), once no window reads them; beside the folder it replaces."""
    return join(root, "games", generation_name(generation) + PACK_SUFFIX)


def packed_marker_path(root: str, generation: Generation) -> str:
    """`games/genXXXX.packed.json`: the pack job's output, written once the pack is verified and the loose
    files are gone (the pack itself is not a Snakemake output, so Snakemake never deletes it)."""
    return join(root, "games", generation_name(generation) + PACKED_SUFFIX)


def window_dir(root: str, generation: Generation) -> str:
    return join(root, "window", generation_name(generation))


def shard_name(rank: int) -> str:
    return f"shard{rank:03d}{GAME_SUFFIX}"


def shard_path(root: str, generation: Generation, rank: int) -> str:
    return join(window_dir(root, generation), shard_name(rank))


def manifest_path(window: str) -> str:
    """The manifest of a window directory."""
    return join(window, MANIFEST)


def window_manifest_path(root: str, generation: Generation) -> str:
    return manifest_path(window_dir(root, generation))


def parts_dir(root: str, generation: Generation) -> str:
    """`window/parts/gen0007`: generation 7's games sampled once for each window that reads them
    (`minigo_core.data.parts`): part k holds window 7+1+k's rows."""
    return join(root, "window", "parts", generation_name(generation))


def part_path(root: str, generation: Generation, part: int) -> str:
    return join(parts_dir(root, generation), f"part{int(part)}{GAME_SUFFIX}")


def parts_manifest_path(root: str, generation: Generation) -> str:
    """`window/parts/gen0007/parts.json`: written after the part files; without it the parts are not used."""
    return join(parts_dir(root, generation), "parts.json")


def train_dir(root: str, generation: Generation) -> str:
    return join(root, "train", generation_name(generation))


def train_metrics_path(root: str, generation: Generation) -> str:
    return join(train_dir(root, generation), METRICS)


def evals_dir(root: str) -> str:
    """`{root}/eval`: every generation's folder of results files."""
    return join(root, "eval")


def eval_dir(root: str, generation: Generation) -> str:
    return join(evals_dir(root), generation_name(generation))


def eval_path(root: str, generation: Generation, opponent_slug: str) -> str:
    """A match's results file; `opponent_slug` is `PlayerSpec.slug` (`gnugo-1`, `gen0`, `previous`)."""
    return join(eval_dir(root, generation), f"vs_{opponent_slug}.json")


# a config opponent's slug never holds `_`, so no other match file is mistaken for one of these
EQUAL_TIME_SUFFIX = "_equal-time"


def equal_time_eval_path(root: str, generation: Generation, opponent_slug: str) -> str:
    """`eval/gen0015/vs_gnugo-1_equal-time.json`: a match at equal time per move (`minigo evaluate
    --equal-time`), beside the fixed-readout match against the same opponent."""
    return eval_path(root, generation, opponent_slug + EQUAL_TIME_SUFFIX)


LADDER_RATING = "ladder.json"


def ladder_rating_path(root: str, generation: Generation) -> str:
    """`eval/gen0008/ladder.json`: the model's rating on the fixed Elo ladder (`minigo ladder rate`)."""
    return join(eval_dir(root, generation), LADDER_RATING)


LADDER_FIRST_RATING = "ladder_first.json"


def ladder_first_rating_path(root: str, generation: Generation) -> str:
    """`eval/gen0008/ladder_first.json`: the model's first rating on the fixed Elo ladder, a few games played
    as soon as the model exists (`evaluate.ladder_first_games`); `ladder.json` is the full one."""
    return join(eval_dir(root, generation), LADDER_FIRST_RATING)


def summary_dir(root: str) -> str:
    return join(root, SUMMARY)


def summary_path(root: str, name: str) -> str:
    """A file of the summary: `summary_path(root, TIME_TO_TARGET_FILE)`."""
    return join(summary_dir(root), name)


def ratings_path(root: str) -> str:
    return summary_path(root, RATINGS_FILE)


TENSORBOARD = "tensorboard"
TFEVENTS = "events.out.tfevents"  # TensorBoard reads the files whose name holds `tfevents`


def tensorboard_dir(root: str, kind: str = "") -> str:
    """`{root}/tensorboard` (what `tensorboard --logdir` is given), or the folder of one kind of scalars in it
    (a TensorBoard "run": `train`, `selfplay`, `ladder`, `ladder_first`, `eval/vs_gnugo-1`)."""
    return join(root, TENSORBOARD, kind) if kind else join(root, TENSORBOARD)


def tensorboard_eval_kind(opponent_slug: str) -> str:
    """`eval/vs_gnugo-1`: the TensorBoard folder of the matches against one opponent (see `eval_path`)."""
    return f"eval/vs_{opponent_slug}"


def tensorboard_path(root: str, kind: str, generation: Generation) -> str:
    """`tensorboard/train/events.out.tfevents.gen0008`: a generation's events file of one kind; the names grow
    with the generation, the order in which TensorBoard reads the files of a folder."""
    return join(tensorboard_dir(root, kind), f"{TFEVENTS}.{generation_name(generation)}")


def logs_dir(root: str, *parts: str) -> str:
    return join(root, "logs", *parts)


# The logs of the workflow's jobs ({root}/logs/, one per job: what the job printed) and of `minigo run`.
LOG_SUFFIX = ".log"


def run_config_log_path(root: str) -> str:
    """The log of the rule that writes the effective config."""
    return logs_dir(root, "run_config" + LOG_SUFFIX)


def generation_log_path(root: str, step: str, generation: Generation) -> str:
    """`logs/train/gen0007.log`: the log of a generation's one job of `step` (bootstrap, window, train,
    games_complete)."""
    return logs_dir(root, step, generation_name(generation) + LOG_SUFFIX)


def selfplay_log_path(root: str, generation: Generation, job: int | str) -> str:
    """`logs/selfplay/gen0007/job00002.log`: the log of a self-play job."""
    return logs_dir(root, "selfplay", generation_name(generation), selfplay_job_name(job) + LOG_SUFFIX)


def eval_log_path(root: str, generation: Generation, opponent_slug: str) -> str:
    """`logs/evaluate/gen0008/vs_gnugo-1.log`: the log of a match (see `eval_path`)."""
    return logs_dir(root, "evaluate", generation_name(generation), f"vs_{opponent_slug}{LOG_SUFFIX}")


def ladder_log_path(root: str, generation: Generation) -> str:
    """`logs/evaluate/gen0008/ladder.log`: the log of a generation's ladder rating."""
    return logs_dir(root, "evaluate", generation_name(generation), "ladder" + LOG_SUFFIX)


def ladder_first_log_path(root: str, generation: Generation) -> str:
    """`logs/evaluate/gen0008/ladder_first.log`: the log of a generation's first ladder rating."""
    return logs_dir(root, "evaluate", generation_name(generation), "ladder_first" + LOG_SUFFIX)


def summary_log_path(root: str, command: str) -> str:
    """`logs/summary/ratings.log`: the log of a summary command (ratings, plots)."""
    return logs_dir(root, "summary", command + LOG_SUFFIX)


def snakemake_logs_dir(root: str) -> str:
    """Where `minigo run` keeps the full output of each Snakemake invocation."""
    return logs_dir(root, "snakemake")


def snakemake_log_path(root: str, stamp: str, invocation: int) -> str:
    """`logs/snakemake/20240501-120000-3.log`: the output of `minigo run`'s invocation 3, begun at `stamp`."""
    return join(snakemake_logs_dir(root), f"{stamp}-{invocation}{LOG_SUFFIX}")


# ------------------------------------------------------------------------------ repository data: the ladders
# Not a run's files: the calibrated Elo ladders live in the repository (config/ladder/NxN.json; an installed
# wheel carries a copy: base/project_files.py). Their paths are here, next to the run layout, so the schedule
# (data/) can ask whether a board size has a ladder without importing rating/ (which reads and fits them:
# minigo_core.rating.ladder).
REPO = project_dir()
LADDER_DIR = Path("config") / "ladder"
_LADDER_FILE = re.compile(r"^(\d+)x\1\.json$")


def ladder_path(board_size: int, root: str | Path | None = None) -> Path:
    """`config/ladder/{N}x{N}.json` in the repository (or under `root`)."""
    return Path(root if root is not None else REPO) / LADDER_DIR / f"{int(board_size)}x{int(board_size)}.json"


def calibrated_sizes(root: str | Path | None = None) -> list[int]:
    """The board sizes that have a ladder file, in increasing order."""
    folder = Path(root if root is not None else REPO) / LADDER_DIR
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := _LADDER_FILE.match(p.name)))


def has_ladder(board_size: int, root: str | Path | None = None) -> bool:
    """Whether the board size has a calibrated ladder file."""
    return ladder_path(board_size, root).is_file()

"""What the Snakefile asks of the library: the run config, the plan, opponents, the effective config file.

`workflow/rules/common.smk` imports this module and `minigo_core.data.layout` (file names), nothing else
of the library, so the workflow holds no knowledge of Go: every rule calls a `minigo` command.
"""

from __future__ import annotations

from dataclasses import replace

import yaml

from minigo_core.base.config import ConfigError, RunConfig, from_dict
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import storage
from minigo_core.data.schedule import (
    equal_time_specs,
    evaluation_files,
    evaluation_specs,
    final_match,
    first_rating_file,
    first_rating_seed,
    generation_outputs,
    ladder_seed,
    last_window,
    opponent_specs,
    selfplay_jobs,
    selfplay_model_generation,
    window_of,
)
from minigo_core.pipeline.plan import DEFAULT_MAX_JOBS, Plan, plan
from minigo_core.play.gtp_program import find_gnugo

__all__ = [
    "DEFAULT_MAX_JOBS",
    "WORKFLOW_KEYS",
    "ConfigError",
    "Plan",
    "effective_config_text",
    "equal_time_options",
    "equal_time_slugs",
    "evaluate_options",
    "evaluation_nice",
    "evaluation_nice_at",
    "evaluation_slots",
    "evaluation_files",
    "first_rating_options",
    "first_rating_start",
    "generation_outputs",
    "ladder_options",
    "ladder_start",
    "last_window",
    "opponent_model_generation",
    "opponent_slugs",
    "opponent_text",
    "plan",
    "run_config",
    "selfplay_jobs",
    "selfplay_model_generation",
    "window_of",
    "without_unavailable_opponents",
    "write_effective_config",
]

# games a first rating plays against a rung before it counts for the bracket (the full rating: 10)
FIRST_RATING_GAMES_PER_RUNG = 4
# The CPU weight of each nice level 0..19 under Linux's fair scheduler (kernel/sched/core.c,
# sched_prio_to_weight): two jobs on one core share it in proportion to their weights.
NICE_WEIGHTS = (1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15)
# Workflow-only keys (not part of the run config the library sees); settable with --config KEY=VALUE.
WORKFLOW_KEYS = ("first_generation", "last_generation", "plan_max_jobs", "report_generation")


def split_workflow_keys(config: dict) -> tuple[dict, dict]:
    """Snakemake's `config` -> (the run config's keys, the workflow-only keys)."""
    run = {k: v for k, v in config.items() if k not in WORKFLOW_KEYS}
    return run, {k: config[k] for k in WORKFLOW_KEYS if k in config}


def run_config(config: dict) -> RunConfig:
    """The validated run config of Snakemake's `config` (ConfigError names the key)."""
    return from_dict(split_workflow_keys(config)[0])


def without_unavailable_opponents(cfg: RunConfig) -> tuple[RunConfig, str]:
    """`cfg` without its GNU Go opponents (`evaluate.opponents`, `evaluate.final_opponents`,
    `evaluate.final_equal_time`) when GNU Go is not installed, and a note that says so with the command that
    installs it ('' when nothing is left out). The run goes on without those matches, and the fixed-scale
    rating plays the ladder's other rungs (`minigo ladder rate`). `evaluate.target` is kept: a GNU Go target
    fails its evaluation, naming GNU Go."""
    e = cfg.evaluate
    listed = (*e.opponents, *e.final_opponents, *e.final_equal_time)
    gnugo = [o for o in dict.fromkeys(listed) if PlayerSpec.parse(o).kind == "gnugo"]
    if not gnugo:
        return cfg, ""
    try:
        find_gnugo(e.gnugo)
    except FileNotFoundError as exc:
        kept = replace(
            e,
            opponents=tuple(o for o in e.opponents if o not in gnugo),
            final_opponents=tuple(o for o in e.final_opponents if o not in gnugo),
            final_equal_time=tuple(o for o in e.final_equal_time if o not in gnugo),
        )
        return replace(
            cfg, evaluate=kept
        ), f"{exc}; this run leaves out the matches against {', '.join(gnugo)}"
    return cfg, ""


def effective_config_text(cfg: RunConfig) -> str:
    """The validated run config as YAML: what every library command reads."""
    header = "# Effective config of this run, written by the workflow; every job reads this file.\n"
    return header + yaml.safe_dump(cfg.to_dict(), sort_keys=False)


def write_effective_config(path: str, text: str) -> None:
    storage.remove_stale_temporaries([path])  # what a killed attempt left
    storage.write_text(path, text)


def opponent_slugs(cfg: RunConfig) -> list[str]:
    """The file-name forms of the configured opponents (the `{opponent}` wildcard's values)."""
    return [spec.slug for spec in opponent_specs(cfg)]


def evaluate_options(cfg: RunConfig, generation: int, slug: str | None = None) -> list[str]:
    """Extra `minigo evaluate` arguments of `generation`'s match against the opponent of file-name form
    `slug` (a list: the rule quotes each with `:q`): a final match (`schedule.final_match`: the last
    generation's against the target and `evaluate.final_opponents`) plays `evaluate.final_games` games
    without early stop; the others take the config's values (no arguments)."""
    if slug is None:
        final = final_match(cfg, generation)
    else:
        spec = next((s for s in evaluation_specs(cfg, generation) if s.slug == slug), None)
        final = spec is not None and final_match(cfg, generation, spec)
    return ["--games", str(cfg.evaluate.final_games), "--no-early-stop"] if final else []


def equal_time_slugs(cfg: RunConfig) -> list[str]:
    """The file-name forms of the last generation's opponents at equal time per move (the `{opponent}`
    wildcard's values in `eval/genG/vs_{opponent}_equal-time.json`)."""
    return [spec.slug for spec in equal_time_specs(cfg, cfg.generations)]


def equal_time_options(cfg: RunConfig, generation: int) -> list[str]:
    """`minigo evaluate` arguments of `generation`'s matches at equal time per move: those of its other
    matches (`evaluate_options`) and `--equal-time`."""
    return [*evaluate_options(cfg, generation), "--equal-time"]


def opponent_text(slug: str) -> str:
    """The player spec behind an `{opponent}` wildcard value (`gnugo-1` -> `gnugo:1`)."""
    return PlayerSpec.from_slug(slug).text


def opponent_model_generation(slug: str, generation: int) -> int | None:
    """The generation whose model file the opponent needs at `generation` (None: GNU Go, random, uct:N)."""
    return PlayerSpec.from_slug(slug).generation_at(generation)


def evaluation_nice(cfg: RunConfig) -> int:
    """The nice level of the evaluation and rating jobs: the one whose weight gives such a job
    `evaluate.share` of a core it shares with a loop job (nice 0): w / (w + 1024), the nearest of the levels.
    A share it keeps whatever the loop does (the scheduler divides the core by weight), unlike nice 19's
    leftovers; the loop keeps the rest. On a Slurm cluster each job has cores of its own and the level
    changes nothing."""
    shares = [w / (w + NICE_WEIGHTS[0]) for w in NICE_WEIGHTS]
    return min(range(len(shares)), key=lambda n: abs(shares[n] - cfg.evaluate.share))


def evaluation_nice_at(cfg: RunConfig, generation: int) -> int:
    """The nice level of `generation`'s evaluation and rating jobs: `evaluation_nice` (the held share beside
    the loop), but 0 for the last generation's: after its model no loop job is left to share the cores with,
    and the run's end waits for its rating and matches, not for a mid-run rating still running then."""
    return 0 if generation == cfg.generations else evaluation_nice(cfg)


def evaluation_slots(cfg: RunConfig, generation: int) -> int:
    """How many of the profile's `evaluations` slots a job of `generation` holds: 1, the last generation's 0,
    so that its rating and matches start as its model arrives instead of behind mid-run ratings holding the
    slots (at 48 generations two of them held both for up to 167 s after the last model)."""
    return 0 if generation == cfg.generations else 1


def ladder_start(cfg: RunConfig, generation: int) -> list[str]:
    """What `generation`'s ladder rating starts from (an input of its rule): its own first rating (the same
    model's quick rating, `evaluate.ladder_first_games` games) when the run makes one, else nothing (a search
    from the ladder's middle). Never another generation's result: each rating stands on its own games, and
    no rating waits for another generation's (so they do not run one after another at the run's end)."""
    first = first_rating_file(cfg, generation) if cfg.evaluate.ladder_first_games > 0 else None
    return [first] if first else []


def ladder_options(cfg: RunConfig, generation: int) -> list[str]:
    """`minigo ladder rate` arguments of `generation`'s rating (a list: the rule quotes each with `:q`): the
    model, the board size, the target half-width, the game budget, a seed derived from the run's seed and the
    generation, and `--continue-from` its own first rating when there is one (`ladder_start`: its games count,
    the full rating plays only what it still needs). The last
    generation's rating narrows to `evaluate.ladder_half_width`, the others' to
    `evaluate.ladder_half_width_mid` (the curve's points: cheaper, so that the ratings keep up with the
    loop)."""
    e = cfg.evaluate
    options = [f"gen{generation}", "--board-size", str(cfg.board_size)]
    half_width = e.ladder_half_width if generation == cfg.generations else e.ladder_half_width_mid
    options += ["--target-half-width", repr(float(half_width))]
    options += ["--max-games", str(e.ladder_max_games), "--seed", str(ladder_seed(cfg, generation))]
    for start in ladder_start(cfg, generation):
        options += ["--continue-from", start]
    return options


def first_rating_start(cfg: RunConfig, generation: int) -> list[str]:
    """Where `generation`'s first rating starts (an input of its rule): nothing, a search from the ladder's
    middle; no other generation's rating (each stands on its own games)."""
    return []


def first_rating_options(cfg: RunConfig, generation: int) -> list[str]:
    """`minigo ladder rate` arguments of `generation`'s first rating: `evaluate.ladder_first_games` games,
    `FIRST_RATING_GAMES_PER_RUNG` a rung before it moves on (a quick search: 16 games reach 4 rungs), the full
    rating's target half-width (it stops there if it gets so far), its own seed."""
    e = cfg.evaluate
    options = [f"gen{generation}", "--board-size", str(cfg.board_size)]
    options += ["--target-half-width", repr(float(e.ladder_half_width))]
    options += ["--max-games", str(e.ladder_first_games), "--seed", str(first_rating_seed(cfg, generation))]
    options += [
        "--min-games-per-rung",
        str(FIRST_RATING_GAMES_PER_RUNG),
        "--batch",
        str(FIRST_RATING_GAMES_PER_RUNG),
    ]
    for start in first_rating_start(cfg, generation):
        options += ["--start-from", start]
    return options

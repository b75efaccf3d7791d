"""What the Snakefile asks of the library: the run config, the plan, opponents, the effective config file.

`workflow/rules/common.smk` imports this module and `minigo_core.data.layout` (file names), nothing else
of the library, so the workflow holds no knowledge of Go: every rule calls a `minigo` command.
"""

from __future__ import annotations

import yaml

from minigo_core.base.config import ConfigError, RunConfig, from_dict
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import storage
from minigo_core.data.schedule import (
    evaluation_files,
    final_match,
    generation_outputs,
    match_games,
    opponent_specs,
    selfplay_jobs,
)
from minigo_core.pipeline.plan import DEFAULT_MAX_JOBS, Plan, plan

__all__ = [
    "DEFAULT_MAX_JOBS",
    "WORKFLOW_KEYS",
    "ConfigError",
    "Plan",
    "effective_config_text",
    "evaluate_options",
    "evaluation_files",
    "generation_outputs",
    "opponent_model_generation",
    "opponent_slugs",
    "opponent_text",
    "plan",
    "run_config",
    "selfplay_jobs",
    "write_effective_config",
]

# Workflow-only keys (not part of the run config the library sees); settable with --config KEY=VALUE.
WORKFLOW_KEYS = ("first_generation", "last_generation", "plan_max_jobs")


def split_workflow_keys(config: dict) -> tuple[dict, dict]:
    """Snakemake's `config` -> (the run config's keys, the workflow-only keys)."""
    run = {k: v for k, v in config.items() if k not in WORKFLOW_KEYS}
    return run, {k: config[k] for k in WORKFLOW_KEYS if k in config}


def run_config(config: dict) -> RunConfig:
    """The validated run config of Snakemake's `config` (ConfigError names the key)."""
    return from_dict(split_workflow_keys(config)[0])


def effective_config_text(cfg: RunConfig) -> str:
    """The validated run config as YAML: what every library command reads."""
    header = "# Effective config of this run, written by the workflow; every job reads this file.\n"
    return header + yaml.safe_dump(cfg.to_dict(), sort_keys=False)


def write_effective_config(path: str, text: str) -> None:
    storage.write_text(path, text)


def opponent_slugs(cfg: RunConfig) -> list[str]:
    """The file-name forms of the configured opponents (the `{opponent}` wildcard's values)."""
    return [spec.slug for spec in opponent_specs(cfg)]


def evaluate_options(cfg: RunConfig, generation: int) -> list[str]:
    """Extra `minigo evaluate` arguments of `generation`'s matches (a list: the rule quotes each with `:q`):
    the last generation's final matches play `evaluate.final_games` games without early stop; other
    generations take the config's values (no arguments)."""
    if final_match(cfg, generation):
        return ["--games", str(match_games(cfg, generation)), "--no-early-stop"]
    return []


def opponent_text(slug: str) -> str:
    """The player spec behind an `{opponent}` wildcard value (`gnugo-1` -> `gnugo:1`)."""
    return PlayerSpec.from_slug(slug).text


def opponent_model_generation(slug: str, generation: int) -> int | None:
    """The generation whose model file the opponent needs at `generation` (None: GNU Go, random, uct:N)."""
    return PlayerSpec.from_slug(slug).generation_at(generation)

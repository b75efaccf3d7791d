"""What a generation of a run consists of, from its config alone: the self-play jobs and their games, the
evaluations and their results files, the files that make a generation done, and the first generation that is
not done yet (the frontier).

The workflow's bounded plan (`minigo_core.pipeline.plan`), `minigo status` and the live progress line all read
a run through these functions, so they agree on what "done" means. Finding the frontier costs a few `stat`
calls per finished generation; no directory of game files is listed.
"""

from __future__ import annotations

import os

from minigo_core.base.config import ConfigError, RunConfig, window_size
from minigo_core.base.playerspec import PlayerSpec
from minigo_core.data import layout


def selfplay_generations(cfg: RunConfig) -> range:
    """Generations whose models play self-play: 0 .. G-1 (the last model's games would train nothing)."""
    return range(0, cfg.generations)


def selfplay_model_generation(cfg: RunConfig, generation: int) -> int:
    """The model that plays generation `generation`'s self-play games: `generation - selfplay.model_lag`
    (never below 0). With a lag of 1, games g are played by model g-1 while model g trains (MiniGo's ml_perf
    loop): both need only model g-1 and games g-1, so they run side by side."""
    return max(0, generation - cfg.selfplay.model_lag)


def window_of(cfg: RunConfig, generation: int) -> list[int]:
    """The generations whose games form generation `generation`'s window: the last W of them, W =
    `window_size` (`window.generations`, or `window.generations_schedule` at this generation)."""
    return list(range(max(0, generation - window_size(cfg, generation)), generation))


def last_window(cfg: RunConfig, generation: int) -> int:
    """The last generation whose window reads `generation`'s games: g + W with a fixed window; with a
    schedule, the largest g > generation with g - W(g) <= generation (a window that grows by more than one
    generation reaches back to older games). A generation may be packed once this window is built."""
    most = max(n for _, n in cfg.window.generations_schedule or ((0, cfg.window.generations),))
    return max(
        g for g in range(generation + 1, generation + most + 1) if g - window_size(cfg, g) <= generation
    )


def opponent_specs(cfg: RunConfig, final: bool = True) -> list[PlayerSpec]:
    """Every configured opponent (`evaluate.opponents`, then `evaluate.target`, then with `final` the last
    generation's `evaluate.final_opponents`), duplicates removed."""
    specs: list[PlayerSpec] = []
    extra = cfg.evaluate.final_opponents if final else ()
    for text in (*cfg.evaluate.opponents, cfg.evaluate.target, *extra):
        spec = PlayerSpec.parse(text)
        if spec.kind == "generation" and spec.generation > cfg.generations:
            raise ConfigError(
                f"config key 'evaluate' names opponent {text!r}, but the run has only "
                f"{cfg.generations} generations (config key 'generations')"
            )
        if spec not in specs:
            specs.append(spec)
    return specs if cfg.evaluate.games > 0 else []


def is_evaluated(cfg: RunConfig, generation: int) -> bool:
    """Generations `evaluate.every`, 2 x every, ... and the last one are evaluated (never generation 0),
    except those fewer than `evaluate.quiet_last` generations before the last: a rating started there, beside
    the loop at its share of a core, would end after the last model and lengthen the run's end."""
    if generation == cfg.generations:
        return generation >= 1
    quiet = 0 < cfg.generations - generation < cfg.evaluate.quiet_last
    return generation >= 1 and generation % cfg.evaluate.every == 0 and not quiet


def final_match(cfg: RunConfig, generation: int, spec: PlayerSpec | None = None) -> bool:
    """Whether `generation`'s match against `spec` is a final one, `evaluate.final_games` games (when set)
    without early stop: the last generation's against the target (`evaluate.target`) and
    `evaluate.final_opponents` (and its matches at equal time per move, `equal_time_specs`). Its matches
    against the other `evaluate.opponents` are the regular ones: their games would only lengthen the run's
    end. Without `spec`: whether the generation has final matches at all."""
    if generation != cfg.generations or cfg.evaluate.final_games <= 0:
        return False
    if spec is None:
        return True
    texts = (cfg.evaluate.target, *cfg.evaluate.final_opponents)
    finals = {PlayerSpec.parse(text).opponent_key(generation) for text in texts}
    return spec.opponent_key(generation) in finals


def match_games(cfg: RunConfig, generation: int, spec: PlayerSpec | None = None) -> int:
    """Games of `generation`'s match against `spec`: `evaluate.final_games` for a final match
    (`final_match`), else `evaluate.games`."""
    return cfg.evaluate.final_games if final_match(cfg, generation, spec) else cfg.evaluate.games


def evaluation_specs(cfg: RunConfig, generation: int) -> list[PlayerSpec]:
    """The matches of `generation`: one per distinct opponent (at generation 1 `previous` is `gen0`: one
    match, named after the spec listed first); none for generation 0, none against itself, none for the
    generations `evaluate.every` skips; the last generation also plays `evaluate.final_opponents`."""
    if not is_evaluated(cfg, generation):
        return []
    seen = {f"gen{generation}"}
    specs = []
    for spec in opponent_specs(cfg, final=generation == cfg.generations):
        key = spec.opponent_key(generation)
        if key not in seen:
            seen.add(key)
            specs.append(spec)
    return specs


def equal_time_specs(cfg: RunConfig, generation: int) -> list[PlayerSpec]:
    """The last generation's matches at equal time per move (`evaluate.final_equal_time`, duplicates and the
    generation itself left out): none for other generations, none with evaluation off (`evaluate.games` 0).
    They are played beside the fixed-readout matches (`evaluation_specs`), not instead of them."""
    if generation != cfg.generations or not is_evaluated(cfg, generation) or cfg.evaluate.games <= 0:
        return []
    seen = {f"gen{generation}"}
    specs = []
    for text in cfg.evaluate.final_equal_time:
        spec = PlayerSpec.parse(text)
        if spec.kind == "generation" and spec.generation > cfg.generations:
            raise ConfigError(
                f"config key 'evaluate.final_equal_time' names opponent {text!r}, but the run has only "
                f"{cfg.generations} generations (config key 'generations')"
            )
        key = spec.opponent_key(generation)
        if key not in seen:
            seen.add(key)
            specs.append(spec)
    return specs


def ladder_rated(cfg: RunConfig) -> bool:
    """Whether the run's evaluated models are rated on the fixed Elo ladder: `evaluate.ladder`, evaluation
    on (`evaluate.games` > 0) and a calibrated ladder for the board size in the repository."""
    return cfg.evaluate.ladder and cfg.evaluate.games > 0 and layout.has_ladder(cfg.board_size)


def ladder_file(cfg: RunConfig, generation: int) -> str | None:
    """`generation`'s ladder rating file (`eval/genGGGG/ladder.json`), or None when it has none."""
    if not (is_evaluated(cfg, generation) and ladder_rated(cfg)):
        return None
    return layout.ladder_rating_path(cfg.root, generation)


def first_rating_file(cfg: RunConfig, generation: int) -> str | None:
    """`generation`'s first ladder rating (`eval/genGGGG/ladder_first.json`: `evaluate.ladder_first_games`
    games as soon as its model exists, at the evaluations' held share, so the live line has a fixed-scale
    Elo within minutes), or None: no full rating, `ladder_first_games` 0, or the last generation (its full
    rating comes at once: the run waits for it)."""
    if cfg.evaluate.ladder_first_games <= 0 or generation >= cfg.generations:
        return None
    return layout.ladder_first_rating_path(cfg.root, generation) if ladder_file(cfg, generation) else None


def first_rating_seed(cfg: RunConfig, generation: int) -> int:
    """The seed of `generation`'s first rating: not the full rating's (`ladder_seed`), so the two play
    different games; from the run's seed and the generation alone."""
    return (ladder_seed(cfg, generation) + 104_729) % 2**31


def ladder_seed(cfg: RunConfig, generation: int) -> int:
    """The seed of `generation`'s ladder rating: derived from the run's seed and the generation alone, so a
    rerun plays the same games."""
    return (cfg.seed * 1_000_003 + 7919 * generation + 17) % 2**31


def evaluation_files(cfg: RunConfig, generation: int) -> list[str]:
    """The results files of `generation`'s matches (the last generation's at equal time per move after the
    others), then its first ladder rating and its full one (when the run has them)."""
    files = [layout.eval_path(cfg.root, generation, s.slug) for s in evaluation_specs(cfg, generation)]
    files += [
        layout.equal_time_eval_path(cfg.root, generation, s.slug) for s in equal_time_specs(cfg, generation)
    ]
    ratings = [first_rating_file(cfg, generation), ladder_file(cfg, generation)]
    return files + [f for f in ratings if f]


def evaluation_file(cfg: RunConfig, generation: int, spec: PlayerSpec) -> str | None:
    """The results file holding `generation` against `spec` (shared by specs naming the same opponent)."""
    key = spec.opponent_key(generation)
    for played in evaluation_specs(cfg, generation):
        if played.opponent_key(generation) == key:
            return layout.eval_path(cfg.root, generation, played.slug)
    return None


def generation_outputs(cfg: RunConfig, generation: int) -> list[str]:
    """The files that make `generation` done: its model, its games-complete marker, its evaluations."""
    root = cfg.root
    files = [layout.model_path(root, generation)]
    if generation in selfplay_generations(cfg):
        files.append(layout.complete_marker_path(root, generation))
    return files + evaluation_files(cfg, generation)


def selfplay_jobs(cfg: RunConfig) -> list[range]:
    """The self-play jobs of a generation, as the game indices each plays: `selfplay.games_per_job` (K)
    consecutive games per job, the last job the rest (ceil(games / K) jobs)."""
    games, per_job = cfg.selfplay.games, cfg.selfplay.games_per_job
    return [range(first, min(first + per_job, games)) for first in range(0, games, per_job)]


def selfplay_job_count(cfg: RunConfig) -> int:
    """ceil(selfplay.games / selfplay.games_per_job)."""
    return -(-cfg.selfplay.games // cfg.selfplay.games_per_job)


def jobs_per_generation(cfg: RunConfig) -> int:
    """Jobs one generation adds to the DAG: self-play jobs, games-complete, window, train, evaluations (the
    matches, those at equal time per move, the ladder rating and its first rating); at most, as the last
    generation has them."""
    ratings = int(ladder_rated(cfg)) * (1 + int(cfg.evaluate.ladder_first_games > 0))
    equal_time = len(equal_time_specs(cfg, cfg.generations))
    return selfplay_job_count(cfg) + 3 + len(opponent_specs(cfg)) + equal_time + ratings


def missing_files(paths: list[str]) -> list[str]:
    return [p for p in paths if not os.path.exists(p)]


def frontier(cfg: RunConfig) -> tuple[int, tuple[int, ...]]:
    """The first generation whose model or games are missing, and the older ones missing evaluations.

    Costs a few `stat` calls per finished generation (no directory listing).
    """
    late = []
    for g in range(0, cfg.generations + 1):
        outputs = generation_outputs(cfg, g)
        critical = outputs[:2] if g in selfplay_generations(cfg) else outputs[:1]
        if missing_files(critical):
            return g, tuple(late)
        if missing_files(outputs[len(critical) :]):
            late.append(g)
    return cfg.generations + 1, tuple(late)

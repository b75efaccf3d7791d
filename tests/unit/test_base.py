"""The foundation layer: the player-spec grammar, the run layout's names, the CLI harness's exit codes."""

from __future__ import annotations

import logging

import pytest

from minigo_core.base.command import Command, UsageError
from minigo_core.base.config import ConfigError
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.data import layout


@pytest.mark.parametrize(
    ("text", "kind", "rating_at_5", "generation_at_5", "slug"),
    [
        ("gen0", "generation", "gen0000", 0, "gen0"),
        ("gen12", "generation", "gen0012", 12, "gen12"),
        ("previous", "previous", "gen0004", 4, "previous"),
        ("gnugo:1", "gnugo", "gnugo:1", None, "gnugo-1"),
        ("gnugo:10", "gnugo", "gnugo:10", None, "gnugo-10"),
        ("random", "random", "random", None, "random"),
        ("gtp:/usr/games/gnugo --mode gtp", "gtp", "gtp:/usr/games/gnugo --mode gtp", None, None),
        ("runs/x/models/gen0003.safetensors", "file", "gen0003", None, None),
        ("elsewhere/best.safetensors", "file", "model:best", None, None),
    ],
)
def test_player_specs_parse_to_one_meaning(text, kind, rating_at_5, generation_at_5, slug):
    spec = PlayerSpec.parse(text)
    assert spec.kind == kind
    assert spec.rating_name(5) == rating_at_5
    assert spec.generation_at(5) == generation_at_5
    if slug is not None:
        assert spec.slug == slug
        assert PlayerSpec.from_slug(spec.slug) == spec


def test_previous_names_no_model_at_generation_zero():
    spec = PlayerSpec.parse("previous")
    assert spec.generation_at(0) is None and spec.rating_name(0) is None


@pytest.mark.parametrize("text", ["", "  ", "gnugo:11", "gnugo:x", "gtp:"])
def test_bad_player_specs_say_what_to_write(text):
    with pytest.raises(PlayerSpecError, match="gnugo|player spec"):
        PlayerSpec.parse(text)


@pytest.mark.parametrize("text", ["gtp:gnugo --mode gtp", "model.safetensors", 3, None])
def test_the_config_allows_only_run_relative_specs(text):
    with pytest.raises(PlayerSpecError, match=r"config key 'evaluate.target' = .* allowed: gen0, previous"):
        PlayerSpec.parse_config(text, "evaluate.target")


def test_layout_spells_generations_the_same_for_the_library_and_the_workflow():
    root = "/runs/r"
    assert layout.model_path(root, 7) == "/runs/r/models/gen0007.safetensors"
    pattern = layout.model_path(root, "{generation}")
    assert pattern == "/runs/r/models/gen{generation}.safetensors"
    assert pattern.format(generation="0007") == layout.model_path(root, 7)
    assert layout.game_path(root, "{generation}", "{game}").format(generation="0003", game="00042") == (
        layout.game_path(root, 3, 42)
    )
    assert layout.game_path(root, 3, 42) == "/runs/r/games/gen0003/game00042.arrow"
    assert layout.complete_marker_path(root, 3) == "/runs/r/games/gen0003.complete.json"
    assert layout.selfplay_job_path(root, 3, 2) == "/runs/r/games/gen0003/job00002.json"
    assert layout.selfplay_job_path(root, "{generation}", "{job}").format(generation="0003", job="00002") == (
        layout.selfplay_job_path(root, 3, 2)
    )
    assert layout.shard_path(root, 8, 3) == "/runs/r/window/gen0008/shard003.arrow"
    assert (
        layout.eval_path(root, 8, PlayerSpec.parse("gnugo:1").slug) == "/runs/r/eval/gen0008/vs_gnugo-1.json"
    )


@pytest.mark.parametrize(
    ("raised", "code", "message"),
    [
        (None, 0, ""),
        (UsageError("--n must be positive"), 2, "minigo probe: --n must be positive"),
        (ConfigError("config key 'komi' = -1 is out of range"), 2, "minigo probe: config key 'komi'"),
        (
            FileNotFoundError("model file m.safetensors not found"),
            1,
            "minigo probe: model file m.safetensors",
        ),
    ],
)
def test_the_harness_maps_errors_to_exit_codes_and_one_stderr_line(capsys, raised, code, message):
    def main(args):
        logging.getLogger("minigo_core.jobs.probe").info("working on %d", args.n)
        if raised is not None:
            raise raised
        print("result")

    cmd = Command("probe", "a test command", errors=(OSError,))
    cmd.parser.add_argument("--n", type=int, default=0)
    assert cmd.run(["--n", "3"], main) == code
    out, err = capsys.readouterr()
    assert "minigo probe: working on 3" in err  # diagnostics on stderr, with the command's name
    assert ("result" in out) == (raised is None)  # results on stdout
    assert message in err


def test_the_harness_lets_bugs_show_their_traceback():
    cmd = Command("probe", "a test command", errors=(OSError,))
    with pytest.raises(KeyError):
        cmd.run([], lambda args: {}["missing"])


def test_bad_arguments_exit_2(capsys):
    cmd = Command("probe", "a test command")
    cmd.parser.add_argument("--n", type=int)
    with pytest.raises(SystemExit) as exit_info:
        cmd.run(["--n", "x"], lambda args: 0)
    assert exit_info.value.code == 2
    assert "minigo probe" in capsys.readouterr().err

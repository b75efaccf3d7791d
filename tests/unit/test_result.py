"""The one result string (`game.result`): every spelling it replaced gives the same text as before."""

from __future__ import annotations

import math

import numpy as np
import pytest

from minigo_core.data.gamefile import result_of
from minigo_core.game.result import parse_score, result_string

SCORES = [3.5, -3.5, 0.5, -0.5, 12.0, -12.0, 7, -7, 0, 0.0, -0.0, 100.25, -361.0, 1e-3, np.float64(2.5)]


# The four spellings before there was one, verbatim: the match's and GTP's (from a score), the game file's
# (from its metadata), and the match's forfeits and resignations.
def old_match_string(score: float) -> str:
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"


def old_gamefile_string(metadata: dict) -> str:
    result = metadata["result"]
    winner = int(result["winner"])
    if winner == 0:
        return "0"
    side = "B" if winner > 0 else "W"
    if result.get("resigned"):
        return f"{side}+R"
    score = result.get("score")
    return f"{side}+{abs(score):g}" if score is not None else side + "+"


def old_inline_string(winner: int, ending: str) -> str:
    return ("B+" if winner == 1 else "W+") + ("R" if ending == "resign" else "F")


@pytest.mark.parametrize("score", SCORES)
def test_a_score_reads_as_before(score):
    assert result_string(score) == old_match_string(score)


def test_the_usual_cases():
    assert result_string(3.5) == "B+3.5"
    assert result_string(-12) == "W+12"
    assert result_string(12.0) == "B+12"  # integral scores without a decimal point
    assert result_string(0.0) == result_string(-0.0) == result_string(0) == "0"  # jigo
    assert result_string(winner=1, reason="resign") == "B+R"
    assert result_string(winner=-1, reason="resign") == "W+R"
    assert result_string(winner=1, reason="forfeit") == "B+F"
    assert result_string(winner=-1, reason="forfeit") == "W+F"
    assert result_string(winner=1) == "B+" and result_string(None, winner=-1) == "W+"  # margin unknown
    assert result_string(winner=0, reason="resign") == "0"


@pytest.mark.parametrize("winner", [1, -1, 0])
@pytest.mark.parametrize("resigned", [False, True, None])
@pytest.mark.parametrize("score", [None, 3.5, -3.5, 12.0, -12.0, 0.0, 7])
def test_a_game_file_s_result_reads_as_before(winner, resigned, score):
    result = {"winner": winner, "score": score}
    if resigned is not None:
        result["resigned"] = resigned
    metadata = {"result": result}
    assert result_of(metadata) == old_gamefile_string(metadata)


@pytest.mark.parametrize("winner", [1, -1])
@pytest.mark.parametrize("ending", ["resign", "illegal_move"])
def test_a_match_s_resignations_and_forfeits_read_as_before(winner, ending):
    reason = "resign" if ending == "resign" else "forfeit"
    assert result_string(winner=winner, reason=reason) == old_inline_string(winner, ending)


def test_a_result_needs_a_score_or_a_winner():
    with pytest.raises(ValueError):
        result_string()
    with pytest.raises(ValueError):
        result_string(3.5, reason="timeout")


def test_a_loss_on_time_reads_t():
    assert (
        result_string(winner=1, reason="time") == "B+T" and result_string(winner=-1, reason="time") == "W+T"
    )


@pytest.mark.parametrize("score", [3.5, -3.5, 0.5, 12.0, -361.0, 0.0])
def test_parse_score_reads_a_result_back(score):
    assert parse_score(result_string(score)) == score


def test_parse_score():
    assert parse_score("B+R") == math.inf and parse_score("w+resign") == -math.inf
    assert parse_score("W+F") == -math.inf and parse_score("B+T") == math.inf
    assert parse_score(" jigo ") == 0.0 and parse_score("Draw") == 0.0
    assert parse_score("B+") is None and parse_score("X+3") is None and parse_score("B+x") is None

"""A game analysed by a model: what `minigo inspect GAME --analyse --model M` writes.

Every position of the game (before each move, and the final one) is searched by the model through KataGo's
analysis protocol (`katago_analysis.AnalysisServer`, in process: one query, every turn, the positions batched
across its slots), the same search `minigo analysis` serves to KaTrain. The answers become an SGF of the game
(`game.sgf`, read back by sgfmill) whose every move carries a comment a person reads in Sabaki, KaTrain or
any viewer: who is to move, Black's win rate and score lead, the visits, the model's best move and its
principal variation, the move played, and the position after it; a move that cost its player more than
`MISTAKE` of win rate is marked `mistake?` (and `BM[1]`, SGF's bad move). `SBKV` carries Black's win rate
after each move in percent, which Sabaki draws as its win rate graph.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sgfmill import sgf as sgfmill_sgf

from minigo_core.data.gamefile import GameRecord, result_of
from minigo_core.game import coords, go, sgf
from minigo_core.game.coords import Move
from minigo_core.gtp.katago_analysis import AnalysisServer

MISTAKE = 0.10  # a move that loses its player more win rate than this is marked "mistake?"
COLOR = {go.BLACK: "Black", go.WHITE: "White"}


@dataclass(frozen=True)
class TurnAnalysis:
    """The model's view of the position before move `turn` (`turn == len(moves)`: the final position).

    `winrate` and `score` are Black's (its win probability, its lead in points). A finished game's final
    position (two passes, or the move limit the engine plays to) is not searched (`over`): its winrate is
    the result (1, 0, or 0.5 for a draw) and its score the Tromp-Taylor score."""

    turn: int
    to_play: int  # go.BLACK or go.WHITE
    winrate: float
    score: float
    visits: int
    best: str | None  # GTP vertex or "pass"; None for a finished game's final position
    pv: tuple[str, ...] = ()
    over: bool = False

    def winrate_of(self, color: int) -> float:
        return self.winrate if color == go.BLACK else 1.0 - self.winrate


def query(moves: Sequence[Move], board_size: int, komi: float, visits: int, qid: str = "review") -> dict:
    """The analysis query of a game from the empty board, Black first: every turn, `visits` each."""
    colors = ("B", "W")
    return {
        "id": qid,
        "moves": [[colors[i % 2], coords.to_gtp(m, board_size)] for i, m in enumerate(moves)],
        "rules": "tromp-taylor",
        "komi": float(komi),
        "boardXSize": board_size,
        "boardYSize": board_size,
        "analyzeTurns": list(range(len(moves) + 1)),
        "maxVisits": int(visits),
    }


def analyse_game(
    player: Any, moves: Sequence[Move], board_size: int, komi: float, visits: int, *, slots: int = 8
) -> list[TurnAnalysis]:
    """Every position of the game searched by `player` (a `ModelPlayer`) for `visits` visits: one
    `TurnAnalysis` per turn, 0 (the empty board) to `len(moves)` (the final position)."""
    if int(player.board_size) != board_size:
        n = int(player.board_size)
        raise ValueError(f"the model plays {n}x{n}, the game is {board_size}x{board_size}")
    positions = [go.Position(board_size, komi)]
    for move in moves:
        positions.append(positions[-1].play_move(move))  # IllegalMove (a ValueError) names a bad game
    server = AnalysisServer(player, default_visits=visits, slots=slots, visit_cap=max(visits, 100_000))
    line = json.dumps(query(moves, board_size, komi, visits)) + "\n"
    out = io.BytesIO()
    server.serve(io.BytesIO(line.encode()), out)
    answers: dict[int, dict] = {}
    for text in out.getvalue().decode().splitlines():
        answer = json.loads(text)
        if "error" in answer:
            raise ValueError(f"the analysis failed: {answer['error']}")
        if "turnNumber" in answer and not answer.get("isDuringSearch"):
            answers[int(answer["turnNumber"])] = answer
    final = len(positions) - 1
    return [_turn(t, positions[t], answers.get(t), t == final) for t in range(len(positions))]


def _turn(t: int, position: go.Position, answer: dict | None, final: bool) -> TurnAnalysis:
    if answer is None or answer.get("noResults"):
        if not (final or position.is_game_over()):  # the analysis server searches no finished game
            raise ValueError(f"the analysis gave no answer for the position before move {t}")
        score = float(position.score())
        return TurnAnalysis(t, position.to_play, 1.0 if score > 0 else 0.0 if score < 0 else 0.5, score, 0,
                            None, over=True)  # fmt: skip
    root = answer["rootInfo"]
    infos = sorted(answer.get("moveInfos") or [], key=lambda info: info.get("order", 0))
    best = infos[0] if infos else None
    return TurnAnalysis(
        t,
        position.to_play,
        float(root["winrate"]),
        float(root["scoreLead"]),
        int(root["visits"]),
        best["move"] if best else None,
        tuple(best.get("pv") or ()) if best else (),
    )


def score_text(score: float) -> str:
    """Black's lead as a result string: B+1.3, W+0.5, or 0 for even."""
    if abs(score) < 0.05:
        return "0"
    return f"B+{score:.1f}" if score > 0 else f"W+{-score:.1f}"


def is_mistake(before: TurnAnalysis, after: TurnAnalysis, threshold: float = MISTAKE) -> bool:
    """Whether the move between the two positions lost its player more than `threshold` of win rate."""
    mover = before.to_play
    return before.winrate_of(mover) - after.winrate_of(mover) > threshold


def move_comment(before: TurnAnalysis, after: TurnAnalysis, played: str, threshold: float = MISTAKE) -> str:
    """The comment of a move: the position before it as the model sees it, the move played, the position
    after it, and `mistake?` when the move lost its player more than `threshold` of win rate."""
    mover = before.to_play
    pv = " ".join(before.pv)
    lines = [
        f"{COLOR[mover]} to move: Black {before.winrate:.1%} (score {score_text(before.score)}) after "
        f"{before.visits} visits; best: {before.best} (pv {pv}); played: {played}"
    ]
    if after.over:
        lines.append(f"After {played}: the game is over, {score_text(after.score)} (Tromp-Taylor)")
    else:
        lines.append(f"After {played}: Black {after.winrate:.1%} (score {score_text(after.score)})")
    change = after.winrate_of(mover) - before.winrate_of(mover)
    verdict = f"{COLOR[mover]}'s win rate {change:+.1%}"
    if is_mistake(before, after, threshold):
        verdict += ": mistake?"
    lines.append(verdict)
    return "\n".join(lines)


def analysed_sgf(
    record: GameRecord,
    turns: Sequence[TurnAnalysis],
    *,
    model: str,
    visits: int,
    players: Sequence[str] | None = None,
    game: str | None = None,
    threshold: float = MISTAKE,
) -> bytes:
    """The game `record` as SGF with the analysis: a comment on every move (`move_comment`), `BM[1]` on the
    mistakes, `SBKV` (Black's win rate after the move, percent), and a root comment naming the model."""
    moves, board_size, komi, result = record.moves, record.board_size, record.komi, result_of(record.metadata)
    if len(turns) != len(moves) + 1:
        raise ValueError(f"{len(turns)} analysed positions for {len(moves)} moves: need one more than moves")
    played = [coords.to_gtp(m, board_size) for m in moves]
    comments = [move_comment(turns[i], turns[i + 1], played[i], threshold) for i in range(len(moves))]
    data = sgf.write_sgf(moves, board_size, komi, result, comments=comments, players=players)
    record = sgfmill_sgf.Sgf_game.from_bytes(data)
    root = record.get_root()
    mistakes = 0
    nodes = [node for node in record.get_main_sequence() if node.get_move()[0] is not None]
    for i, node in enumerate(nodes):
        node.set_raw("SBKV", f"{100 * turns[i + 1].winrate:.2f}".encode())
        if is_mistake(turns[i], turns[i + 1], threshold):
            node.set("BM", 1)
            mistakes += 1
    first = turns[0]
    root.set("C", "\n".join([
        f"Analysed by minigo inspect --analyse: model {model}, {visits} visits a position."
        + (f" Game: {game}." if game else ""),
        "Win rates and scores are Black's (score: Black's lead in points). Each move's comment: the position "
        "before it (who is to move, the model's best move and its principal variation), the move played, "
        f"and the position after it; 'mistake?' (BM) marks a move that lost its player more than "
        f"{threshold:.0%} win rate ({mistakes} in this game). SBKV: Black's win rate after each move.",
        f"Empty board: Black {first.winrate:.1%} (score {score_text(first.score)}); best: {first.best}",
    ]))  # fmt: skip
    return record.serialise()

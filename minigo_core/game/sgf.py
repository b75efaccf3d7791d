"""SGF files for people (viewers such as Sabaki or GoGui), written and read with `sgfmill`.

Moves are MiniGo moves (`(row, col)`, row 0 at the top, `None` for pass); sgfmill counts rows from the bottom,
and this module converts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sgfmill import sgf as sgfmill_sgf

from minigo_core.game import go
from minigo_core.game.coords import Move

_COLOR = {go.BLACK: "b", go.WHITE: "w"}


def _to_sgfmill(move: Move, board_size: int) -> tuple[int, int] | None:
    return None if move is None else (board_size - 1 - int(move[0]), int(move[1]))


def _from_sgfmill(point: tuple[int, int] | None, board_size: int) -> Move:
    return None if point is None else (board_size - 1 - point[0], point[1])


def _player_names(players: Mapping[str, str] | Sequence[str] | None) -> tuple[str | None, str | None]:
    if players is None:
        return None, None
    if isinstance(players, Mapping):
        black = players.get("black", players.get("B"))
        white = players.get("white", players.get("W"))
        return black, white
    if len(players) != 2:
        raise ValueError(f"players must be (black, white) or a mapping with 'black'/'white', got {players!r}")
    return players[0], players[1]


def write_sgf(
    moves: Sequence[Move],
    board_size: int,
    komi: float,
    result_str: str,
    comments: Sequence[str | None] | None = None,
    players: Mapping[str, str] | Sequence[str] | None = None,
) -> bytes:
    """An SGF game record: Black moves first, colours alternate; `RE`, `KM`, `RU[Chinese]`, `SZ`.

    `comments[i]` (if given, one entry per move, `None` for none) becomes the `C` property of move i;
    `players` is `(black, white)` or `{"black": ..., "white": ...}` (`PB`/`PW`).
    """
    if comments is not None and len(comments) != len(moves):
        raise ValueError(
            f"comments has {len(comments)} entries for {len(moves)} moves; give one per move (or None)"
        )
    game = sgfmill_sgf.Sgf_game(size=board_size)
    root = game.get_root()
    root.set("KM", float(komi))
    root.set("RU", "Chinese")
    root.set("AP", ("minigo_core", "1"))
    if result_str:
        root.set("RE", result_str)
    black, white = _player_names(players)
    if black:
        root.set("PB", black)
    if white:
        root.set("PW", white)
    color = go.BLACK
    for i, move in enumerate(moves):
        node = game.extend_main_sequence()
        node.set_move(_COLOR[color], _to_sgfmill(move, board_size))
        if comments is not None and comments[i]:
            node.set("C", comments[i])
        color = -color
    return game.serialise()


def _parse(data: bytes):
    try:
        return sgfmill_sgf.Sgf_game.from_bytes(data)
    except ValueError as e:
        raise ValueError(f"not a readable SGF game: {e}") from None


def read_sgf(data: bytes) -> tuple[list[Move], int, float, str]:
    """`(moves, board_size, komi, result_str)` of the main line of an SGF game.

    Raises `ValueError` for an unreadable file, setup stones (handicap), or colours that do not alternate
    starting with Black (use `positions_from_sgf` for those).
    """
    game = _parse(data)
    board_size = game.get_size()
    if game.get_root().has_setup_stones():
        raise ValueError(
            "the SGF game has setup stones (AB/AW/AE); read_sgf handles games from an empty board only"
        )
    moves: list[Move] = []
    expected = "b"
    for node in game.get_main_sequence():
        color, point = node.get_move()
        if color is None:
            continue
        if color != expected:
            raise ValueError(
                f"SGF move {len(moves) + 1} is by {color.upper()}, expected {expected.upper()}: "
                "colours must alternate starting with Black"
            )
        moves.append(_from_sgfmill(point, board_size))
        expected = "w" if expected == "b" else "b"
    root = game.get_root()
    result_str = root.get("RE") if root.has_property("RE") else ""
    komi = game.get_komi()
    return moves, board_size, float(komi), result_str


def positions_from_sgf(data: bytes) -> list[go.Position]:
    """The position before each move of the main line, then the final one.

    Handles setup stones (handicap) and any colour order.
    """
    game = _parse(data)
    board_size = game.get_size()
    komi = float(game.get_komi())
    root = game.get_root()
    position = go.Position(board_size, komi)
    if root.has_setup_stones():
        black, white, empty = root.get_setup_stones()
        board = position.board.copy()
        for stones, value in ((black, go.BLACK), (white, go.WHITE), (empty, go.EMPTY)):
            for point in stones:
                r, c = _from_sgfmill(point, board_size)
                board[r, c] = value
        to_play = go.WHITE if root.has_property("PL") and root.get("PL") == "w" else go.BLACK
        if not root.has_property("PL") and black and not white:
            to_play = go.WHITE  # handicap stones: White moves first
        position = go.Position.from_board(board, to_play=to_play, komi=komi)
    positions = [position]
    for node in game.get_main_sequence():
        color, point = node.get_move()
        if color is None:
            continue
        try:
            position = position.play_move(
                _from_sgfmill(point, board_size), color=go.BLACK if color == "b" else go.WHITE
            )
        except go.IllegalMove as e:
            raise go.IllegalMove(f"SGF move {len(positions)}: {e}") from None
        positions.append(position)
    return positions

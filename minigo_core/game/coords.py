"""Coordinates: MiniGo `(row, col)` moves, flat indices and GTP vertices.

A move is `(row, col)` with row 0 the **top** row and column 0 the left column, or `None` for a pass.
Flat index (policy vectors): `row * N + col`, pass = `N * N`.
GTP vertex: column letter (`ABCDEFGHJKLMNOPQRST`, no `I`) and row number counted from the **bottom**
(`A1` is the bottom-left corner), or `pass`.
"""

from __future__ import annotations

Move = tuple[int, int] | None

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRST"
MAX_BOARD_SIZE = len(GTP_COLUMNS)


def _check_size(board_size: int) -> None:
    if not 1 <= board_size <= MAX_BOARD_SIZE:
        raise ValueError(f"board size {board_size} is not supported (1..{MAX_BOARD_SIZE})")


def _check_on_board(move: tuple[int, int], board_size: int) -> None:
    row, col = move
    if not (0 <= row < board_size and 0 <= col < board_size):
        raise ValueError(f"move {move!r} is off a {board_size}x{board_size} board")


def from_gtp(vertex: str, board_size: int) -> Move:
    """`"D4"` -> `(board_size - 4, 3)`; `"pass"` -> `None` (case-insensitive)."""
    _check_size(board_size)
    text = vertex.strip().upper()
    if text == "PASS":
        return None
    if len(text) < 2 or text[0] not in GTP_COLUMNS or not text[1:].isdigit():
        raise ValueError(f"{vertex!r} is not a GTP vertex (expected e.g. 'D4' or 'pass')")
    col = GTP_COLUMNS.index(text[0])
    row = board_size - int(text[1:])
    move = (row, col)
    _check_on_board(move, board_size)
    return move


def to_gtp(move: Move, board_size: int) -> str:
    """`(row, col)` -> GTP vertex such as `"D4"`; `None` -> `"pass"`."""
    _check_size(board_size)
    if move is None:
        return "pass"
    _check_on_board(move, board_size)
    row, col = move
    return f"{GTP_COLUMNS[col]}{board_size - row}"


def to_flat(move: Move, board_size: int) -> int:
    """`(row, col)` -> `row * N + col`; `None` (pass) -> `N * N`."""
    if move is None:
        return board_size * board_size
    _check_on_board(move, board_size)
    return move[0] * board_size + move[1]


def from_flat(index: int, board_size: int) -> Move:
    """Inverse of `to_flat`: `N * N` -> `None` (pass)."""
    index = int(index)
    n2 = board_size * board_size
    if index == n2:
        return None
    if not 0 <= index < n2:
        raise ValueError(
            f"flat index {index} is out of range for a {board_size}x{board_size} board (0..{n2})"
        )
    return divmod(index, board_size)


def to_sgf(move: Move, board_size: int) -> str:
    """`(row, col)` -> SGF point (`"cd"` = column c, row d counted from the top); pass -> `""`."""
    if move is None:
        return ""
    _check_on_board(move, board_size)
    row, col = move
    return "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[row]

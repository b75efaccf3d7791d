"""GUI analysis over GTP: `lz-analyze`/`kata-analyze` streams read by a client that parses the lines as Leela
Zero's and KataGo's documentation (KataGo's docs/GTP_Extensions.md) describes them, the genmove variants,
GoGui's analyze commands, `kgs-genmove_cleanup`, and the pondering thread's clean stop."""

from __future__ import annotations

import os
import queue
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from minigo_core.base.config import SearchSettings
from minigo_core.game import coords, go
from minigo_core.gtp.analysis import cleanup_move
from minigo_core.gtp.analysis_format import AnalyzeArgsError, AnalyzeRequest, parse_analyze_args
from minigo_core.gtp.server import build_model_server

LZ_INT_FIELDS = {"visits", "winrate", "prior", "lcb", "order"}
KATA_FLOAT_FIELDS = set(
    "utility winrate scoreMean scoreStdev scoreLead scoreSelfplay prior lcb utilityLcb".split()
)
NEW_COMMANDS = (
    "lz-analyze kata-analyze lz-genmove_analyze kata-genmove_analyze kgs-genmove_cleanup "
    "gogui-analyze_commands minigo-ownership minigo-policy kgs-time_settings time_settings time_left"
).split()


def parse_analysis_line(line: str, board_size: int, style: str) -> tuple[list[dict], list[float] | None]:
    """A client's reading of one line: `info` records (key value ... pv MOVES) and the `ownership` floats."""
    tokens = line.split()
    moves: list[dict] = []
    ownership = None
    i = 0
    while i < len(tokens):
        if tokens[i] == "ownership":
            ownership = [float(x) for x in tokens[i + 1 : i + 1 + board_size * board_size]]
            i += 1 + board_size * board_size
            continue
        assert tokens[i] == "info", line
        record: dict = {}
        i += 1
        while i < len(tokens) and tokens[i] not in ("info", "ownership"):
            key = tokens[i]
            if key == "pv":
                j = i + 1
                while j < len(tokens) and tokens[j] not in ("info", "ownership"):
                    j += 1
                record["pv"] = tokens[i + 1 : j]
                i = j
                continue
            value = tokens[i + 1]
            if key == "move":
                record[key] = value
            elif style == "lz" or key in ("visits", "order"):
                assert key in LZ_INT_FIELDS or key in ("visits", "order"), key
                record[key] = int(value)  # Leela Zero: integers (x10000 for winrate, prior, lcb)
            else:
                assert key in KATA_FLOAT_FIELDS, key
                record[key] = float(value)
            i += 2
        moves.append(record)
    return moves, ownership


def check_records(moves: list[dict], board_size: int, style: str) -> None:
    scale = 10000 if style == "lz" else 1.0
    assert moves and [m["order"] for m in moves] == list(range(len(moves)))
    for m in moves:
        coords.from_gtp(m["move"], board_size)  # a vertex of this board
        assert 0 <= m["winrate"] <= scale and 0 <= m["prior"] <= scale and 0 <= m["lcb"] <= m["winrate"]
        assert m["pv"][0] == m["move"] if m["visits"] else True
        for v in m["pv"]:
            coords.from_gtp(v, board_size)
    visits = [m["visits"] for m in moves]
    assert visits == sorted(visits, reverse=True)


class Session:
    """`server.serve` on pipes in a thread; lines read back through a queue."""

    def __init__(self, server) -> None:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        self.to_server = os.fdopen(to_w, "wb", buffering=0)
        self.lines: queue.Queue[str] = queue.Queue()
        self.server = threading.Thread(
            target=server.serve, args=(os.fdopen(to_r, "rb"), os.fdopen(from_w, "wb")), daemon=True
        )
        self.reader = threading.Thread(target=self._read, args=(os.fdopen(from_r, "rb"),), daemon=True)
        self.server.start()
        self.reader.start()

    def _read(self, stream) -> None:
        for raw in stream:
            self.lines.put(raw.decode().rstrip("\n"))

    def send(self, text: str) -> None:
        self.to_server.write((text + "\n").encode())

    def line(self, timeout: float = 10.0) -> str:
        return self.lines.get(timeout=timeout)

    def close(self) -> None:
        self.send("quit")
        self.server.join(timeout=10)
        self.to_server.close()


@pytest.fixture()
def server(tiny_model):
    return build_model_server(tiny_model, SearchSettings(readouts=24, resign_threshold=-1.0))


# ------------------------------------------------------------------------------------------------ arguments


@pytest.mark.parametrize(
    "args, expected",
    [
        (["10"], AnalyzeRequest(None, 0.1)),
        (["b", "25"], AnalyzeRequest(go.BLACK, 0.25)),
        (["W", "interval", "50", "minmoves", "3", "maxmoves", "5"], AnalyzeRequest(go.WHITE, 0.5, 3, 5)),
        (["10", "ownership", "true"], AnalyzeRequest(None, 0.1, ownership=True)),
        (["10", "avoid", "b", "D4,E5", "1", "ownership", "false"], AnalyzeRequest(None, 0.1)),
        ([], AnalyzeRequest(None, 0.0)),
    ],
)
def test_analyze_arguments(args, expected):
    assert parse_analyze_args(args) == expected


@pytest.mark.parametrize(
    "args", [["10", "frobnicate", "1"], ["10", "minmoves"], ["b", "-5"], ["minmoves", "x"]]
)
def test_bad_analyze_arguments(args):
    with pytest.raises(AnalyzeArgsError):
        parse_analyze_args(args)


def test_list_commands_lists_every_new_command(server):
    listed = server.handle_line("list_commands")[2:].split()
    assert set(NEW_COMMANDS) <= set(listed)
    assert all(server.handle_line(f"known_command {c}") == "= true\n\n" for c in NEW_COMMANDS)


# ------------------------------------------------------------------------------------------------ streaming


def _read_stream(session: Session, count: int, style: str, ownership: bool = False) -> None:
    for _ in range(count):
        moves, own = parse_analysis_line(session.line(), 9, style)
        check_records(moves, 9, style)
        if ownership:
            assert own is not None and len(own) == 81 and all(-1 <= x <= 1 for x in own)
        else:
            assert own is None


def _threads_left(before: set[threading.Thread], expected: set[threading.Thread], wait_s: float = 10.0):
    """The threads started since `before` that still run, once they are `expected` or after `wait_s` seconds
    (a thread that is ending is given that long: a deadline, not a race with the scheduler)."""
    deadline = time.monotonic() + wait_s
    while True:
        new = {t for t in threading.enumerate() if t not in before}
        if new == expected or time.monotonic() > deadline:
            return new
        time.sleep(0.02)


def test_analysis_streams_until_the_next_command_and_stops_its_thread(server):
    """A stream runs until the next command; that command is answered only once the pondering thread has
    ended (the empty line that ends the stream, then the answer, and no `minigo-ponder` thread left), and
    the threads the test started are then the only new ones (the server's and the reader's, compared as
    thread objects: other threads of the process do not count). The answer must come within the reader's
    10 s: a stream that does not stop hangs the server, which no loaded machine excuses."""
    before = set(threading.enumerate())
    session = Session(server)
    try:
        session.send("1 play b E5")
        assert session.line() == "=1 " and session.line() == ""
        session.send("2 lz-analyze 10")
        assert session.line() == "=2"
        _read_stream(session, 3, "lz")
        session.send("3 kata-analyze 10 ownership true")
        line = session.line()
        while line.startswith("info"):  # a line already on its way before the command arrived
            line = session.line()
        assert line == ""  # the empty line ends lz-analyze's answer
        assert session.line() == "=3"
        _read_stream(session, 3, "kata", ownership=True)
        session.send("4 name")
        line = session.line()
        while line.startswith("info"):
            line = session.line()
        assert line == "" and session.line() == "=4 MiniGo"  # the stream ended, then the answer
        assert session.line() == ""
        assert not [t for t in threading.enumerate() if t.name == "minigo-ponder"]  # joined before it
        expected = {session.server, session.reader}
        assert _threads_left(before, expected) == expected  # the pondering left no thread behind
        session.send("5 lz-genmove_analyze b 1")
        assert session.line() == "=5"
        line = session.line()
        while line.startswith("info"):
            check_records(parse_analysis_line(line, 9, "lz")[0], 9, "lz")
            line = session.line()
        assert line.startswith("play ") and session.line() == ""
        coords.from_gtp(line.split()[1], 9)
        assert server.position.n == 2  # the move was played
    finally:
        session.close()
    assert not [t for t in threading.enumerate() if t.name == "minigo-ponder"]


def test_an_empty_line_ends_the_analysis_and_quit_during_analysis_leaves_no_thread(server):
    session = Session(server)
    session.send("kata-analyze 5")
    assert session.line() == "="
    _read_stream(session, 1, "kata")
    session.send("")
    line = session.line()
    while line.startswith("info"):
        line = session.line()
    assert line == ""
    session.send("lz-analyze 5")
    assert session.line() == "="
    session.close()  # `quit` while pondering
    assert not session.server.is_alive()
    assert not [t for t in threading.enumerate() if t.name == "minigo-ponder"]


def test_kata_genmove_analyze_without_a_stream_answers_in_one_piece(server):
    response = server.handle_line("7 kata-genmove_analyze b 1 ownership true")
    head, *lines, play, empty, end = response.split("\n")
    assert head == "=7" and play.startswith("play ") and empty == "" and end == ""
    assert lines and all(line.startswith("info") for line in lines)
    moves, own = parse_analysis_line(lines[-1], 9, "kata")
    check_records(moves, 9, "kata")
    assert own is not None and len(own) == 81


# -------------------------------------------------------------------------------------------- GoGui, KGS


def test_gogui_analyze_commands_and_their_gfx(server):
    listed = server.handle_line("gogui-analyze_commands")[2:].strip().split("\n")
    assert listed == ["gfx/Ownership/minigo-ownership", "gfx/Policy heat map/minigo-policy"]
    influence = server.handle_line("minigo-ownership")[2:].split()
    assert influence[0] == "INFLUENCE" and len(influence) == 1 + 2 * 81
    assert all(-1 <= float(x) <= 1 for x in influence[2::2])
    policy = server.handle_line("minigo-policy")[2:].strip().split("\n")
    assert all(line.split()[0] in ("COLOR", "LABEL", "TEXT") for line in policy)
    assert any(line.startswith("COLOR #") for line in policy) and policy[-1].startswith("TEXT pass")


def _stub_analysis(position: go.Position, value: float) -> SimpleNamespace:
    visits = np.zeros(82)
    visits[coords.to_flat((0, 0), 9)] = 5  # A9, an empty corner
    visits[81] = 9  # the pass is the most visited
    prior = np.full(82, 1 / 82)
    return SimpleNamespace(
        board_size=9, root_value=lambda: value, visits_per_move=lambda: visits, prior=lambda: prior
    )


def test_cleanup_captures_while_the_count_disagrees_with_the_model():
    # Black walls off the left side; a White stone sits inside it; White's stones elsewhere outnumber.
    moves = [(r, 3) for r in range(9)]
    board = np.zeros((9, 9), np.int8)
    for r, c in moves:
        board[r, c] = go.BLACK
    board[4, 1] = go.WHITE  # dead inside Black's area
    board[:, 6:] = go.WHITE
    position = go.Position.from_board(board, to_play=go.BLACK, komi=7.5)
    assert position.score() < 0  # the dead stone still counts: Black loses the count
    move = cleanup_move(_stub_analysis(position, 0.6), position)
    assert move == coords.to_flat((0, 0), 9)  # the most visited move other than the pass
    assert cleanup_move(_stub_analysis(position, -0.2), position) is None  # the model thinks it lost
    won = go.Position.from_board(board * -1, to_play=go.BLACK, komi=-7.5)
    assert won.score() * won.to_play > 0 and cleanup_move(_stub_analysis(won, 0.6), won) is None


def test_kgs_genmove_cleanup_answers_a_move(server):
    response = server.handle_line("kgs-genmove_cleanup b")
    assert response.startswith("= ")
    coords.from_gtp(response[2:].strip(), 9)  # a vertex or pass, never resign

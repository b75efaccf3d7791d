"""The GTP server: GTP 2 conformance (the specification's examples, malformed input), and real processes.

The protocol tests drive `GTPServer` in-process with simple players; the last tests run `minigo gtp` as a
subprocess with a tiny model file, from this project's GTP client and against GNU Go.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from minigo_core.game import coords, go, sgf
from minigo_core.gtp.server import GTPServer, clean_line, format_response
from minigo_core.play.players import RESIGN, Player, RandomPlayer

REPO = Path(__file__).resolve().parents[2]
REQUIRED = [
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "showboard",
    "final_score",
    "loadsgf",
]


class ScriptedPlayer(Player):
    """Plays the given GTP vertices in order (then passes); records what it was asked."""

    def __init__(self, vertices: list[str]) -> None:
        self.vertices = list(vertices)
        self.asked: list[go.Position] = []

    def genmove(self, position):
        self.asked.append(position)
        if not self.vertices:
            return None
        v = self.vertices.pop(0)
        return RESIGN if v == "resign" else coords.from_gtp(v, position.board_size)


class BrokenPlayer(Player):
    def genmove(self, position):
        raise RuntimeError("the network fell over")


def session(server: GTPServer, text: str) -> list[str]:
    """Feed lines; return the responses (each still ending with its blank line)."""
    out = []
    for line in text.split("\n"):
        response = server.handle_line(line)
        if response is not None:
            out.append(response)
    return out


def test_specification_example_session():
    """A session like the specification's examples: ids echoed, `=`/`?`, the blank-line terminator."""
    server = GTPServer(ScriptedPlayer(["C3"]), board_size=9)
    responses = session(
        server,
        "1 boardsize 7\n2 clear_board\n3 play black D5\n4 genmove white\n"
        "5 play black C3\n6 play black E2\n7 final_score",
    )
    assert responses[:4] == ["=1 \n\n", "=2 \n\n", "=3 \n\n", "=4 C3\n\n"]
    assert responses[4] == "?5 illegal move\n\n"  # C3 is taken by White's genmove
    assert responses[5] == "=6 \n\n"
    # 7x7: Black D5 and E2, White C3, no territory separated: area count 2 - 1 - komi 7.5.
    assert responses[6] == "=7 W+6.5\n\n"
    assert server.position.board_size == 7 and server.position.n == 3


def test_administrative_commands():
    server = GTPServer(RandomPlayer(), name="MiniGo", version="9.9")
    r = session(
        server,
        "protocol_version\n10 name\nversion\nknown_command genmove\nknown_command frobnicate\nlist_commands",
    )
    assert r[:5] == ["= 2\n\n", "=10 MiniGo\n\n", "= 9.9\n\n", "= true\n\n", "= false\n\n"]
    listed = r[5][2:].split()
    assert set(REQUIRED) <= set(listed)
    for name in listed:
        assert server.handle_line(f"known_command {name}") == "= true\n\n"


def test_preprocessing_comments_blank_lines_control_characters():
    server = GTPServer(RandomPlayer())
    assert server.handle_line("") is None
    assert server.handle_line("   \t  ") is None
    assert server.handle_line("# just a comment") is None
    assert server.handle_line("3 name # trailing comment") == "=3 MiniGo\n\n"
    assert server.handle_line("4\tna\x01me\r") == "=4 MiniGo\n\n"  # tab -> space, control characters dropped
    assert server.handle_line("\x00\x07") is None
    assert clean_line("5 play\tb\x1bD4 # x\r\n") == "5 play bD4"


def test_malformed_and_illegal_input_gets_errors_and_the_server_keeps_going():
    server = GTPServer(RandomPlayer(), board_size=9)
    cases = {
        "1 frobnicate": "?1 unknown command",
        "2 play": "?2 syntax error",
        "3 play black": "?3 syntax error",
        "4 play purple D4": "?4 syntax error",
        "5 play black 44": "?5 syntax error",
        "6 play black J10": "?6 illegal move",  # a vertex, but off a 9x9 board
        "7 boardsize nine": "?7 syntax error",
        "8 boardsize 1": "?8 unacceptable size",
        "9 komi lots": "?9 syntax error",
        "10 genmove": "?10 syntax error",
        "11 genmove purple": "?11 syntax error",
        "12 undo": "?12 cannot undo",
        "13 known_command": "?13 syntax error",
        "14": "?14 syntax error",
        "15 loadsgf /nonexistent/file.sgf": "?15 cannot load file",
        "16 PLAY black D4": "?16 unknown command",  # command names are case sensitive
        "17 time_left black x 0": "?17 syntax error",
        "18 time_left red 10 0": "?18 syntax error",
        "19 time_settings 300 30": "?19 syntax error",
    }
    for command, expected in cases.items():
        assert server.handle_line(command) == expected + "\n\n", command
    assert server.position.n == 0
    responses = session(
        server,
        "20 play B d4\n21 play w D4\n22 play white pass\n23 time_settings 300 30 5\n24 time_left b 280 0",
    )
    assert responses == ["=20 \n\n", "?21 illegal move\n\n", "=22 \n\n", "=23 \n\n", "=24 \n\n"]
    assert server.handle_line("25 name") == "=25 MiniGo\n\n"


def test_suicide_and_ko_are_illegal_moves():
    server = GTPServer(RandomPlayer(), board_size=5)
    # Black surrounds A1's neighbours: White A1 would be suicide.
    assert session(server, "play b A2\nplay b B1\nplay w A1") == ["= \n\n", "= \n\n", "? illegal move\n\n"]
    # A ko: Black D3 captures the White stone on C3; White may not retake at once.
    server2 = GTPServer(RandomPlayer(), board_size=5)
    session(server2, "play b B3\nplay b C2\nplay b C4\nplay w C3\nplay w D2\nplay w D4\nplay w E3")
    assert server2.handle_line("play b D3") == "= \n\n"  # Black captures C3
    assert server2.handle_line("play w C3") == "? illegal move\n\n"  # immediate recapture: ko


def test_genmove_plays_resign_leaves_the_board_and_colours_may_repeat():
    player = ScriptedPlayer(["E5", "resign", "D4"])
    server = GTPServer(player, board_size=9)
    assert server.handle_line("genmove b") == "= E5\n\n"
    assert server.position.board[4, 4] == go.BLACK and server.position.to_play == go.WHITE
    assert server.handle_line("genmove w") == "= resign\n\n"
    assert server.position.n == 1
    # Black again, out of turn: the player is asked with Black to move and the stone is Black's.
    assert server.handle_line("genmove black") == "= D4\n\n"
    assert player.asked[-1].to_play == go.BLACK
    assert server.position.board[5, 3] == go.BLACK


def test_undo_clear_board_and_komi():
    server = GTPServer(RandomPlayer(), board_size=9)
    session(server, "play b D4\nplay w E5\nplay b pass")
    assert server.position.n == 3
    assert session(server, "undo\nundo") == ["= \n\n", "= \n\n"]
    assert server.position.n == 1 and server.position.board[5, 3] == go.BLACK
    assert server.handle_line("komi 0.5") == "= \n\n"
    assert server.position.komi == 0.5 and server.position.n == 1
    assert server.handle_line("final_score") == "= B+80.5\n\n"  # one stone owns the empty board
    assert server.handle_line("undo") == "= \n\n" and server.handle_line("undo") == "? cannot undo\n\n"
    assert server.handle_line("final_score") == "= W+0.5\n\n"
    session(server, "play b D4\nclear_board")
    assert server.position.n == 0 and not server.position.board.any() and server.position.komi == 0.5


def test_showboard_is_one_response_without_empty_lines():
    server = GTPServer(RandomPlayer(), board_size=5)
    session(server, "play b C3\nplay w D4")
    text = server.handle_line("7 showboard")
    assert text.startswith("=7 ") and text.endswith("\n\n")
    body = text[:-2]
    assert "\n\n" not in body
    assert " 3 . . X . . 3" in body and " 4 . . . O . 4" in body


def test_multiline_responses_never_hold_an_empty_line():
    assert format_response(True, 3, "a\n\nb\n") == "=3 a\n \nb\n\n"
    assert format_response(False, None, "oops") == "? oops\n\n"


def test_loadsgf_sets_up_the_position(tmp_path):
    moves = [(2, 2), (6, 6), (2, 6), None, (6, 2)]
    path = tmp_path / "game.sgf"
    path.write_bytes(sgf.write_sgf(moves, 9, 6.5, "B+R"))
    server = GTPServer(RandomPlayer(), board_size=9, fixed_board_size=9)
    assert server.handle_line(f"loadsgf {path}") == "= \n\n"
    expected = go.replay(moves, 9, 6.5)
    assert (server.position.board == expected[-1].board).all() and server.komi == 6.5
    assert server.handle_line(f"loadsgf {path} 3") == "= \n\n"  # the position before move 3
    assert (server.position.board == expected[2].board).all() and server.position.to_play == go.BLACK
    assert server.handle_line("undo") == "= \n\n" and server.position.n == 1
    small = tmp_path / "small.sgf"
    small.write_bytes(sgf.write_sgf([(1, 1)], 7, 7.5, ""))
    assert server.handle_line(f"loadsgf {small}") == "? cannot load file\n\n"  # the model plays 9x9 only
    (tmp_path / "junk.sgf").write_text("(;GM[1]SZ[9];B[zz")
    assert server.handle_line(f"loadsgf {tmp_path / 'junk.sgf'}") == "? cannot load file\n\n"


def test_fixed_board_size_and_internal_errors(capsys):
    server = GTPServer(BrokenPlayer(), board_size=9, fixed_board_size=9)
    assert server.handle_line("boardsize 19") == "? unacceptable size\n\n"
    assert server.handle_line("boardsize 9") == "= \n\n"
    response = server.handle_line("5 genmove b")
    assert response.startswith("?5 internal error: RuntimeError: the network fell over")
    assert "Traceback" not in response and response.count("\n") == 2
    assert "Traceback" in capsys.readouterr().err
    assert server.handle_line("name") == "= MiniGo\n\n"


def test_quit_ends_the_session():
    server = GTPServer(RandomPlayer())
    import io

    out = io.BytesIO()
    status = server.serve(io.BytesIO(b"1 name\n2 quit\n3 name\n"), out)
    assert status == 0 and out.getvalue() == b"=1 MiniGo\n\n=2 \n\n"


# ------------------------------------------------------------------------------------- the real command


def gtp_argv(model: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "minigo_core.cli",
        "gtp",
        "--model",
        model,
        "--backend",
        "torch",
        "--readouts",
        "8",
        *extra,
    ]


def test_minigo_gtp_process_speaks_only_gtp_on_stdout(tiny_model):
    script = (
        "1 protocol_version\n2 boardsize 19\n3 boardsize 9\n4 komi 7.5\n5 play b E5\n6 genmove w\n"
        "garbage in\x02put\n7 play b E5\n\n# comment\n8 showboard\n9 final_score\n10 quit\n"
    )
    proc = subprocess.run(
        gtp_argv(tiny_model), input=script.encode(), capture_output=True, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    responses = out.split("\n\n")[:-1]
    assert out.endswith("\n\n") and len(responses) == 11
    assert all(r[0] in "=?" for r in responses), out
    assert responses[0] == "=1 2" and responses[1] == "?2 unacceptable size" and responses[4] == "=5 "
    assert responses[5].startswith("=6 ") and coords.from_gtp(responses[5][3:], 9) != (4, 4)
    assert responses[6] == "? unknown command" and responses[7] == "?7 illegal move"
    assert responses[10] == "=10 "
    assert "Traceback" not in out


def test_minigo_gtp_plays_a_full_game_against_gnugo(tiny_model, gnugo_path):
    """GNU Go's side of a match: `minigo gtp` as an outside GTP program, refereed by `minigo evaluate`."""
    from minigo_core.play.gtp_program import gnugo_argv
    from minigo_core.play.players import GTPPlayer
    from minigo_core.play.referee import referee_game

    with (
        GTPPlayer(gtp_argv(tiny_model, "--resign-threshold", "-1"), "minigo-gtp") as minigo,
        GTPPlayer(gnugo_argv(0, gnugo_path), "gnugo:0") as gnugo,
    ):
        game = referee_game(gnugo, minigo, 9, 7.5, seeds=(1, 2))
    assert game["ended_by"] == "score", game
    # Both programs count the final position; with the referee's Tromp-Taylor count, all agree on the winner.
    assert set(game["engine_scores"]) == {"minigo-gtp", "gnugo:0"}
    assert game["scores_agree"] is True, game
    assert game["engine_scores"]["minigo-gtp"] == game["result"]  # the GTP server counts Tromp-Taylor too

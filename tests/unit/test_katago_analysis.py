"""KataGo's JSON analysis protocol (`minigo analysis`), read as KataGo's docs/Analysis_Engine.md describes it:
every query field, a whole game analysed in one query, partial answers and `terminate`, the side values are
reported from, the heads at play (ownership and score from the network's heads), and bad input of each kind
answered with an error naming the query while the server goes on serving."""

from __future__ import annotations

import json
import os
import queue
import threading

import numpy as np
import pytest

from minigo_core.base.config import SearchSettings
from minigo_core.game import coords, features, go
from minigo_core.gtp.katago_analysis import AnalysisServer
from minigo_core.gtp.server import build_model_server

N = 9


@pytest.fixture(scope="module")
def aux_model(tmp_path_factory) -> str:
    """A random 9x9 net (1 block of 8 filters) with the ownership and score heads."""
    from minigo_core.nn.model import ModelConfig, random_model, save_model

    path = str(tmp_path_factory.mktemp("aux_model") / "aux.safetensors")
    cfg = ModelConfig(N, 1, 8, 16, "agz", aux_heads=True)
    save_model(path, random_model(cfg, seed=11), {"generation": 0, "test": True})
    return path


def new_server(model: str, **kw) -> AnalysisServer:
    player = build_model_server(model, SearchSettings(readouts=64, resign_threshold=-1.0, search="puct",
                                                      parallel_readouts=4)).player  # fmt: skip
    return AnalysisServer(player, default_visits=32, **kw)


class Session:
    """`server.serve` on pipes in a thread; answers read back as JSON through a queue."""

    def __init__(self, server: AnalysisServer) -> None:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        self.to_server = os.fdopen(to_w, "wb", buffering=0)
        self.answers: queue.Queue[dict] = queue.Queue()
        self.thread = threading.Thread(
            target=server.serve, args=(os.fdopen(to_r, "rb"), os.fdopen(from_w, "wb")), daemon=True
        )
        self.reader = threading.Thread(target=self._read, args=(os.fdopen(from_r, "rb"),), daemon=True)
        self.thread.start()
        self.reader.start()

    def _read(self, stream) -> None:
        for raw in stream:
            line = raw.decode()
            assert "\n" not in line.rstrip("\n"), "one answer a line"
            self.answers.put(json.loads(line))

    def send(self, query: dict | str) -> None:
        text = query if isinstance(query, str) else json.dumps(query)
        self.to_server.write((text + "\n").encode())

    def next(self, timeout: float = 120.0) -> dict:
        return self.answers.get(timeout=timeout)

    def until(self, predicate, timeout: float = 120.0) -> tuple[dict, list[dict]]:
        """The first answer for which `predicate` holds, and every answer before it."""
        seen = []
        while True:
            answer = self.next(timeout)
            if predicate(answer):
                return answer, seen
            seen.append(answer)

    def close(self) -> None:
        self.to_server.close()  # end of input: the server finishes what is queued and exits
        self.thread.join(timeout=120)
        assert not self.thread.is_alive()


def random_game(moves: int, seed: int = 3) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    position, out = go.Position(N), []
    for _ in range(moves):
        legal = np.flatnonzero(position.all_legal_moves()[:-1] & ~position.eyeish(position.to_play).ravel())
        move = divmod(int(rng.choice(legal)), N)
        out.append(["B" if position.to_play == go.BLACK else "W", coords.to_gtp(move, N)])
        position = position.play_move(move)
    return out


def query(qid: str, moves: list, **fields) -> dict:
    return {"id": qid, "moves": moves, "rules": "tromp-taylor", "komi": 7.5, "boardXSize": N, "boardYSize": N,
            **fields}  # fmt: skip


def final(answer: dict) -> bool:
    return "turnNumber" in answer and not answer.get("isDuringSearch", False)


def test_a_40_move_game_in_one_query_answers_every_turn_with_every_field(aux_model):
    s = Session(new_server(aux_model))
    try:
        game = random_game(40)
        s.send(query("game", game, analyzeTurns=list(range(41)), maxVisits=24, includeOwnership=True,
                     includeMovesOwnership=True, includePolicy=True, includePVVisits=True))  # fmt: skip
        answers = {}
        while len(answers) < 41:
            a = s.next()
            assert "error" not in a and "warning" not in a, a
            if final(a):
                assert a["turnNumber"] not in answers, "one final answer a turn"
                answers[a["turnNumber"]] = a
        position = go.Position(N)
        for turn in range(41):
            a = answers[turn]
            assert a["id"] == "game" and a["isDuringSearch"] is False
            root = a["rootInfo"]
            assert root["visits"] >= 24 and 0 <= root["winrate"] <= 1 and isinstance(root["scoreLead"], float)
            assert root["currentPlayer"] == ("B" if position.to_play == go.BLACK else "W")
            assert len(root["thisHash"]) == 32 and len(root["symHash"]) == 32
            infos = a["moveInfos"]
            assert [m["order"] for m in infos] == list(range(len(infos)))
            assert (
                sum(m["visits"] for m in infos) == root["visits"] - 1 or sum(m["visits"] for m in infos) > 0
            )
            legal = position.all_legal_moves()
            for m in infos:
                move = coords.from_gtp(m["move"], N)
                assert legal[N * N if move is None else coords.to_flat(move, N)]
                assert 0 <= m["winrate"] <= 1 and 0 <= m["prior"] <= 1
                for key in (
                    "scoreLead",
                    "scoreMean",
                    "scoreSelfplay",
                    "scoreStdev",
                    "utility",
                    "lcb",
                    "utilityLcb",
                ):
                    assert isinstance(m[key], float), key
                if m["visits"]:
                    assert m["pv"][0] == m["move"] and len(m["pvVisits"]) == len(m["pv"])
                    assert m["pvVisits"][0] == m["visits"]
                assert len(m["ownership"]) == N * N
            assert len(a["ownership"]) == N * N and all(-1 <= v <= 1 for v in a["ownership"])
            policy = a["policy"]
            assert len(policy) == N * N + 1
            assert all((p >= 0) == bool(ok) for p, ok in zip(policy, legal, strict=True))
            assert abs(sum(p for p in policy if p >= 0) - 1) < 1e-4
            if turn < 40:
                colour, vertex = game[turn]
                position = position.play_move(coords.from_gtp(vertex, N))
    finally:
        s.close()


def test_partial_answers_then_terminate_ends_the_search_with_a_final_answer(aux_model):
    s = Session(new_server(aux_model))
    try:
        s.send(query("long", random_game(6), maxVisits=100_000, reportDuringSearchEvery=0.05))
        s.send(query("queued", random_game(8), maxVisits=100_000))  # waits in the queue behind nothing: slots
        partial, _ = s.until(lambda a: a.get("id") == "long" and a.get("isDuringSearch"))
        second, _ = s.until(lambda a: a.get("id") == "long" and a.get("isDuringSearch"))
        assert second["rootInfo"]["visits"] >= partial["rootInfo"]["visits"]
        s.send({"id": "t1", "action": "terminate", "terminateId": "long"})
        echo, _ = s.until(lambda a: a.get("id") == "t1")
        assert echo == {"id": "t1", "action": "terminate", "terminateId": "long"}
        last, _ = s.until(lambda a: a.get("id") == "long" and final(a))
        assert 0 < last["rootInfo"]["visits"] < 100_000 and last["moveInfos"]
        s.send({"id": "t2", "action": "terminate", "terminateId": "queued", "turnNumbers": [8]})
        done, _ = s.until(lambda a: a.get("id") == "queued" and final(a))
        assert done.get("noResults") or done["rootInfo"]["visits"] < 100_000
    finally:
        s.close()


def test_a_terminated_query_that_never_started_answers_no_results(aux_model):
    server = new_server(aux_model)
    server.handle_line(json.dumps(query("q", [], maxVisits=10)))  # not serving: queued, nothing searches
    server.handle_line(json.dumps({"id": "t", "action": "terminate", "terminateId": "q"}))
    answers = [json.loads(line) for line in server.lines]
    assert {"id": "q", "isDuringSearch": False, "noResults": True, "turnNumber": 0} in answers
    assert answers[-1] == {"id": "t", "action": "terminate", "terminateId": "q"}


def test_actions_query_version_and_clear_cache_echo_the_query(aux_model):
    server = new_server(aux_model)
    server.handle_line('{"id":"v","action":"query_version"}')
    server.handle_line('{"id":"c","action":"clear_cache"}')
    version, cleared = (json.loads(line) for line in server.lines)
    assert version["id"] == "v" and version["action"] == "query_version" and version["version"]
    assert "git_hash" in version
    assert cleared == {"id": "c", "action": "clear_cache"}


BAD = [
    ("{not json", None, None),
    ("[1, 2]", None, None),
    ('{"moves": []}', None, "id"),
    (json.dumps({"id": "x", "moves": [], "rules": "tromp-taylor", "boardYSize": 9}), "x", "boardXSize"),
    (json.dumps(query("x", [], boardXSize=19, boardYSize=19)), "x", "boardXSize"),
    (json.dumps(query("x", [["B", "E5"], ["W", "E5"]])), "x", "moves"),
    (json.dumps(query("x", [["B", "Z99"]])), "x", "moves"),
    (json.dumps(query("x", [["Q", "E5"]])), "x", "moves"),
    (json.dumps(query("x", [], rules="frobnicate")), "x", "rules"),
    (json.dumps(query("x", [], komi=7.3)), "x", "komi"),
    (json.dumps(query("x", [], analyzeTurns=[3])), "x", "analyzeTurns"),
    (json.dumps(query("x", [], maxVisits=0)), "x", "maxVisits"),
    (json.dumps(query("x", [], includeOwnership="yes")), "x", "includeOwnership"),
    (
        json.dumps(query("x", [], overrideSettings={"reportAnalysisWinratesAs": "GREEN"})),
        "x",
        "overrideSettings",
    ),
    (json.dumps(query("x", [["B", "A1"]], initialStones=[["B", "A1"]])), "x", "moves"),
    ('{"id":"x","action":"frobnicate"}', "x", "action"),
    ('{"id":"x","action":"terminate"}', "x", "terminateId"),
]


@pytest.mark.parametrize("line, qid, field_name", BAD)
def test_bad_input_gets_an_error_naming_the_query_and_the_server_goes_on(aux_model, line, qid, field_name):
    s = Session(new_server(aux_model))
    try:
        s.send(line)
        error = s.next()
        assert "error" in error and error["error"], error
        assert error.get("id") == qid and error.get("field") == field_name
        s.send(query("after", [["B", "E5"]], maxVisits=8))  # still serving
        answer, before = s.until(lambda a: a.get("id") == "after" and final(a))
        assert answer["moveInfos"] and not before
    finally:
        s.close()


@pytest.mark.parametrize(
    "fields, warned",
    [
        ({"frobnicate": 1}, "frobnicate"),
        ({"rules": "japanese"}, "rules"),
        ({"rules": {"scoringRule": "TERRITORY", "koRule": "SIMPLE"}}, "rules"),
        ({"avoidMoves": [{"player": "W", "moves": ["E5"], "untilDepth": 3}]}, "avoidMoves"),
        ({"overrideSettings": {"wideRootNoise": 0.04}}, "overrideSettings"),
    ],
)
def test_unknown_fields_and_other_rules_are_warnings_and_the_query_is_answered(aux_model, fields, warned):
    server = new_server(aux_model)
    server.handle_line(json.dumps({**query("w", [["B", "E5"]], maxVisits=8), **fields}))
    answers = [json.loads(line) for line in server.lines]
    assert [a["field"] for a in answers if "warning" in a] == [warned]
    assert all(a["id"] == "w" for a in answers) and not any("error" in a for a in answers)
    assert server._queue, "the query is queued for analysis despite the warning"


def test_tromp_taylor_rules_need_no_warning(aux_model):
    server = new_server(aux_model)
    server.handle_line(json.dumps(query("w", [], maxVisits=8)))
    assert server.lines == []


def heads(model: str, position: go.Position) -> tuple[np.ndarray, float]:
    """The network's ownership (mover's view) and score lead (mover's view) of `position`."""
    from minigo_core.nn import fused

    net = fused.load(model)
    h = net.predict_all(features.extract_batch([position], net.cfg.feature_set))
    return h.ownership[0], float(h.score[0])


@pytest.mark.parametrize("report_as", ["BLACK", "WHITE", "SIDETOMOVE"])
def test_ownership_and_score_lead_are_the_networks_heads_from_the_side_asked(aux_model, report_as):
    moves = random_game(7)  # White to move
    position = go.Position(N)
    for _, vertex in moves:
        position = position.play_move(coords.from_gtp(vertex, N))
    own_mover, score_mover = heads(aux_model, position)
    s = Session(new_server(aux_model))
    try:
        overrides = {"reportAnalysisWinratesAs": report_as}
        s.send(query("h", moves, maxVisits=16, includeOwnership=True, overrideSettings=overrides))
        a, _ = s.until(final)
    finally:
        s.close()
    side = {"BLACK": -1.0, "WHITE": 1.0, "SIDETOMOVE": 1.0}[report_as]  # White is to move
    np.testing.assert_allclose(a["ownership"], side * own_mover, atol=1e-5)
    assert a["rootInfo"]["scoreLead"] == pytest.approx(side * score_mover, abs=1e-4)
    assert a["rootInfo"]["currentPlayer"] == "W"


def test_the_side_asked_flips_winrates_of_the_same_search(aux_model):
    moves = random_game(5)  # White to move
    out = {}
    for side in ("BLACK", "SIDETOMOVE"):
        server = new_server(aux_model)
        s = Session(server)
        try:
            s.send(query("s", moves, maxVisits=32, overrideSettings={"reportAnalysisWinratesAs": side}))
            out[side], _ = s.until(final)
        finally:
            s.close()
    black, mover = out["BLACK"], out["SIDETOMOVE"]
    assert black["rootInfo"]["visits"] == mover["rootInfo"]["visits"]  # the same deterministic search
    assert black["rootInfo"]["winrate"] == pytest.approx(1 - mover["rootInfo"]["winrate"])
    for b, m in zip(black["moveInfos"], mover["moveInfos"], strict=True):
        assert b["move"] == m["move"] and b["winrate"] == pytest.approx(1 - m["winrate"])
        assert b["scoreLead"] == pytest.approx(-m["scoreLead"])


def test_set_up_stones_and_white_first_are_searched_by_the_reference(aux_model):
    s = Session(new_server(aux_model))
    try:
        s.send(query("stones", [["W", "C3"]], initialStones=[["B", "E5"], ["B", "D4"]], maxVisits=8))
        a, before = s.until(final)
        assert a["id"] == "stones" and a["rootInfo"]["currentPlayer"] == "B" and a["moveInfos"], before
        s.send(query("white", [], initialPlayer="W", maxVisits=8))
        b, _ = s.until(final)
        assert b["rootInfo"]["currentPlayer"] == "W" and b["moveInfos"]
    finally:
        s.close()


def test_a_finished_game_is_answered_and_the_server_goes_on(aux_model):
    s = Session(new_server(aux_model))
    try:
        passes = [["B", "pass"], ["W", "pass"]]
        s.send(query("over", passes, maxVisits=8))  # replayed by the compiled searcher: nothing to search
        s.send(query("over-stones", passes, initialStones=[["B", "E5"]], maxVisits=8))  # the reference's way
        for qid in ("over", "over-stones"):
            a, _ = s.until(lambda a, qid=qid: a.get("id") == qid and final(a))
            assert a.get("noResults") or a["moveInfos"] == []
        s.send(query("after", [["B", "E5"]], maxVisits=8))
        answer, _ = s.until(lambda a: a.get("id") == "after" and final(a))
        assert answer["moveInfos"]
    finally:
        s.close()


def test_avoid_and_allow_moves_keep_the_search_off_them_at_the_root(aux_model):
    s = Session(new_server(aux_model))
    try:
        avoid = [{"player": "B", "moves": ["E5", "D4", "pass"], "untilDepth": 1}]
        s.send(query("avoid", [], maxVisits=200, avoidMoves=avoid, includePolicy=True))
        a, _ = s.until(final)
        shown = {m["move"] for m in a["moveInfos"]}
        assert shown and not shown & {"E5", "D4", "pass"}
        assert (
            a["policy"][coords.to_flat(coords.from_gtp("E5", N), N)] > 0
        )  # the network's prior is still told
        allow = [{"player": "B", "moves": ["C3", "G7"], "untilDepth": 1}]
        s.send(query("allow", [], maxVisits=64, allowMoves=allow))
        b, _ = s.until(final)
        assert {m["move"] for m in b["moveInfos"]} == {"C3", "G7"}
        assert sum(m["visits"] for m in b["moveInfos"]) >= 63
        s.send(query("free", [], maxVisits=64))  # the same slot, no rule: every move again (a fresh tree)
        c, _ = s.until(final)
        assert len(c["moveInfos"]) > 2
        s.send(query("bad", [], avoidMoves=[{"player": "B", "moves": ["Z42"], "untilDepth": 1}]))
        d, _ = s.until(lambda a: a.get("id") == "bad")
        assert d["field"] == "avoidMoves" and "error" in d
    finally:
        s.close()

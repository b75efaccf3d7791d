"""KaTrain 1.20's own engine client (`katrain.core.engine.KataGoEngine`, a "custom" engine whose `altcommand`
is `minigo analysis --model M`) against the analysis server: its reader and writer threads, its query
builder (`request_analysis` on a real KaTrain `GameNode` of a 9x9 game, parsed from SGF as KaTrain loads a
game), its ids (`QUERY:N`), its `terminate` and its pondering (`stop_pondering`), and the node's own
`set_analysis`, as KaTrain's `GameNode.analyze` calls it, on the answers.

KaTrain imports kivy; the environment set before the import keeps kivy from parsing pytest's argv, writing
logs or a config into $HOME, and taking over sys.stderr (KIVY_LOG_MODE=PYTHON). Without katrain the tests
skip, except under CI=true, where they fail (`pip install -e '.[test]'` installs it).
"""

from __future__ import annotations

import ast
import copy
import importlib
import importlib.metadata
import json
import shlex
import sys
import threading
import time
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from minigo_core.base.config import load_config
from minigo_core.nn.model import ModelConfig, random_model, save_model

pytestmark = pytest.mark.slow  # about 5 s on 2 cores: three servers' processes, each searching for about 1 s

REPO = Path(__file__).resolve().parents[2]
KATRAIN_VERSION = "1.20.0"  # pyproject's `test` extra pins it
WAIT_S = 120.0  # generous: only a hung analysis server waits this long
N = 9
GTP_COLUMNS = "ABCDEFGHJ"
SGF = "(;GM[1]FF[4]CA[UTF-8]SZ[9]KM[7.5]RU[tromp-taylor];B[ee];W[cc];B[gc];W[cf])"
OVERRIDE_SETTINGS_IGNORED = {"wideRootNoise"}  # what KaTrain sends that the analysis server does not act on


@pytest.fixture(scope="module")
def katrain(tmp_path_factory, unavailable) -> ModuleType:
    """`katrain.core`, imported with kivy kept off $HOME, argv and sys.stderr."""
    kivy_home = tmp_path_factory.mktemp("kivy_home")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in (("KIVY_NO_ARGS", "1"), ("KIVY_NO_CONSOLELOG", "1"), ("KIVY_NO_FILELOG", "1"),
                            ("KIVY_LOG_MODE", "PYTHON"), ("KIVY_HOME", str(kivy_home))):  # fmt: skip
            mp.setenv(name, value)
        try:
            version = importlib.metadata.version("katrain")
            core = importlib.import_module("katrain.core")
            for name in ("engine", "game", "game_node", "constants"):
                importlib.import_module(f"katrain.core.{name}")
        except ImportError as exc:  # PackageNotFoundError is one
            unavailable(f"KaTrain is not installed ({exc}); `pip install -e '.[test]'` installs it")
        if version != KATRAIN_VERSION:
            unavailable(f"KaTrain {version} is installed; these tests are of KaTrain {KATRAIN_VERSION}")
        yield core


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> Path:
    """A random model of the run's default shape (9x9, with the ownership and score heads)."""
    cfg = ModelConfig.from_run(load_config(str(REPO / "config.yaml")))
    assert cfg.board_size == N and cfg.aux_heads
    path = tmp_path_factory.mktemp("katrain_model") / "model.mgz"
    save_model(str(path), random_model(cfg, seed=11), {"generation": 0, "seed": 11})
    return path


class KaTrainApp:
    """What KataGoEngine needs of KaTrain's app: `log(message, level)`, `katrain(event, *args)` (the engine's
    popups: `engine_recovery_popup`) and `update_state()`; all recorded."""

    def __init__(self, constants: ModuleType) -> None:
        self.constants = constants
        self.lock = threading.Lock()
        self.logs: list[tuple[float, str]] = []
        self.events: list[tuple] = []
        self.updates = 0

    def log(self, message, level=0) -> None:
        with self.lock:
            self.logs.append((level, str(message)))

    def __call__(self, event, *args) -> None:
        with self.lock:
            self.events.append((event, *args))

    def update_state(self) -> None:
        with self.lock:
            self.updates += 1

    def errors(self) -> list[str]:
        with self.lock:
            return [m for level, m in self.logs if level == self.constants.OUTPUT_ERROR]

    def warnings(self) -> list[dict]:
        """The analysis server's warnings: KaTrain's reader logs each as `{...} received from KataGo`."""
        with self.lock:
            lines = [m for _, m in self.logs if m.startswith("{'warning'")]
        return [ast.literal_eval(m.removesuffix(" received from KataGo")) for m in lines]


@pytest.fixture
def engine(katrain, model_path):
    """KaTrain's engine on `minigo analysis --model M`, configured as KaTrain's own config.json configures it
    but for the custom command; shut down (and its process gone) after the test."""
    from katrain.core import constants
    from katrain.core.engine import KataGoEngine

    config = json.loads(resources.files("katrain").joinpath("config.json").read_text())["engine"]
    # As a user writes it, without `exec`: KaTrain starts a custom command with shell=True and ends it with
    # terminate(), which a /bin/sh that does not exec the command (dash, Debian's and Ubuntu's) takes alone;
    # `minigo analysis` ends with its parent (preempt.end_with_parent), so shutdown() does not wait forever.
    command = (f"{shlex.quote(sys.executable)} -m minigo_core.cli analysis "
               f"--model {shlex.quote(str(model_path))} --threads 1")  # fmt: skip
    config.update(backend="custom", altcommand=command)
    app = KaTrainApp(constants)
    eng = KataGoEngine(app, config)
    process = eng.katago_process
    assert process is not None, app.logs
    try:
        yield eng, app
    finally:
        stopper = threading.Thread(target=eng.shutdown, kwargs={"finish": False}, daemon=True)
        stopper.start()
        stopper.join(60)
        hung = stopper.is_alive()
        try:
            process.wait(timeout=30)
        except Exception:  # noqa: BLE001 - never leave the server's process behind
            process.kill()
            process.wait()
            raise
        assert not hung, "KataGoEngine.shutdown(finish=False) did not return"
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()


def game_node(katrain: ModuleType):
    """The last node of a 9x9 game with four moves, as KaTrain reads an SGF file (`KaTrainSGF`)."""
    from katrain.core.game import KaTrainSGF

    node = KaTrainSGF.parse_sgf(SGF)
    while node.children:
        node = node.children[0]
    assert node.board_size == (N, N) and node.komi == 7.5 and node.next_player == "B"
    return node


def is_vertex(text: str) -> bool:
    return text == "pass" or (
        len(text) >= 2 and text[0] in GTP_COLUMNS and text[1:].isdigit() and 1 <= int(text[1:]) <= N
    )


class Answers:
    """The callback of a query: every answer KaTrain passes on, the final one awaited."""

    def __init__(self, node=None) -> None:
        self.node = node
        self.lock = threading.Lock()
        self.answers: list[tuple[dict, bool]] = []
        self.errors: list[dict] = []
        self.final = threading.Event()
        self.partials = threading.Semaphore(0)

    def __call__(self, analysis: dict, partial_result: bool) -> None:
        with self.lock:
            self.answers.append((copy.deepcopy(analysis), partial_result))
        if self.node is not None:  # what GameNode.analyze's callback does with it
            self.node.set_analysis(analysis, partial_result=partial_result)
        if partial_result:
            self.partials.release()
        else:
            self.final.set()

    def error(self, analysis: dict) -> None:
        with self.lock:
            self.errors.append(analysis)
        self.final.set()

    def wait_partials(self, count: int) -> None:
        for _ in range(count):
            assert self.partials.acquire(timeout=WAIT_S), f"no partial answer in {WAIT_S} s: {self.answers}"

    def wait_final(self) -> dict:
        assert self.final.wait(WAIT_S), f"no final answer in {WAIT_S} s: {self.answers}"
        assert not self.errors, self.errors
        with self.lock:
            finals = [a for a, partial in self.answers if not partial]
        assert len(finals) == 1, self.answers
        return finals[0]


def check_answer(answer: dict, policy: bool = True) -> None:
    """An answer KaTrain shows: candidate moves with visits, winrates and PVs, the root, the ownership."""
    infos = answer["moveInfos"]
    assert infos, answer
    for info in infos:
        assert isinstance(info["visits"], int) and info["visits"] >= 1, info
        assert 0.0 <= info["winrate"] <= 1.0, info
        assert isinstance(info["scoreLead"], float) and isinstance(info["prior"], float), info
        assert is_vertex(info["move"]), info
        pv = info["pv"]
        assert isinstance(pv, list) and pv and pv[0] == info["move"], info
        assert all(is_vertex(v) for v in pv), info
    assert sorted(info["order"] for info in infos) == list(range(len(infos)))
    root = answer["rootInfo"]
    assert isinstance(root["visits"], int) and root["visits"] >= 1, root
    assert 0.0 <= root["winrate"] <= 1.0 and isinstance(root["scoreLead"], float), root
    assert root["currentPlayer"] == "B", root
    ownership = answer["ownership"]
    assert len(ownership) == N * N and all(isinstance(v, float) and -1.0 <= v <= 1.0 for v in ownership)
    if policy:
        assert len(answer["policy"]) == N * N + 1, len(answer["policy"])
        assert all(p == -1.0 or 0.0 <= p <= 1.0 for p in answer["policy"])  # -1: illegal
        legal = [p for p in answer["policy"] if p >= 0]
        assert abs(sum(legal) - 1.0) < 1e-3, sum(legal)


def check_warnings(app: KaTrainApp) -> None:
    """Whatever the analysis server warned about is only what KaTrain sends that it does not act on."""
    for warning in app.warnings():
        assert warning["field"] in ("overrideSettings", "maxVisits"), warning
        if warning["field"] == "overrideSettings":
            assert any(f"'{k}'" in warning["warning"] for k in OVERRIDE_SETTINGS_IGNORED), warning


def test_katrain_analyses_a_9x9_game_node(katrain, engine):
    """KaTrain's own query for a node of a 9x9 game (`request_analysis`: rules, komi, moves, ownership, the
    moves' ownership, policy, maxTime, wideRootNoise) answered once, in full, and stored by the node."""
    eng, app = engine
    node = game_node(katrain)
    answers = Answers(node)
    eng.request_analysis(node, answers, error_callback=answers.error, visits=40)
    answer = answers.wait_final()
    check_answer(answer)
    assert answer["id"].startswith("QUERY:") and answer["turnNumber"] == 4
    assert all(len(info["ownership"]) == N * N for info in answer["moveInfos"])  # includeMovesOwnership
    # the node took it as KaTrain's GUI shows it
    assert node.analysis_complete and node.root_visits == answer["rootInfo"]["visits"]
    assert node.candidate_moves and node.candidate_moves[0]["move"] == answer["moveInfos"][0]["move"]
    assert len(node.ownership) == N * N and len(node.policy) == N * N + 1
    assert node.policy_ranking[0][0] >= 0
    assert eng.is_idle()
    assert app.errors() == [] and app.events == [], (app.errors(), app.events)
    check_warnings(app)


def test_katrain_partial_answers_and_terminate(katrain, engine):
    """A query with `reportDuringSearchEvery` (KaTrain's `report_every`) and visits it cannot reach soon gives
    partial answers; KaTrain's `terminate_query` of it (results kept) ends it with the final answer."""
    eng, app = engine
    node = game_node(katrain)
    answers = Answers()
    visits = 100_000
    eng.request_analysis(node, answers, error_callback=answers.error, visits=visits, time_limit=False,
                         report_every=0.1)  # fmt: skip
    answers.wait_partials(2)
    with answers.lock:
        partial = answers.answers[0][0]
    query_id = partial["id"]
    assert query_id.startswith("QUERY:") and partial["isDuringSearch"] is True
    check_answer(partial)
    eng.terminate_query(query_id, ignore_further_results=False)
    final = answers.wait_final()
    assert final["id"] == query_id and final["isDuringSearch"] is False
    check_answer(final)
    assert final["rootInfo"]["visits"] < visits  # the terminate ended it
    with answers.lock:
        partials = [a for a, partial in answers.answers if partial]
        assert answers.answers[-1][1] is False  # nothing after the final answer
    assert len(partials) >= 2
    assert all(a["id"] == query_id and a["isDuringSearch"] is True for a in partials)
    seen = [a["rootInfo"]["visits"] for a in partials] + [final["rootInfo"]["visits"]]
    assert seen == sorted(seen), seen  # the search went on between the reports
    assert eng.is_idle()
    assert app.errors() == [] and app.events == [], (app.errors(), app.events)
    check_warnings(app)


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not in {WAIT_S} s"
        time.sleep(0.05)


def test_katrain_pondering_ends_with_stop_pondering(katrain, engine):
    """KaTrain's continuous analysis (`GameNode.analyze(ponder=True)`: maxVisits 10,000,000, over the
    server's cap, and a report every 0.25 s, into the node) ended by `stop_pondering`'s terminate."""
    eng, app = engine
    node = game_node(katrain)
    node.analyze(eng, ponder=True)
    wait_for(lambda: node.analysis_exists, "a partial answer of the pondering")
    assert not node.analysis_complete
    with eng.thread_lock:
        assert eng.ponder_query is not None and eng.ponder_query["maxVisits"] == 10_000_000
    eng.stop_pondering()
    wait_for(lambda: node.analysis_complete, "the final answer after stop_pondering")
    assert 1 <= node.root_visits < 10_000_000
    assert len(node.ownership) == N * N and node.candidate_moves
    wait_for(eng.is_idle, "the engine idle")
    assert app.errors() == [] and app.events == [], (app.errors(), app.events)
    check_warnings(app)
    assert any(w["field"] == "maxVisits" for w in app.warnings()), app.warnings()  # over the cap: it says so

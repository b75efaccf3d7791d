"""KataGo's JSON analysis protocol serving a model: what `minigo analysis --model M` answers on stdin/stdout.

The protocol is KataGo's (its docs/Analysis_Engine.md): one JSON query a line in, one JSON answer a line out,
asynchronous. A query names a game (`moves`, `initialStones`, `initialPlayer`, `rules`, `komi`,
`boardXSize`/`boardYSize`) and the turns to analyse (`analyzeTurns`, default the last); each turn is answered
once with `isDuringSearch: false` (`moveInfos`, `rootInfo`, `ownership`, `policy`, `turnNumber`), after
partial answers every `reportDuringSearchEvery` seconds if asked. Actions: `query_version`, `clear_cache`,
`terminate` (a terminated turn answers what it has, or `noResults` if it never started). A bad query gets
`{"error", "field", "id"}` and the server goes on; an unknown field, or a setting this server does not act
on, a `warning`. Values are from the side `reportAnalysisWinratesAs` says (BLACK by default, as KataGo's
analysis config; WHITE; SIDETOMOVE).

The search is the player's (the GTP server's: `model_player.ModelPlayer`), on the compiled searcher: up to
`slots` positions searched at once, one tree each, the network batched across them (KataGo's analysis
threads), in steps of about `analysis.STEP_SECONDS` so that answers, new queries and terminations wait no
longer. A position with set-up stones, or moves that do not alternate, is searched by the reference search,
one at a time. The server scores area (Tromp-Taylor); other rules are analysed as Tromp-Taylor, with a
warning. Ownership and scores come from the model's ownership and score heads where it has them
(`analysis.report`).
"""

from __future__ import annotations

import heapq
import json
import math
import threading
import time
from typing import IO, Any

import numpy as np

from minigo_core import __version__
from minigo_core.game import coords, go
from minigo_core.gtp import analysis
from minigo_core.gtp.analysis import Analysis, PositionReport
from minigo_core.gtp.katago_query import Job, Limits, QueryError, parse, state_hashes

KATAGO_VERSION = "1.15.0"  # the KataGo release whose analysis protocol this follows (what clients check)


class AnalysisServer:
    """The protocol on one model (`player`, a `ModelPlayer`), answering through `write(line)`."""

    def __init__(
        self,
        player: Any,
        *,
        default_visits: int = 500,
        slots: int = 8,
        visit_cap: int = 100_000,
        report_as: str = "BLACK",
    ) -> None:
        self.player = player
        self.board_size = int(player.board_size)
        self.default_visits = default_visits
        self.slots = max(1, slots)
        self.visit_cap = visit_cap
        self.report_as = report_as
        self.out: IO[bytes] | None = None
        self.lines: list[str] = []  # answers when not serving (tests of handle_line)
        self._write_lock = threading.Lock()
        self._cond = threading.Condition()
        self._queue: list[tuple[tuple[int, int], int, Job]] = []
        self._active: list[Job] = []
        self.limits = Limits(self.board_size, default_visits, visit_cap, report_as, self._moves_of)
        self._closing = False
        self._searchers: dict[float, Any] = {}
        self._rate_per_s = 0.0  # readouts a second of the last round, all slots together
        self._worker = threading.Thread(target=self._work, name="minigo-analysis", daemon=True)

    # ---------------------------------------------------------------------------------------- input, output
    def write(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"))
        with self._write_lock:
            if self.out is None:
                self.lines.append(line)
                return
            self.out.write((line + "\n").encode())
            self.out.flush()

    def serve(self, infile: IO[bytes], outfile: IO[bytes]) -> int:
        """Answer queries from `infile` until its end, then finish the queued ones; returns 0."""
        self.out = outfile
        self._worker.start()
        try:
            for raw in infile:
                self.handle_line(raw.decode("utf-8", errors="replace"))
        finally:
            with self._cond:
                self._closing = True
                self._cond.notify_all()
            self._worker.join()
        return 0

    def handle_line(self, line: str) -> None:
        """One input line: an action answered at once, or a query's turns queued (errors answered at once)."""
        if not line.strip():
            return
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            self.write({"error": f"could not parse JSON: {exc.msg} at column {exc.colno}"})
            return
        if not isinstance(q, dict):
            self.write({"error": "a query must be a JSON object"})
            return
        qid = q.get("id")
        if not isinstance(qid, str) and not (isinstance(qid, int) and not isinstance(qid, bool)):
            self.write({"error": 'a query needs an "id" (a string)', "field": "id"})
            return
        qid = str(qid)
        if "action" in q:
            self._action(q, qid)
            return
        try:
            jobs, warnings = parse(q, qid, self.limits)
        except QueryError as exc:
            self.write({"error": str(exc), "field": exc.field, "id": qid})
            return
        for name, message in warnings:
            self.write({"warning": message, "field": name, "id": qid})
        with self._cond:
            for job in jobs:
                heapq.heappush(self._queue, (job.order(), job.seq, job))
            self._cond.notify_all()

    def _action(self, q: dict, qid: str) -> None:
        action = q["action"]
        if action == "query_version":
            self.write({**q, "version": KATAGO_VERSION, "git_hash": f"<omitted: minigo {__version__}>"})
        elif action == "clear_cache":  # the trees kept between queries (no network cache here)
            with self._cond:
                if not self._active:
                    self._searchers.clear()
            self.write(dict(q))
        elif action == "terminate":
            target = q.get("terminateId")
            turns = q.get("turnNumbers")
            if not isinstance(target, (str, int)) or isinstance(target, bool):
                self.write({"error": 'terminate needs a "terminateId"', "field": "terminateId", "id": qid})
                return
            if turns is not None and (
                not isinstance(turns, list) or not all(isinstance(t, int) for t in turns)
            ):
                self.write(
                    {"error": "turnNumbers must be a list of integers", "field": "turnNumbers", "id": qid}
                )
                return
            self._terminate(str(target), None if turns is None else set(turns))
            self.write(dict(q))
        else:
            self.write({"error": f"unknown action {action!r}", "field": "action", "id": qid})

    def _terminate(self, target: str, turns: set[int] | None) -> None:
        with self._cond:
            kept = []
            for item in self._queue:
                job = item[2]
                if job.query_id == target and (turns is None or job.turn in turns):
                    self.write(
                        {
                            "id": job.query_id,
                            "isDuringSearch": False,
                            "noResults": True,
                            "turnNumber": job.turn,
                        }
                    )
                else:
                    kept.append(item)
            heapq.heapify(kept)
            self._queue = kept
            for job in self._active:
                if job.query_id == target and (turns is None or job.turn in turns):
                    job.terminated = True
            self._cond.notify_all()

    # ------------------------------------------------------------------------------------------------ queries
    def _moves_of(self, position: go.Position) -> list[int] | None:
        return self.player.moves_from_start(position) if self.player.engine_name == "compiled" else None

    # ------------------------------------------------------------------------------------------------ search
    def _searcher(self, komi: float) -> Any:
        """The searcher of `komi` (its slots' trees kept between queries); another komi's is dropped, with its
        trees' memory (the active jobs share one komi: `_fill`)."""
        if komi not in self._searchers:
            self._searchers = {komi: self.player.new_search(komi, "compiled", seed=0)}
        return self._searchers[komi]

    def _work(self) -> None:
        """The search thread: rounds over the active jobs until the input has ended and no job is left."""
        while True:
            with self._cond:
                while not self._queue and not self._active and not self._closing:
                    self._cond.wait()
                if not self._queue and not self._active:
                    return
                self._fill()
                active = list(self._active)
            try:
                self._round(active)
            except Exception as exc:  # noqa: BLE001 - the server answers, never hangs: the jobs end with an error
                with self._cond:
                    for job in self._active:
                        self.write({"error": f"the analysis failed: {type(exc).__name__}: {exc}",
                                    "id": job.query_id, "turnNumber": job.turn})  # fmt: skip
                    self._active = []
                    self._searchers.clear()

    def _fill(self) -> None:
        """Take queued jobs into free slots: the best job first, then others of its komi (one searcher)."""
        komi = self._active[0].position.komi if self._active else None
        if any(job.moves is None for job in self._active):
            return  # a reference search runs alone
        used = {job.slot for job in self._active}
        kept = []
        while self._queue and len(self._active) < self.slots:
            item = heapq.heappop(self._queue)
            job = item[2]
            if job.moves is None:
                if self._active:
                    kept.append(item)
                    break
                self._start(job, 0)
                break
            if komi is not None and job.position.komi != komi:
                kept.append(item)
                continue
            komi = job.position.komi
            slot = next(k for k in range(self.slots) if k not in used)
            used.add(slot)
            self._start(job, slot)
        for item in kept:
            heapq.heappush(self._queue, item)

    def _start(self, job: Job, slot: int) -> None:
        job.slot, job.started = slot, time.perf_counter()
        job.next_report = job.started + job.report_every if job.report_every else math.inf
        if job.moves is None:
            job.reference = Analysis(self.player, self.board_size, job.position.komi, seed=0)
        self._active.append(job)

    def _round(self, active: list[Job]) -> None:
        """One step of every active job's search, then the answers that are due."""
        running = [j for j in active if not j.terminated]
        if running and running[0].moves is None:
            job = running[0]
            ref = job.reference
            assert ref is not None
            if not job.searched:
                job.searched = ref.start(job.position)
                job.terminated = not job.searched  # a finished game: nothing to search
            else:
                ref.step(min(ref.next_chunk(), max(1, job.max_visits - ref.visits)))
        elif running:
            searcher = self._searcher(running[0].position.komi)
            left = min(j.max_visits - self._visits(searcher, j) for j in running)
            chunk = max(int(self.player.timed_chunk()), min(left, self._chunk(running)))
            searcher.set_readouts(chunk)
            slots: list[list[int] | None] = [None] * (max(j.slot for j in running) + 1)
            for j in running:
                slots[j.slot] = j.moves
                searcher.set_avoid(j.slot, j.avoid)  # (unchanged: nothing happens; changed: a fresh tree)
            start = time.perf_counter()
            codes = searcher.search_many(slots)
            took = time.perf_counter() - start
            self._rate_per_s = chunk * len(running) / took if took > 0 else 0.0
            for j in running:
                if codes[j.slot] is not None:  # a finished game: nothing to search
                    j.terminated = True
                else:
                    j.searched = True
        now = time.perf_counter()
        for job in active:
            done = job.terminated or self._done(job, now)
            if done or now >= job.next_report:
                self._answer(job, during=not done)
                job.next_report = now + job.report_every if job.report_every else math.inf
            if done:
                with self._cond:
                    self._active.remove(job)

    def _chunk(self, running: list[Job]) -> int:
        """Readouts a slot this round: about `analysis.STEP_SECONDS` at the last round's rate."""
        rate = self._rate_per_s
        return max(1, int(rate * analysis.STEP_SECONDS / max(1, len(running)))) if rate > 0 else 16

    def _visits(self, searcher: Any, job: Job) -> int:
        if job.moves is None:
            return job.reference.visits if job.reference is not None else 0
        return searcher.root_stats(job.slot).root_visits if job.searched else 0

    def _done(self, job: Job, now: float) -> bool:
        if job.max_time is not None and now - job.started >= job.max_time:
            return True
        if job.moves is None:
            return job.reference is not None and job.reference.visits >= job.max_visits
        return self._visits(self._searcher(job.position.komi), job) >= job.max_visits

    # ------------------------------------------------------------------------------------------------ answers
    def _report_of(self, job: Job) -> PositionReport | None:
        if not job.searched:
            return None
        if job.moves is None:
            assert job.reference is not None
            return job.reference.report()
        searcher = self._searcher(job.position.komi)
        return analysis.report(
            searcher.root_stats(job.slot),
            job.position,
            lambda a: searcher.pv(a, job.slot, analysis.PV_LENGTH),
            self.player.net,
        )

    def _answer(self, job: Job, during: bool) -> None:
        report = self._report_of(job)
        if report is None:
            if not during:
                self.write(
                    {"id": job.query_id, "isDuringSearch": False, "noResults": True, "turnNumber": job.turn}
                )
            return
        self.write(self.response(job, report, during))

    def response(self, job: Job, report: PositionReport, during: bool) -> dict:
        """The answer for `job` from `report`, from the side `job.report_as` names."""
        n = self.board_size
        mover = report.to_play
        flip = (job.report_as == "BLACK" and mover == go.WHITE) or (
            job.report_as == "WHITE" and mover == go.BLACK
        )
        sign = -1.0 if flip else 1.0

        def wr(x: float) -> float:
            return 1.0 - x if flip else x

        infos = []
        searcher = self._searcher(job.position.komi) if job.moves is not None else None
        for order, m in enumerate(report.moves):
            info: dict[str, Any] = {
                "move": coords.to_gtp(coords.from_flat(m.move, n), n),
                "visits": m.visits,
                "winrate": wr(m.winrate),
                "scoreLead": sign * m.score,
                "scoreMean": sign * m.score,
                "scoreSelfplay": sign * m.score,
                "scoreStdev": 0.0,
                "prior": m.prior,
                "utility": sign * (2 * m.winrate - 1),
                "lcb": wr(m.lcb),
                "utilityLcb": sign * (2 * m.lcb - 1),
                "order": order,
                "pv": [coords.to_gtp(coords.from_flat(a, n), n) for a in m.pv],
            }
            if job.pv_visits:
                info["pvVisits"] = (searcher.pv_visits(m.move, job.slot, analysis.PV_LENGTH)[1] if searcher
                                    else [m.visits] + [0] * (len(m.pv) - 1))  # fmt: skip
            if job.moves_ownership:
                info["ownership"] = self._move_ownership(job, m.move, flip)
            infos.append(info)
        this_hash, sym_hash = state_hashes(job.position)
        out: dict[str, Any] = {
            "id": job.query_id,
            "isDuringSearch": during,
            "turnNumber": job.turn,
            "moveInfos": infos,
            "rootInfo": {
                "visits": report.root_visits,
                "winrate": wr(report.winrate),
                "scoreLead": sign * report.score,
                "scoreSelfplay": sign * report.score,
                "utility": sign * (2 * report.winrate - 1),
                "currentPlayer": "B" if mover == go.BLACK else "W",
                "thisHash": this_hash,
                "symHash": sym_hash,
            },
        }
        if job.ownership and report.ownership is not None:
            own = report.ownership * {"BLACK": 1.0, "WHITE": -1.0, "SIDETOMOVE": float(mover)}[job.report_as]
            out["ownership"] = [round(float(v), 6) for v in own]
        if job.policy:
            out["policy"] = [
                float(p) if legal else -1.0 for p, legal in zip(report.policy, self._legal(job), strict=True)
            ]
        return out

    def _legal(self, job: Job) -> np.ndarray:
        return np.asarray(job.position.all_legal_moves(), dtype=bool)

    def _move_ownership(self, job: Job, move: int, flip: bool) -> list[float]:
        """The ownership after `move` (the heads of the position after it, else its Tromp-Taylor ownership),
        from the reported side."""
        after = job.position.play_move(coords.from_flat(move, self.board_size))
        heads = analysis.heads_of(self.player.net, [after])
        own_black = heads[0][0] * after.to_play if heads is not None else after.ownership().astype(np.float64)
        side = {"BLACK": 1.0, "WHITE": -1.0, "SIDETOMOVE": float(job.position.to_play)}[job.report_as]
        return [round(float(v) * side, 6) for v in own_black]

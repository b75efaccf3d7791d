"""A generation's pack (`minigo_core.data.pack`, `minigo pack` / `minigo unpack`): it replaces the loose game
files, job records and self-play logs; every reader reads packed files as loose ones; a kill at any step of
packing loses nothing and a rerun finishes the job to the same bytes; bad input is refused naming the file,
with nothing deleted; the plan packs the generations that left the window, and refuses to rerun a packed one.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from minigo_core.data import compare, gamefile, games_complete, jobrecord, layout, pack, storage, window
from minigo_core.data.schedule import selfplay_jobs
from minigo_core.jobs import inspect as inspect_cmd
from minigo_core.jobs import pack as pack_cmd
from minigo_core.jobs import unpack as unpack_cmd
from minigo_core.pipeline import plan as planning

GEN = 1


def _write_generation(cfg, make_record, generation: int = GEN, attempt: str = "a") -> dict[str, bytes]:
    """A finished generation of `cfg` (game files, job records, logs, games-complete marker); its loose
    files' bytes by path relative to the root."""
    for job, games in enumerate(selfplay_jobs(cfg)):
        files = []
        for game in games:
            record = make_record(board_size=cfg.board_size, num_moves=12, seed=100 * generation + game)
            record.metadata["result"]["string"] = "B+1.5"
            url = layout.game_path(cfg.root, generation, game)
            size, sha = gamefile.write_game_digest(url, record)
            files.append(jobrecord.file_entry(url, game, size, sha, gamefile.read_metadata(url)))
        record = jobrecord.make_record(generation=generation, first_game=games.start, games=len(games),
                                       model_url="m", model_sha256="00", engine="compiled", files=files,
                                       attempt={"host": attempt})  # fmt: skip
        jobrecord.write_record(layout.selfplay_job_path(cfg.root, generation, job), record)
        storage.write_text(layout.selfplay_log_path(cfg.root, generation, job), f"job {job} {attempt}\n")
    games, bad = games_complete.read_games(cfg, generation, 1)
    marker = games_complete.summarise(generation, games, bad, cfg.selfplay.games)
    games_complete.write_marker(layout.complete_marker_path(cfg.root, generation), marker)
    root = Path(cfg.root)
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ("/gen0001/" in p.as_posix())
    }


@pytest.fixture()
def generation(tmp_path, make_config, make_record):
    cfg = make_config(root=str(tmp_path / "run"), selfplay={"games": 4, "games_per_job": 3})
    return cfg, _write_generation(cfg, make_record)


def _readable(cfg, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        assert pack.read_member(storage.join(cfg.root, rel)) == data, rel
    urls = [url for _, url in window.game_files(cfg.root, [GEN])]
    assert urls == sorted(storage.join(cfg.root, r) for r in files if r.endswith(".arrow"))
    for url in urls:
        gamefile.game_from_bytes(pack.read_member(url), url).training_examples()


def test_a_pack_replaces_the_loose_files_and_reads_the_same(generation):
    cfg, files = generation
    assert len(files) == 4 + 2 + 2  # games, job records, logs
    summary = pack.pack_generation(cfg, GEN)
    assert (summary["games"], summary["job_records"], summary["logs"]) == (4, 2, 2)
    assert not os.path.exists(layout.games_dir(cfg.root, GEN))  # the folders went with their files
    assert not os.path.exists(os.path.dirname(layout.selfplay_log_path(cfg.root, GEN, 0)))
    _readable(cfg, files)
    members = pack.Pack(layout.pack_path(cfg.root, GEN)).members()
    assert [m.kind for m in members[:5]] == ["jobrecord", "log", "game", "game", "game"]
    assert pack.pack_generation(cfg, GEN) == summary  # a rerun changes nothing
    mtime = os.path.getmtime(layout.pack_path(cfg.root, GEN))
    assert pack.unpack_generation(cfg, GEN) == len(files)
    assert not os.path.exists(layout.pack_path(cfg.root, GEN))
    root = Path(cfg.root)
    assert {r: (root / r).read_bytes() for r in files} == files
    assert all(os.path.getmtime(root / r) < mtime for r in files)  # modification times restored


def _steps(cfg) -> list[str]:
    steps: list[str] = []
    pack.pack_generation(cfg, GEN, steps.append)
    pack.unpack_generation(cfg, GEN)
    return steps


def _killed_at(cfg, step: str) -> None:
    def stop(name: str) -> None:
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    pack.pack_generation(cfg, GEN, stop)


def test_a_kill_at_any_step_of_packing_loses_nothing(generation):
    cfg, files = generation
    steps = _steps(cfg)
    assert steps[:4] == ["collected", "written", "renamed", "verified"] and steps[-1] == "removed"
    assert len(steps) == 4 + len(files) + 1
    pack.pack_generation(cfg, GEN)
    reference = Path(layout.pack_path(cfg.root, GEN)).read_bytes()
    pack.unpack_generation(cfg, GEN)
    context = multiprocessing.get_context("fork")
    for step in steps:
        child = context.Process(target=_killed_at, args=(cfg, step))
        child.start()
        child.join()
        assert child.exitcode == -signal.SIGKILL, step
        _readable(cfg, files)  # loose, or packed with some files still loose: the same bytes
        summary = pack.pack_generation(cfg, GEN)  # the rerun finishes the job
        assert Path(layout.pack_path(cfg.root, GEN)).read_bytes() == reference, step
        leftovers = [p.name for p in Path(cfg.root).rglob("*") if storage.is_temporary(p.name)]
        assert leftovers == [] and summary["games"] == 4, step
        _readable(cfg, files)
        pack.unpack_generation(cfg, GEN)


def test_a_kill_while_unpacking_loses_nothing(generation):
    cfg, files = generation
    pack.pack_generation(cfg, GEN)
    steps: list[str] = []
    pack.unpack_generation(cfg, GEN, steps.append)
    pack.pack_generation(cfg, GEN)
    for step in steps:

        def stop(name: str, step: str = step) -> None:
            if name == step:
                os.kill(os.getpid(), signal.SIGKILL)

        child = multiprocessing.get_context("fork").Process(
            target=pack.unpack_generation, args=(cfg, GEN, stop)
        )
        child.start()
        child.join()
        _readable(cfg, files)
        if os.path.exists(layout.pack_path(cfg.root, GEN)):
            pack.unpack_generation(cfg, GEN)
        assert {r: (Path(cfg.root) / r).read_bytes() for r in files} == files
        pack.pack_generation(cfg, GEN)


def test_bad_input_is_refused_naming_the_file_and_nothing_is_deleted(generation, capsys):
    cfg, files = generation
    game = layout.game_path(cfg.root, GEN, 2)
    data = Path(game).read_bytes()
    Path(game).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # changed after games-complete checked it
    with pytest.raises(pack.PackError, match=r"game00002\.arrow is not the file its job wrote"):
        pack.pack_generation(cfg, GEN)
    assert not os.path.exists(layout.pack_path(cfg.root, GEN))
    assert all((Path(cfg.root) / r).exists() for r in files)
    config = layout.effective_config_path(cfg.root)
    Path(config).write_text(json.dumps(cfg.to_dict()))
    assert pack_cmd.cli_main(["--config", config, "--generation", str(GEN)]) == 1
    assert "game00002.arrow" in capsys.readouterr().err
    # a game the marker already lists as bad is packed as it is: nothing is lost
    games, bad = games_complete.read_games(cfg, GEN, 1)
    marker = games_complete.summarise(GEN, games, bad, 4)
    games_complete.write_marker(layout.complete_marker_path(cfg.root, GEN), marker)
    assert pack_cmd.cli_main(["--config", config, "--generation", str(GEN)]) == 0
    assert pack.read_member(game) != data
    # a loose file that differs from its packed copy is kept, and the pack refuses to go on
    assert unpack_cmd.cli_main(["--config", config, "--generation", str(GEN)]) == 0
    pack.write_pack(layout.pack_path(cfg.root, GEN), GEN, pack.loose_members(cfg, GEN, marker))
    record = layout.selfplay_job_path(cfg.root, GEN, 1)
    Path(record).write_text(Path(record).read_text().replace('"host": "a"', '"host": "b"'))
    with pytest.raises(pack.PackError, match=r"job00001\.json differs from its copy"):
        pack.pack_generation(cfg, GEN)
    assert os.path.exists(record)
    no_marker = layout.complete_marker_path(cfg.root, GEN)
    os.remove(no_marker)
    with pytest.raises(pack.PackError, match=r"not complete .*gen0001\.complete\.json"):
        pack.pack_generation(cfg, GEN)


def test_inspect_and_sgf_read_packed_games_as_loose_ones(generation, capsys, tmp_path):
    cfg, files = generation
    game = layout.game_path(cfg.root, GEN, 1)
    outputs = []
    for _ in range(2):
        for argv in ([game, "--move", "3"], [game, "--sgf", "-"], [layout.games_dir(cfg.root, GEN)]):
            assert inspect_cmd.cli_main(argv) == 0
            outputs.append(capsys.readouterr().out)
        pack.pack_generation(cfg, GEN)
    assert outputs[:3] == outputs[3:]
    assert "game00001.arrow" in outputs[2] and "4 game files, 0 bad" in outputs[2]
    assert inspect_cmd.cli_main([layout.pack_path(cfg.root, GEN)]) == 0
    assert "4 game files, 0 bad" in capsys.readouterr().out
    assert inspect_cmd.cli_main([layout.game_path(cfg.root, GEN, 9)]) == 1
    assert "game00009.arrow does not exist" in capsys.readouterr().err


def test_two_packs_of_the_same_run_compare_equal_member_by_member(tmp_path, make_config, make_record):
    runs = []
    for name, attempt in (("a", "host-a"), ("b", "host-b")):
        cfg = make_config(root=str(tmp_path / name / "run"), selfplay={"games": 4, "games_per_job": 3})
        _write_generation(cfg, make_record, attempt=attempt)  # other hosts, other logs: the same run
        pack.pack_generation(cfg, GEN)
        runs.append(Path(cfg.root))
    a, b = (Path(layout.pack_path(str(r), GEN)) for r in runs)
    assert a.read_bytes() != b.read_bytes()
    assert compare.differences(runs[0], runs[1]) == []
    cfg_b = make_config(root=str(runs[1]), selfplay={"games": 4, "games_per_job": 3})
    pack.unpack_generation(cfg_b, GEN)
    _replay_game_3(cfg_b, make_record)  # another game 3: its file and its job's record differ
    assert compare.differences(runs[0], runs[1]) == [compare.Difference("games/gen0001.pack.arrow", "bytes")]
    assert compare.pack_differences(a, b) == [
        "games/gen0001/job00001.json: data",
        "games/gen0001/game00003.arrow: bytes",
    ]


def _replay_game_3(cfg, make_record) -> None:
    """Game 3 of `cfg` played again from another seed (another file, its record updated), then repacked."""
    record = make_record(board_size=cfg.board_size, num_moves=12, seed=999)
    record.metadata["result"]["string"] = "W+1.5"
    url = layout.game_path(cfg.root, GEN, 3)
    size, sha = gamefile.write_game_digest(url, record)
    job = layout.selfplay_job_path(cfg.root, GEN, 1)
    data = json.loads(Path(job).read_text())
    data["files"][0].update(bytes=size, sha256=sha)  # job 1 plays game 3 alone
    jobrecord.write_record(job, data)
    games, bad = games_complete.read_games(cfg, GEN, 1)
    games_complete.write_marker(
        layout.complete_marker_path(cfg.root, GEN), games_complete.summarise(GEN, games, bad, 4)
    )
    pack.pack_generation(cfg, GEN)


def test_the_plan_packs_what_left_the_window_and_refuses_to_rerun_a_packed_generation(finished_run):
    cfg, _ = finished_run(6, generations=8)
    cfg = cfg.__class__(**{**cfg.__dict__, "storage": cfg.storage.__class__(pack_old_generations=True)})
    W = cfg.window.generations  # tiny: 2
    assert planning.plan(cfg).packs == tuple(range(0, 6 - W)) + tuple(g - W for g in range(6, 9))
    Path(layout.packed_marker_path(cfg.root, 1)).write_text("{}")
    assert 1 not in planning.plan(cfg).packs
    Path(layout.pack_path(cfg.root, 3)).write_text("")
    with pytest.raises(planning.ConfigError, match=r"generations 3, which are packed .*minigo unpack"):
        planning.plan(cfg, first=2)
    assert planning.plan(cfg, first=4).first == 4
    off = cfg.__class__(**{**cfg.__dict__, "storage": cfg.storage.__class__(pack_old_generations=False)})
    assert planning.plan(off).packs == ()
    assert planning.plan_cost_per_generation(cfg) == planning.plan_cost_per_generation(off) + 1

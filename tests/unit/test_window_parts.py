"""A generation's window parts (`minigo_core/data/parts.py`): games-complete samples each game once for every
window that will read it, parts.json after the part files; a window takes its rows from the parts (disjoint
positions across windows, the shard schema, the same bytes on a rebuild) and falls back to the game files,
saying why, when the parts are missing, made for another config or damaged; bad files are still counted."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import numpy as np
import pyarrow.ipc as ipc
import pytest

from minigo_core.base.config import load_config
from minigo_core.bench.window import random_moves, synthetic_game
from minigo_core.bench.window_parts import write_generation
from minigo_core.data import gamefile, jobrecord, layout, parts, shards, storage, window
from minigo_core.data.sampling import positions
from minigo_core.jobs import games_complete as games_complete_cmd

GAMES = 6
WINDOW = {"generations": 3, "sample_fraction": 0.25, "value_root_mix": 0.5, "max_bad_fraction": 0.2}


@pytest.fixture()
def run(tmp_path, write_config):
    """A run of 9x9 games with job records, generations 0..2 of 6 games, no parts yet: (cfg, config file)."""
    path = write_config(tmp_path, board_size=9, generations=4, selfplay={"games": GAMES, "games_per_job": 3},
                        window=WINDOW, train={"ranks": 2})  # fmt: skip
    cfg = load_config(str(path))
    for g in range(3):
        write_generation(cfg, g, max_moves=60)
    return cfg, path


def _games_complete(path: Path, generation: int) -> int:
    return games_complete_cmd.cli_main(["--config", str(path), "--generation", str(generation)])


def _with_parts(run) -> tuple:
    cfg, path = run
    for g in range(3):
        assert _games_complete(path, g) == 0
    return cfg, path


def _parts_manifest(cfg, generation: int) -> dict:
    return json.loads(storage.read_bytes(layout.parts_manifest_path(cfg.root, generation)))


def _part_keys(cfg, generation: int, k: int) -> set[tuple[int, int]]:
    with open(layout.part_path(cfg.root, generation, k), "rb") as handle:
        table = ipc.open_file(handle).read_all()
    return set(zip(table.column("game").to_pylist(), table.column("move").to_pylist(), strict=True))


def _rows(out: str, manifest: dict) -> list[shards.Examples]:
    return [shards.load_shard(storage.join(out, s["name"]), s["sha256"]).rows(0, s["rows"])
            for s in manifest["shards"]]  # fmt: skip


def test_draws_are_disjoint_when_the_counts_fit_and_samples_without_replacement_otherwise():
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 40, 100):
        chosen = positions.draw(n, 3, 0.25, rng)
        together = np.concatenate(chosen)
        if together.size <= n:
            assert np.unique(together).size == together.size  # no position in two parts
        assert all(np.unique(c).size == c.size and (np.diff(c) > 0).all() for c in chosen)
    full = positions.draw(40, 3, 1.0, rng)  # counts 40 each: every part the whole game, each once
    assert [sorted(c.tolist()) for c in full] == [list(range(40))] * 3


def test_games_complete_writes_the_parts_then_parts_json_then_the_marker(run, monkeypatch):
    cfg, path = run
    order: list[tuple[str, list[str]]] = []
    real = storage.write_text

    def spy(url: str, text: str) -> None:
        folder = layout.parts_dir(cfg.root, 1)
        order.append((os.path.basename(url), sorted(os.listdir(folder)) if os.path.isdir(folder) else []))
        real(url, text)

    monkeypatch.setattr(storage, "write_text", spy)
    assert _games_complete(path, 1) == 0
    names = [name for name, _ in order]
    assert names.index("parts.json") < names.index(os.path.basename(layout.complete_marker_path(cfg.root, 1)))
    assert order[names.index("parts.json")][1] == ["part0.arrow", "part1.arrow", "part2.arrow"]
    manifest = _parts_manifest(cfg, 1)
    assert manifest["parts"] == 3 and manifest["fingerprint"] == parts.fingerprint(cfg)
    for k, entry in enumerate(manifest["files"]):
        url = layout.part_path(cfg.root, 1, k)
        assert storage.sha256_file(url) == entry["sha256"] and os.path.getsize(url) == entry["bytes"]
        assert entry["rows"] == sum(g["sampled"][k] for g in manifest["games"]) == len(_part_keys(cfg, 1, k))
    assert len(manifest["games"]) == GAMES and manifest["skipped"] == []
    assert set(manifest["timings"]) == {"check_s", "decode_s", "sample_s", "total_s"}


def test_a_game_s_positions_go_to_one_window_each(run):
    cfg, _ = _with_parts(run)
    for g in range(3):
        manifest = _parts_manifest(cfg, g)
        keys = [_part_keys(cfg, g, k) for k in range(3)]
        for game in manifest["games"]:
            if sum(game["sampled"]) <= game["positions"]:  # the counts fit: disjoint slices
                mine = [{m for i, m in part if i == game["game"]} for part in keys]
                assert sum(map(len, mine)) == len(set().union(*mine)) == sum(game["sampled"])
        assert sum(len(k) for k in keys) > 0


def test_a_window_from_parts_holds_its_parts_rows_as_shards_and_rebuilds_to_the_same_bytes(run, tmp_path):
    cfg, _ = _with_parts(run)
    out = str(tmp_path / "w")
    manifest = window.build_window(cfg, 3, out)
    assert manifest["sources"] == [{"generation": g, "rows": "parts"} for g in (0, 1, 2)]
    # window 3 takes part 2 of generation 0, part 1 of generation 1, part 0 of generation 2
    assert manifest["rows"] == sum(_parts_manifest(cfg, g)["files"][2 - g]["rows"] for g in (0, 1, 2))
    files = window.plan_window(cfg, 3).files
    assert [(g["generation"], g["path"]) for g in manifest["games"]] == files
    assert [g["index"] for g in manifest["games"]] == list(range(len(files)))
    rows = _rows(out, manifest)
    by_index = {g["index"]: g for g in manifest["games"]}
    keys = [(int(i), int(m)) for ex in rows for i, m in zip(ex.game, ex.move, strict=True)]
    assert len(set(keys)) == len(keys) == manifest["rows"]
    for game in manifest["games"]:
        assert sum(i == game["index"] for i, _ in keys) == game["sampled"]
    ex = rows[0]
    for r in range(0, len(ex), 5):  # each row is its game's position, targets as the window makes them
        record = gamefile.read_game(by_index[int(ex.game[r])]["path"])
        row = np.flatnonzero(record.full_search)[[int(ex.move[r])]]
        planes, own, score = record.replayed_examples(row, cfg.features)
        np.testing.assert_array_equal(ex.planes[r], planes[0])
        np.testing.assert_array_equal(ex.own[r], own[0])
        np.testing.assert_array_equal(ex.score[r], score[0].astype(np.float16))
        np.testing.assert_allclose(ex.pi[r], record.policy_targets(row)[0], atol=2e-3)
        z = positions.value_targets(record, row, cfg.window.value_root_mix)[0]
        assert ex.z[r] == np.float16(z) and ex.reply[r] == positions.reply_targets(record, row)[0]
    again = window.build_window(cfg, 3, str(tmp_path / "again"))
    assert [s["sha256"] for s in again["shards"]] == [s["sha256"] for s in manifest["shards"]]
    for g in range(3):  # the same window from the game files: the same columns, shard format and metadata
        os.rename(layout.parts_dir(cfg.root, g), layout.parts_dir(cfg.root, g) + "-away")
    plain = window.build_window(cfg, 3, str(tmp_path / "plain"))
    assert all(s["rows"].startswith("files: no ") for s in plain["sources"])
    assert _schema(storage.join(out, "shard000.arrow")) == _schema(str(tmp_path / "plain" / "shard000.arrow"))
    assert plain["rows"] != manifest["rows"] or plain["shards"] != manifest["shards"]  # other positions


def _schema(url: str) -> tuple:
    """A shard's columns and its footer's facts but for the row count."""
    with open(url, "rb") as handle:
        fields = ipc.open_file(handle).schema.remove_metadata()
    info = shards.read_shard_info(url)
    return fields, info.board_size, info.num_planes, info.feature_set, info.batch_rows, info.extra


def _fallback(cfg, tmp_path, name: str, caplog, monkeypatch) -> dict:
    monkeypatch.setattr(logging.getLogger("minigo_core"), "propagate", True)  # a command's set-up stops it
    with caplog.at_level(logging.WARNING, logger="minigo_core.data.window"):
        return window.build_window(cfg, 3, str(tmp_path / name))


def test_parts_made_with_a_key_this_run_leaves_out_are_not_used(tmp_path, write_config, caplog, monkeypatch):
    """Parts made with `window.value_root_lambda` (which the fingerprint names only when set) are not read
    by a window without it: a key either side lacks counts as a difference."""
    lam = {**WINDOW, "value_root_lambda": 0.5}
    path = write_config(tmp_path, board_size=9, generations=4, selfplay={"games": GAMES, "games_per_job": 3},
                        window=lam, train={"ranks": 2})  # fmt: skip
    cfg = load_config(str(path))
    for g in range(3):
        write_generation(cfg, g, max_moves=60)
        assert _games_complete(path, g) == 0
    assert _parts_manifest(cfg, 1)["fingerprint"]["value_root_lambda"] == 0.5
    selfplay = {"games": GAMES, "games_per_job": 3}
    other = write_config(tmp_path / "other", board_size=9, generations=4, root=cfg.root, selfplay=selfplay,
                         window=WINDOW, train={"ranks": 2})  # fmt: skip
    manifest = _fallback(load_config(str(other)), tmp_path, "w", caplog, monkeypatch)
    reason = r"files: .*made for another config \(value_root_lambda 0.5, this run None\)"
    assert all(re.match(reason, s["rows"]) for s in manifest["sources"]), manifest["sources"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("missing", "files: no .*gen0001/parts.json"),
        ("sample_fraction", r"files: .*made for another config \(sample_fraction 0.25, this run 0.3\)"),
        ("value_root_mix", r"files: .*made for another config \(value_root_mix 0.5, this run 0.0\)"),
        ("value_root_lambda", r"files: .*made for another config \(value_root_lambda None, this run 0.5\)"),
        ("damaged", "files: .*gen0001/part1.arrow is damaged"),
    ],
)
def test_a_window_falls_back_to_the_game_files_and_says_why(
    run, tmp_path, caplog, monkeypatch, change, reason, write_config
):
    cfg, _ = _with_parts(run)
    if change == "missing":
        os.remove(layout.parts_manifest_path(cfg.root, 1))
    elif change == "damaged":
        url = layout.part_path(cfg.root, 1, 1)
        data = bytearray(Path(url).read_bytes())
        data[len(data) // 2] ^= 0xFF
        Path(url).write_bytes(bytes(data))
    else:
        value = {"sample_fraction": 0.3, "value_root_mix": 0.0, "value_root_lambda": 0.5}[change]
        path = write_config(tmp_path / "other", board_size=9, generations=4, root=cfg.root,
                            selfplay={"games": GAMES, "games_per_job": 3}, window={**WINDOW, change: value},
                            train={"ranks": 2})  # fmt: skip
        cfg = load_config(str(path))
    manifest = _fallback(cfg, tmp_path, "w", caplog, monkeypatch)
    sources = {s["generation"]: s["rows"] for s in manifest["sources"]}
    assert re.match(reason, sources[1]), sources
    assert any(sources[1].removeprefix("files: ") in r.getMessage() for r in caplog.records)  # logged
    if change in ("missing", "damaged"):  # the other generations' parts are used
        assert sources[0] == sources[2] == "parts"
    else:  # no part was made for this config
        assert all(s.startswith("files: ") for s in sources.values())
    assert len(manifest["games"]) == 3 * GAMES and manifest["skipped"] == []
    if change in ("missing", "damaged"):  # generation 1 sampled from its files exactly as without parts
        os.rename(layout.parts_dir(cfg.root, 1), layout.parts_dir(cfg.root, 1) + "-away")
        plain = window.build_window(cfg, 3, str(tmp_path / "plain"))
        assert [s["sha256"] for s in plain["shards"]] == [s["sha256"] for s in manifest["shards"]]


def _tamper(cfg, generation: int) -> tuple[str, str]:
    """Game 0 rewritten (its SHA-256 is no longer its record's); game 1 a move list that does not replay,
    its record updated (a file its job wrote, that the window cannot sample)."""
    rng = np.random.default_rng(5)
    changed = layout.game_path(cfg.root, generation, 0)
    record = synthetic_game(random_moves(9, rng, 30), 9, rng, recorded_fraction=1.0)
    record.metadata["result"]["string"] = "B+R"
    Path(changed).write_bytes(gamefile.game_bytes(record))
    illegal = layout.game_path(cfg.root, generation, 1)
    record = synthetic_game([(0, 0), (0, 0), (1, 1), (2, 2)], 9, rng, recorded_fraction=1.0)
    record.metadata["result"]["string"] = "B+R"
    data = gamefile.game_bytes(record)
    Path(illegal).write_bytes(data)
    job = layout.selfplay_job_path(cfg.root, generation, 0)
    entries = jobrecord.read_record(job)
    entries["files"][1].update(bytes=len(data), sha256=storage.sha256_bytes(data))
    jobrecord.write_record(job, entries)
    return changed, illegal


def test_bad_files_are_skipped_listed_and_counted_against_max_bad_fraction(run, tmp_path, write_config):
    cfg, path = run
    changed, illegal = _tamper(cfg, 1)
    for g in range(3):
        assert _games_complete(path, g) == 0  # 1 bad file of 6: within max_bad_fraction 0.2
    listed = {s["path"]: s["reason"] for s in _parts_manifest(cfg, 1)["skipped"]}
    assert set(listed) == {changed, illegal}
    assert "SHA-256 differs" in listed[changed] and "does not replay" in listed[illegal]
    marker = json.loads(Path(layout.complete_marker_path(cfg.root, 1)).read_text())
    assert marker["games"] == GAMES - 1 and len(marker["bad_files"]) == 1
    manifest = window.build_window(cfg, 3, str(tmp_path / "w"))
    assert {s["path"] for s in manifest["skipped"]} == {changed, illegal}
    assert changed not in {g["path"] for g in manifest["games"]}
    strict = write_config(tmp_path / "strict", board_size=9, generations=4, root=cfg.root,
                          selfplay={"games": GAMES, "games_per_job": 3},
                          window={**WINDOW, "max_bad_fraction": 0.0}, train={"ranks": 2})  # fmt: skip
    with pytest.raises(window.WindowError, match="2 of 18 game files are bad.*game00000.arrow"):
        window.build_window(load_config(str(strict)), 3, str(tmp_path / "strict-w"))
    os.remove(layout.parts_manifest_path(cfg.root, 1))
    assert _games_complete(strict, 1) == 1  # too many bad files: no parts.json, no new marker
    assert not os.path.exists(layout.parts_manifest_path(cfg.root, 1))


def test_with_window_parts_false_no_part_is_written_and_every_window_samples_the_game_files(
    run, tmp_path, write_config, caplog, monkeypatch
):
    cfg, _ = run
    path = write_config(tmp_path / "off", board_size=9, generations=4, root=cfg.root,
                        selfplay={"games": GAMES, "games_per_job": 3}, window={**WINDOW, "parts": False},
                        train={"ranks": 2})  # fmt: skip
    off = load_config(str(path))
    assert off.window.parts is False and cfg.window.parts is True
    for g in range(3):
        assert _games_complete(path, g) == 0  # the games are checked and the marker written, no part
        assert _parts_manifest(off, g)["parts"] == 0 and _parts_manifest(off, g)["files"] == []
        written = os.listdir(layout.parts_dir(off.root, g))
        assert not any(name.endswith(layout.GAME_SUFFIX) for name in written)
        assert os.path.exists(layout.complete_marker_path(off.root, g))
    manifest = _fallback(off, tmp_path, "w", caplog, monkeypatch)
    off_rows = "files: window.parts is false"
    assert manifest["sources"] == [{"generation": g, "rows": off_rows} for g in (0, 1, 2)]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # asked for: not a warning
    assert len(manifest["games"]) == 3 * GAMES and manifest["rows"] > 0
    for g in range(3):  # the same shards as a window with no parts at all: the game files' own sampling
        os.rename(layout.parts_dir(cfg.root, g), layout.parts_dir(cfg.root, g) + "-away")
    plain = window.build_window(cfg, 3, str(tmp_path / "plain"))
    assert all(s["rows"].startswith("files: no ") for s in plain["sources"])
    assert [s["sha256"] for s in plain["shards"]] == [s["sha256"] for s in manifest["shards"]]

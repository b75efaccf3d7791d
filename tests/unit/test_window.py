"""The sample window, the shard format and the prefetcher (issue 5)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter

import numpy as np
import pytest

from minigo_core.base import config
from minigo_core.bench.window import random_moves, synthetic_game
from minigo_core.data import gamefile, layout, shards, storage, window
from minigo_core.data.prefetch import Prefetcher
from minigo_core.data.sampling import positions
from minigo_core.game import features
from minigo_core.jobs import window as window_cmd

BOARD = 9


def _write_games(root: str, gens: list[int], per_gen: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for gen in gens:
        for i in range(per_gen):
            record = synthetic_game(random_moves(BOARD, rng, max_moves=40), BOARD, rng, recorded_fraction=0.8)
            gamefile.write_game(layout.game_path(root, gen, i), record)


def _cfg(root: str, ranks: int = 3, **window_settings) -> config.RunConfig:
    return config.from_dict(
        {
            "root": root,
            "board_size": BOARD,
            "seed": 7,
            "window": {"generations": 2, "value_root_mix": 0.0, **window_settings},  # z: the result alone
            "train": {"ranks": ranks},
        }
    )


@pytest.fixture(scope="module")
def games_root(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("run"))
    _write_games(root, [0, 1, 2], 5)
    return root


def _all_rows(out_dir: str, manifest: dict) -> list[shards.Examples]:
    return [
        shards.load_shard(storage.join(out_dir, s["name"]), s["sha256"]).rows(0, s["rows"])
        for s in manifest["shards"]
    ]


@pytest.mark.parametrize("bucket_rows", [window.BUCKET_ROWS, 20])
def test_every_sampled_position_lands_in_exactly_one_shard(games_root, tmp_path, bucket_rows):
    cfg = _cfg(games_root)
    out = str(tmp_path / "w")
    manifest = window.build_window(cfg, 3, out, bucket_rows=bucket_rows, workers="threads")
    assert manifest["window_generations"] == [1, 2]  # W = 2 generations back from 3
    assert {g["generation"] for g in manifest["games"]} == {1, 2} and len(manifest["games"]) == 10
    assert (manifest["buckets"] > 1) == (bucket_rows == 20)
    sizes = [s["rows"] for s in manifest["shards"]]
    assert len(sizes) == 3 and max(sizes) - min(sizes) <= 1 and sum(sizes) == manifest["rows"]
    for s in manifest["shards"]:
        url = storage.join(out, s["name"])
        assert shards.read_shard_info(url).rows == s["rows"]
        assert storage.sha256_file(url) == s["sha256"] and os.path.getsize(url) == s["bytes"]
    rows = _all_rows(out, manifest)
    keys = [(int(g), int(m)) for ex in rows for g, m in zip(ex.game, ex.move, strict=True)]
    assert len(keys) == len(set(keys)) == manifest["rows"]  # none duplicated
    per_game = Counter(g for g, _ in keys)
    for game in manifest["games"]:  # none lost: each game's sampled count is there
        assert per_game.get(game["index"], 0) == game["sampled"]
        assert 0 < game["sampled"] < game["positions"]
    # Shuffled across the whole window: the first shard already mixes both generations' games.
    first_gens = {
        manifest["games"][[g["index"] for g in manifest["games"]].index(int(i))]["generation"]
        for i in rows[0].game
    }
    assert first_gens == {1, 2}


def test_examples_match_their_source_game(games_root, tmp_path):
    cfg = _cfg(games_root, ranks=2)
    out = str(tmp_path / "w")
    manifest = window.build_window(cfg, 3, out, workers="threads")
    ex = _all_rows(out, manifest)[1]
    by_index = {g["index"]: g["path"] for g in manifest["games"]}
    for r in range(0, len(ex), 7):
        record = gamefile.read_game(by_index[int(ex.game[r])])
        planes, pi, z = record.training_examples(cfg.features)
        k = int(ex.move[r])
        np.testing.assert_array_equal(ex.planes[r], planes[k])
        np.testing.assert_allclose(ex.pi[r], pi[k], atol=2e-3)
        assert ex.z[r] == z[k]
        assert abs(ex.pi[r].sum() - 1) < 1e-5


def test_window_is_deterministic_and_replaces_stale_shards(games_root, tmp_path):
    out = str(tmp_path / "w")
    first = window.build_window(_cfg(games_root, ranks=4), 3, out, workers="threads")
    second = window.build_window(_cfg(games_root, ranks=3), 3, out, workers="threads")
    third = window.build_window(_cfg(games_root, ranks=3), 3, out, workers="threads")
    assert [s["sha256"] for s in second["shards"]] == [s["sha256"] for s in third["shards"]]
    assert first["rows"] == second["rows"]
    names = sorted(n for n in os.listdir(out) if not n.startswith("."))
    assert names == ["manifest.json", "shard000.arrow", "shard001.arrow", "shard002.arrow"]


def test_a_rebuild_removes_what_a_killed_build_left(games_root, tmp_path):
    # its shards' and manifest's temporaries, and the spill directory of a build killed on this host (a dead
    # pid in its name); a live build's spill stays
    out, scratch = tmp_path / "w", tmp_path / "scratch"
    out.mkdir()
    (scratch / "minigo-window-4000001-abcd" / "b0").mkdir(parents=True)
    (scratch / f"minigo-window-{os.getpid()}-live").mkdir()
    for name in (".tmp-shard001.arrow.4000001.deadbeef", ".tmp-manifest.json.4000001.deadbeef"):
        (out / name).write_bytes(b"half")
    window.build_window(_cfg(games_root, ranks=2), 3, str(out), tmp_dir=str(scratch), workers="threads")
    assert sorted(os.listdir(out)) == ["manifest.json", "shard000.arrow", "shard001.arrow"]
    assert os.listdir(scratch) == [f"minigo-window-{os.getpid()}-live"]


def test_process_readers_give_the_same_window(games_root, tmp_path):
    threads = window.build_window(_cfg(games_root, ranks=2), 3, str(tmp_path / "t"), workers="threads")
    processes = window.build_window(_cfg(games_root, ranks=2), 3, str(tmp_path / "p"), workers="processes")
    assert [s["sha256"] for s in threads["shards"]] == [s["sha256"] for s in processes["shards"]]


def test_bad_files_are_skipped_and_listed(tmp_path):
    root = str(tmp_path / "run")
    _write_games(root, [0], 6, seed=3)
    good = layout.game_path(root, 0, 0)
    data = open(good, "rb").read()
    bad = {
        layout.game_path(root, 0, 10): data[: len(data) // 2],  # truncated
        layout.game_path(root, 0, 11): b"",  # empty
        layout.game_path(root, 0, 12): b"PK\x03\x04 this is a zip, not a game",  # foreign
    }
    for path, content in bad.items():
        with open(path, "wb") as fh:
            fh.write(content)
    rng = np.random.default_rng(0)  # a valid game of another board size
    gamefile.write_game(layout.game_path(root, 0, 13), synthetic_game(random_moves(5, rng, 12), 5, rng))
    with open(os.path.join(layout.games_dir(root, 0), ".tmp-game00014.arrow.123.abc"), "wb") as fh:
        fh.write(b"half written")  # temporary names are never read
    manifest = window.build_window(
        _cfg(root, ranks=2, max_bad_fraction=0.5), 1, str(tmp_path / "w"), workers="threads"
    )
    skipped = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert set(skipped) == set(bad) | {layout.game_path(root, 0, 13)}
    assert "truncated" in skipped[layout.game_path(root, 0, 10)]
    assert "empty" in skipped[layout.game_path(root, 0, 11)]
    assert "not a MiniGo game file" in skipped[layout.game_path(root, 0, 12)]
    assert "5x5" in skipped[layout.game_path(root, 0, 13)]
    assert len(manifest["games"]) == 6
    with pytest.raises(window.WindowError, match="game00010.arrow") as err:
        window.build_window(
            _cfg(root, ranks=2, max_bad_fraction=0.2), 1, str(tmp_path / "w2"), workers="threads"
        )
    assert "4 of 10 game files are bad" in str(err.value)
    assert not os.path.exists(tmp_path / "w2" / "manifest.json")


def test_no_games_is_a_clear_error(tmp_path):
    with pytest.raises(window.WindowError, match="no game files .*gen0000"):
        window.build_window(_cfg(str(tmp_path)), 1, str(tmp_path / "w"), workers="threads")
    with pytest.raises(window.WindowError, match="windows start at generation 1"):
        window.window_generations(0, 5)


def test_cli_window(games_root, tmp_path, capsys):
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(json.dumps({"root": games_root, "board_size": BOARD, "train": {"ranks": 2}}))
    out = tmp_path / "w"
    argv = ["--config", str(cfg_path), "--generation", "3", "--out-dir", str(out), "--workers", "threads"]
    assert window_cmd.cli_main(argv) == 0
    built = window.read_manifest(str(out))
    assert len(built.shard_urls) == 2 and built.rows == sum(built.shard_rows) > 0
    manifest = json.loads(storage.read_bytes(layout.manifest_path(str(out))))
    assert manifest["window_generations"] == [0, 1, 2] and built.manifest_sha256 == window.manifest_digest(
        manifest
    )
    assert window_cmd.cli_main(["--config", str(cfg_path), "--generation", "3", "--dry-run"]) == 0
    assert "15 game files" in capsys.readouterr().out


def test_read_manifest_says_what_to_do(tmp_path):
    with pytest.raises(window.WindowError, match="run `minigo window`"):
        window.read_manifest(str(tmp_path / "nowhere"))
    storage.write_text(layout.manifest_path(str(tmp_path)), json.dumps({"format": "something-else"}))
    with pytest.raises(window.WindowError, match="is not valid .*rebuild the window"):
        window.read_manifest(str(tmp_path))


# ---- shard format ------------------------------------------------------------------------------------------
def _random_examples(n: int, planes: int = 17, board: int = BOARD, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = (rng.random((n, planes, board, board)) < 0.3).astype(np.uint8)
    pi = np.where(rng.random((n, board * board + 1)) < 0.1, rng.random((n, board * board + 1)), 0)
    pi[:, -1] += 0.01
    pi = (pi / pi.sum(axis=1, keepdims=True)).astype(np.float32)
    z = rng.choice([-1.0, 1.0], n).astype(np.float32)
    return x, pi, z


def test_shard_roundtrip_across_record_batches(tmp_path):
    n = shards.BATCH_ROWS * 2 + 37
    x, pi, z = _random_examples(n)
    url = str(tmp_path / "s.arrow")
    writer = shards.ShardWriter(url, n, 17, BOARD, "agz", {"note": "test"})
    batch = shards.encode(x, pi, z, 5, np.arange(n))
    for start in range(0, n, 300):
        writer.write(batch.slice(start, 300))
    written = writer.close()
    assert written.sha256 == storage.sha256_file(url) and written.bytes == os.path.getsize(url)
    info = shards.read_shard_info(url)
    assert (info.rows, info.board_size, info.num_planes, info.feature_set) == (n, BOARD, 17, "agz")
    loaded = shards.load_shard(url, written.sha256)
    part = loaded.rows(shards.BATCH_ROWS - 5, shards.BATCH_ROWS * 2 + 3)  # spans three record batches
    np.testing.assert_array_equal(part.planes, x[shards.BATCH_ROWS - 5 : shards.BATCH_ROWS * 2 + 3])
    np.testing.assert_allclose(
        part.pi, pi[shards.BATCH_ROWS - 5 : shards.BATCH_ROWS * 2 + 3], rtol=2e-3, atol=1e-6
    )
    full = loaded.rows(0, n)
    np.testing.assert_array_equal(full.z, z)
    np.testing.assert_array_equal(full.move, np.arange(n))
    assert len(loaded.rows(3, 3)) == 0


def test_shard_writer_is_atomic_and_checks_counts(tmp_path):
    x, pi, z = _random_examples(10)
    url = str(tmp_path / "s.arrow")
    writer = shards.ShardWriter(url, 20, 17, BOARD, "agz")
    writer.write(shards.encode(x, pi, z, 0, np.arange(10)))
    with pytest.raises(ValueError, match="10 rows written, 20 announced"):
        writer.close()
    assert os.listdir(tmp_path) == []  # nothing half-written is left


def test_corrupt_shard_is_reported(tmp_path):
    x, pi, z = _random_examples(50)
    url = str(tmp_path / "s.arrow")
    writer = shards.ShardWriter(url, 50, 17, BOARD, "agz")
    writer.write(shards.encode(x, pi, z, 0, np.arange(50)))
    good = writer.close()
    data = bytearray(open(url, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(url, "wb").write(bytes(data))
    with pytest.raises(shards.ShardError, match="does not match the checksum"):
        shards.load_shard(url, good.sha256)
    open(url, "wb").write(bytes(data[:100]))
    with pytest.raises(shards.ShardError, match="s.arrow"):
        shards.load_shard(url)


def test_sample_count_is_exact_in_expectation():
    rng = np.random.default_rng(0)
    counts = [positions.sample_count(7, 0.3, rng) for _ in range(20000)]
    assert set(counts) == {2, 3}
    assert abs(np.mean(counts) - 2.1) < 0.02
    assert positions.sample_count(0, 0.3, rng) == 0 and positions.sample_count(5, 1.0, rng) == 5


def test_features_plane_count_matches_shard_width():
    assert shards.packed_width(features.num_planes("mlperf07"), 19) == 13 * 46


# ---- prefetch ----------------------------------------------------------------------------------------------
def test_prefetch_yields_in_order_with_threads():
    def make(i: int) -> int:
        time.sleep(0.001 * ((i * 7) % 3))  # finish out of order
        return i * i

    feeder = Prefetcher(make, 3, 40, capacity=4, threads=3)
    assert list(feeder) == [i * i for i in range(3, 40)]
    assert feeder.batches == 37


def test_prefetch_is_bounded_and_off_mode_counts_wait():
    made = []
    lock = threading.Lock()
    gate = threading.Event()

    def make(i: int) -> int:
        with lock:
            made.append(i)
        return i

    feeder = Prefetcher(make, 0, 100, capacity=5, threads=2)
    it = iter(feeder)
    assert next(it) == 0
    time.sleep(0.2)
    assert len(made) <= 1 + 5  # never more than `capacity` batches ahead of the consumer
    feeder.close()
    gate.set()

    off = Prefetcher(lambda i: time.sleep(0.01) or i, 0, 5, threads=0)
    assert list(off) == list(range(5)) and off.wait_s >= 0.04


def test_prefetch_propagates_errors():
    def make(i: int) -> int:
        if i == 3:
            raise ValueError("bad batch")
        return i

    with pytest.raises(RuntimeError, match="batch 3 failed: bad batch"):
        list(Prefetcher(make, 0, 10, capacity=2, threads=2))


def test_the_value_target_mixes_the_result_with_the_root_value_by_window_value_root_mix(games_root, tmp_path):
    """`window.value_root_mix` w: each sampled position's value target is (1 - w) z + w q (z the game's
    result, q the search's root value there, both the player to move's); at 0 the result alone, and its
    manifest, as before, does not name the key."""
    plain = window.build_window(_cfg(games_root), 3, str(tmp_path / "z"), workers="threads")
    mixed = window.build_window(
        _cfg(games_root, value_root_mix=0.5), 3, str(tmp_path / "m"), workers="threads"
    )
    assert "value_root_mix" not in plain and mixed["value_root_mix"] == 0.5
    assert plain["rows"] == mixed["rows"]  # the same positions are sampled

    def targets(out: str, manifest: dict) -> dict[tuple[int, int], float]:
        """(game, the position's number among the game's recorded ones) -> its value target"""
        return {
            (int(g), int(m)): float(z)
            for ex in _all_rows(out, manifest)
            for g, m, z in zip(ex.game, ex.move, ex.z, strict=True)
        }

    z, mix = targets(str(tmp_path / "z"), plain), targets(str(tmp_path / "m"), mixed)
    assert z.keys() == mix.keys() and set(z.values()) <= {-1.0, 0.0, 1.0}
    expected = {}
    for game in plain["games"]:
        record, index = gamefile.read_game(game["path"]), game["index"]
        recorded = np.flatnonzero(record.full_search)
        for k, row in enumerate(recorded):
            q = float(np.clip(record.root_value[row], -1, 1))
            expected[(index, k)] = 0.5 * float(record.value_target[row]) + 0.5 * q
    for key, value in mix.items():
        assert value == pytest.approx(expected[key], abs=2e-3)  # float16 in the shard
    assert any(abs(mix[k] - z[k]) > 0.01 for k in z)  # the root values moved the targets


def _lambda_return(record: gamefile.GameRecord, p: int, lam: float) -> float:
    """The lambda-return of the p-th recorded row in move order, summed forward: sum over k of (1 - lambda)
    lambda^k q_(p+k) (each in row p's view), then lambda^(rows left) times the result."""
    order = np.argsort(record.move_index, kind="stable")
    moves, q = record.move_index[order], np.clip(record.root_value[order], -1, 1)
    sign = lambda j: -1.0 if (moves[j] - moves[p]) % 2 else 1.0  # noqa: E731
    total = sum((1 - lam) * lam ** (j - p) * sign(j) * float(q[j]) for j in range(p, len(order)))
    return total + lam ** (len(order) - p) * sign(len(order) - 1) * float(record.value_target[order[-1]])


def test_the_root_values_lambda_return_on_a_known_game():
    """Three recorded rows at moves 0, 1 and 3 (one unrecorded between), root values 0.8, -0.4, 0.6 and
    a result of +1 for the last row's player: G2 = 0.5 0.6 + 0.5 1 = 0.8; G1 = 0.5 (-0.4) + 0.5 0.8 = 0.2
    (two moves on: the same player to move); G0 = 0.5 0.8 + 0.5 (-0.2) = 0.3 (one move on: the other's).
    lambda 0: the root values."""
    rng = np.random.default_rng(3)
    record = synthetic_game(random_moves(5, rng, 4), 5, rng)
    record.move_index = np.array([0, 1, 3])
    record.root_value = np.array([0.8, -0.4, 0.6], dtype=np.float32)
    record.value_target = np.array([-1.0, 1.0, 1.0], dtype=np.float32)
    assert positions.root_returns(record, 0.5) == pytest.approx([0.3, 0.2, 0.8])
    assert positions.root_returns(record, 0.0) == pytest.approx([0.8, -0.4, 0.6])
    assert [_lambda_return(record, p, 0.5) for p in range(3)] == pytest.approx([0.3, 0.2, 0.8])
    rows = np.array([0, 2])
    assert positions.value_targets(record, rows, 0.5, 0.5) == pytest.approx([0.5 * -1 + 0.5 * 0.3, 0.9])


def test_the_value_target_uses_the_root_values_lambda_return_by_window_value_root_lambda(
    games_root, tmp_path
):
    """`window.value_root_lambda` lambda: with the mix w, each sampled position's value target is
    (1 - w) z + w G, G the lambda-return of the game's root values from the position on; the manifest names
    lambda, and at 0 (the default) it does not."""
    mixed = window.build_window(
        _cfg(games_root, value_root_mix=0.5), 3, str(tmp_path / "m"), workers="threads"
    )
    out = str(tmp_path / "l")
    lam = window.build_window(
        _cfg(games_root, value_root_mix=0.5, value_root_lambda=0.7), 3, out, workers="threads"
    )
    assert "value_root_lambda" not in mixed and lam["value_root_lambda"] == 0.7
    assert mixed["rows"] == lam["rows"]  # the same positions
    records = {g["index"]: gamefile.read_game(g["path"]) for g in lam["games"]}
    moved = 0
    for ex in _all_rows(out, lam):
        for g, m, z in zip(ex.game, ex.move, ex.z, strict=True):
            record = records[int(g)]
            row = np.flatnonzero(record.full_search)[int(m)]
            p = int(np.flatnonzero(np.argsort(record.move_index, kind="stable") == row)[0])
            expected = 0.5 * float(record.value_target[row]) + 0.5 * _lambda_return(record, p, 0.7)
            assert float(z) == pytest.approx(expected, abs=2e-3)  # float16 in the shard
            moved += (
                abs(expected - (0.5 * float(record.value_target[row]) + 0.5 * record.root_value[row])) > 0.01
            )
    assert moved  # the later root values moved the targets


def test_value_root_mix_is_a_weight():
    with pytest.raises(config.ConfigError, match="window.value_root_mix"):
        _cfg("/r", value_root_mix=1.5)
    with pytest.raises(config.ConfigError, match="window.value_root_lambda"):
        _cfg("/r", value_root_mix=0.5, value_root_lambda=1.0)

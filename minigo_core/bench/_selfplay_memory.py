"""The memory probe of `python -m minigo_core.bench selfplay`: a self-play job's games, in a process of its
own that imports what a `minigo selfplay` job imports (numpy, pyarrow, the engine; no torch), so that its
peak RSS is a job's.

`python -m minigo_core.bench._selfplay_memory MODEL K READOUTS MOVES SEARCH` plays the first MOVES moves of K
games of the model's board at READOUTS readouts, every move a full search, recorded (the engine's
`stop_after_moves`: the searches see the whole game ahead, unlike `max_game_length`), writes each game's file
as the job does (and once more with its first row only), and prints one JSON line: the peak RSS in MiB, the
positions recorded, and the game files' bytes per recorded position beyond a file's fixed part (header,
metadata, moves): (bytes of all files - bytes of their one-row versions) / (positions - games).
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
import tempfile

from minigo_core.base import config as config_mod
from minigo_core.data.gamefile import game_bytes
from minigo_core.nn import modelfile
from minigo_core.search import engine
from minigo_core.selfplay import selfplay_game


def probe_config(board_size: int, features: str, readouts: int, search: str) -> config_mod.RunConfig:
    """The run config of the probe: every move a full search of `readouts`, one leaf per game per batch."""
    return config_mod.from_dict(
        {"board_size": board_size, "features": features,
         "selfplay": {"readouts": readouts, "fast_readouts": readouts, "full_search_fraction": 1.0,
                      "parallel_readouts": 1, "search": search}}
    )  # fmt: skip


def peak_rss_mib() -> int:
    """This process's peak RSS: /proc's VmHWM, the high-water mark of its own memory since its exec (Linux
    counts the spawning process's peak in `ru_maxrss`: a vfork'd child starts on its parent's memory)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def run(url: str, k: int, readouts: int, moves: int, search: str) -> dict:
    net = engine.load_network(url)  # one DSP core
    cfg = probe_config(net.cfg.board_size, net.cfg.feature_set, readouts, search)
    settings = engine.settings_for(config_mod.search_settings(cfg), net.cfg.feature_set, cfg.board_size)
    settings.stop_after_moves = moves
    games = engine.SelfplayGames(
        net, settings, board_size=cfg.board_size, komi=cfg.komi, seed=1, generation=0, first_game=0, count=k
    )
    search_meta = selfplay_game.search_metadata(cfg, "compiled")
    model = {"url": url, "generation": 0, "sha256": modelfile.digest(url)}
    full = one = positions = files = 0
    with tempfile.TemporaryDirectory(prefix="minigo-memory-probe-") as tmp:
        for game in games.finished():
            record = selfplay_game.compiled_game_record(game, cfg, net.cfg.feature_set, model, search_meta, 0)
            data = game_bytes(record)
            with open(os.path.join(tmp, f"game{game.index:05d}.arrow"), "wb") as f:
                f.write(data)
            if record.num_positions >= 2:
                first = dataclasses.replace(
                    record, move_index=record.move_index[:1], visits=record.visits[:1],
                    value_target=record.value_target[:1], full_search=record.full_search[:1],
                    root_value=record.root_value[:1],
                    policy=None if record.policy is None else record.policy[:1],
                    surprise=None if record.surprise is None else record.surprise[:1],
                )  # fmt: skip
                full += len(data)
                one += len(game_bytes(first))
                positions += record.num_positions
                files += 1
    return {
        "peak_rss_mib": peak_rss_mib(),
        "positions": positions,
        "bytes_per_position": round((full - one) / max(1, positions - files), 1),
        "search": search,
    }


if __name__ == "__main__":
    url_arg, *numbers, search_arg = sys.argv[1:]
    print(json.dumps(run(url_arg, *(int(v) for v in numbers), search_arg)))

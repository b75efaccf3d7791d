"""Game files, directories of them and model files as text a person reads (what `minigo inspect` shows).

- Game file: a summary (result, moves, positions recorded, model, seeds, search settings), the board at any
  move (the position before move K) with the search's top moves and visit counts there, and the game as SGF
  with the top moves of every recorded search as comments.
- Directory: one line per game file (result, moves, positions, bytes); bad files are named, not fatal.
- A packed generation (`data/pack.py`) reads as if loose: its game files and folder by their old paths, and
  its pack (`games/genGGGG.pack.arrow`) as its folder.
- Model file: its config, provenance and parameter count.
"""

from __future__ import annotations

import json

import numpy as np

from minigo_core.data import layout, pack, storage
from minigo_core.data.gamefile import GameFileError, GameRecord, metadata_from_bytes, result_of
from minigo_core.game import coords, sgf
from minigo_core.nn import modelfile

COLOR = {1: "Black", -1: "White"}


def top_moves(visits: np.ndarray, board_size: int, k: int = 5) -> list[tuple[str, int, float]]:
    """The k most visited moves: (GTP vertex, visits, share of all visits)."""
    total = int(visits.sum())
    order = np.argsort(-visits, kind="stable")[:k]
    return [
        (
            coords.to_gtp(coords.from_flat(int(i), board_size), board_size),
            int(visits[i]),
            visits[i] / total if total else 0.0,
        )
        for i in order
        if visits[i] > 0
    ]


def summary(record: GameRecord, url: str, size: int | None = None) -> str:
    m = record.metadata
    n = record.board_size
    lines = [
        f"game file {url}"
        + (
            f" ({size} bytes, {size / max(1, record.num_positions):.0f} bytes per recorded position)"
            if size is not None
            else ""
        )
    ]
    lines.append(
        f"  board {n}x{n}, komi {m['komi']:g}, features {m['features']}, format {m['format']} "
        f"v{m['format_version']}, software {m.get('software_version', '?')}"
    )
    model = m.get("model") or {}
    if model:
        sha = model.get("sha256") or "?"
        lines.append(f"  model {model.get('url')} (generation {model.get('generation')}, sha256 {sha[:16]})")
    seed = m.get("seed") or {}
    if seed:
        lines.append(
            f"  seed: run {seed.get('run_seed')}, generation {seed.get('generation')}, "
            f"game {seed.get('game')}"
        )
    result = m["result"]
    how = "resignation" if result.get("resigned") else f"score {result.get('score')}"
    lines.append(
        f"  result {result_of(m)} ({how}); {m['num_moves']} moves, {record.num_positions} positions recorded"
    )
    resign = m.get("resign")
    if resign:
        state = "enabled" if resign.get("enabled") else "disabled in this game"
        line = f"  resignation {state}, threshold {resign.get('threshold')}"
        if not resign.get("enabled"):
            if resign.get("would_resign_move") is None:
                line += "; no player would have resigned"
            else:
                verdict = "wrongly (it won)" if resign.get("false_positive") else "rightly (it lost)"
                line += (
                    f"; {resign.get('would_resign_color')} would have resigned at move "
                    f"{resign.get('would_resign_move')}, {verdict}"
                )
        lines.append(line)
    search = m.get("search")
    if search:
        algorithm = search.get("search", "puct")  # files written before `selfplay.search` existed: PUCT
        if algorithm == "gumbel":
            algorithm += (
                f" (m {search.get('gumbel_considered')}, c_visit {search.get('gumbel_c_visit')}, "
                f"c_scale {search.get('gumbel_c_scale')})"
            )
        lines.append(
            f"  search: {algorithm}, {search.get('readouts')} readouts on "
            f"{search.get('full_search_fraction')} of moves (recorded), "
            f"{search.get('fast_readouts')} on the rest; "
            f"batches of {search.get('parallel_readouts')}; "
            f"noise alpha {search.get('dirichlet_alpha', 0):.3g} weight {search.get('dirichlet_weight')}; "
            f"softpick {search.get('softpick_moves')} moves; unvisited {search.get('init_unvisited')}"
        )
    if record.num_positions:
        values = record.root_value
        lines.append(
            f"  root values (mover's view): first {values[0]:+.2f}, last {values[-1]:+.2f}, "
            f"min {values.min():+.2f}, max {values.max():+.2f}"
        )
    return "\n".join(lines)


def board_at(record: GameRecord, move: int, top: int = 5) -> str:
    """The position before move `move` (0-based; num_moves gives the final position) and its search."""
    n = record.board_size
    num_moves = len(record.moves)
    if not 0 <= move <= num_moves:
        raise ValueError(f"--move {move} is outside the game: use 0..{num_moves}")
    position = record.positions()[move]
    lines = [str(position)]
    if move < num_moves:
        played = coords.to_gtp(record.moves[move], n)
        lines.append(f"move {move}: {COLOR[position.to_play]} played {played}")
        rows = np.flatnonzero(record.move_index == move)
        if rows.size:
            i = int(rows[0])
            lines.append(
                f"  full search, root value {record.root_value[i]:+.3f} (mover's view), "
                f"{int(record.visits[i].sum())} visits; value target {record.value_target[i]:+.0f}"
            )
            for vertex, visits, share in top_moves(record.visits[i], n, top):
                lines.append(f"    {vertex:>5} {visits:6d} visits {share:6.1%}")
        else:
            lines.append("  fast search: not recorded (playout-cap randomisation)")
    else:
        lines.append(f"final position; result {result_of(record.metadata)}")
        lines += ownership_lines(record, position)
    return "\n".join(lines)


def ownership_lines(record: GameRecord, final) -> list[str]:
    """The auxiliary targets of the game: the final Tromp-Taylor ownership map and score margin."""
    if record.resigned:
        return ["  resigned: the board is not finished, so its positions train no ownership/score target"]
    n = record.board_size
    own = final.ownership().reshape(n, n)
    mark = {1: "B", -1: "W", 0: "."}
    lines = [f"  ownership target (Tromp-Taylor; B Black's, W White's, . neither), score {final.score():+g}:"]
    lines += ["    " + " ".join(mark[int(v)] for v in row) for row in own]
    return lines


def sgf_comments(record: GameRecord, top: int = 5) -> list[str | None]:
    comments: list[str | None] = [None] * len(record.moves)
    n = record.board_size
    for i, k in enumerate(record.move_index):
        tops = ", ".join(f"{v} {c} ({s:.0%})" for v, c, s in top_moves(record.visits[i], n, top))
        comments[int(k)] = (
            f"root value {record.root_value[i]:+.3f}; {int(record.visits[i].sum())} visits: {tops}"
        )
    return comments


def game_sgf(record: GameRecord, top: int = 5) -> bytes:
    """The game as SGF (via sgfmill), the top moves of every recorded search as comments."""

    model = record.metadata.get("model") or {}
    name = f"minigo gen{model.get('generation')}" if model else "minigo"
    return sgf.write_sgf(
        record.moves,
        record.board_size,
        record.komi,
        result_of(record.metadata),
        comments=sgf_comments(record, top),
        players=(name, name),
    )


def inspect_directory(url: str) -> str:
    """One line per game file of a folder, loose or packed (a pack file stands for its folder)."""
    if url.endswith(layout.PACK_SUFFIX):
        url = url[: -len(layout.PACK_SUFFIX)]
    lines = [f"{'file':<24} {'result':>8} {'moves':>6} {'positions':>9} {'bytes':>7}"]
    bad = 0
    for path in pack.list_folder(url, layout.GAME_SUFFIX):
        name = path.rsplit("/", 1)[-1]
        try:
            data = pack.read_member(path)
            m = metadata_from_bytes(data, path)
        except (GameFileError, OSError) as exc:
            bad += 1
            lines.append(f"{name:<24} BAD: {exc}")
            continue
        size = len(data)
        lines.append(f"{name:<24} {result_of(m):>8} {m['num_moves']:>6} {m['num_positions']:>9} {size:>7}")
    lines.append(f"{len(lines) - 1} game files, {bad} bad")
    return "\n".join(lines)


def inspect_model(url: str) -> str:

    data = modelfile.read_bytes(url)
    f = modelfile.decode(url, data)
    buffers = ("running_mean", "running_var", "num_batches_tracked")  # BN statistics, not parameters
    params = sum(int(a.size) for k, a in f.tensors.items() if not k.endswith(buffers))
    lines = [
        f"model file {url} (format version {f.format_version}, sha256 {modelfile.sha256(data)[:16]})",
        f"  config: {json.dumps(f.config.to_dict())}",
        f"  parameters: {params}",
        f"  provenance: {json.dumps(f.provenance, sort_keys=True)}",
    ]
    return "\n".join(lines)


def kind_of(url: str) -> str:
    """`directory`, `model` (a safetensors or format-1 zip file) or `game`: what `minigo inspect` shows. A
    packed generation's file or folder is what it was, its pack a directory."""
    fs, path = storage.fs_and_path(url)
    if not fs.exists(path):
        where = pack.locate(url)
        if not pack.exists(url) or where is None:
            raise FileNotFoundError(f"{url} does not exist")
        return "game" if where[1].endswith(layout.GAME_SUFFIX) and url.endswith(where[1]) else "directory"
    if fs.isdir(path) or path.endswith(layout.PACK_SUFFIX):
        return "directory"
    with fs.open(path, "rb") as handle:
        head = handle.read(4096)
    safetensors = len(head) > 8 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < 1 << 30
    if head.startswith(b"PK") or safetensors or path.endswith((".safetensors", ".pt")):
        return "model"  # a safetensors file (8-byte header length, JSON header), or a format-1 zip
    return "game"

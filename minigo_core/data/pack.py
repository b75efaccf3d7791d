"""A generation's pack: its game files, job records and self-play logs in one Arrow IPC file, once no
window reads them (`storage.pack_old_generations`), so that a run's file count does not grow by thousands of
files a generation.

`games/genGGGG.pack.arrow` is an Arrow IPC *file* (random access; no compression: the game files inside are
zstd-compressed already, and an uncompressed file is memory-mapped without a copy), one row per member:

    kind      string        jobrecord, log or game
    path      string        the member's path relative to the run root (games/gen0002/game00042.arrow)
    size      int64         its bytes
    sha256    string        their SHA-256 (hex)
    mtime     float64       the loose file's modification time (epoch seconds), restored by `unpack`
    data      large_binary  the file's bytes, unchanged

in job order: a job's record, its log (when there is one), then its games in the record's order. Schema
metadata `minigo`: `{"format": "minigo-pack", "format_version": 1, "generation": g, "members": n}`.

Packing (`pack_generation`) is safe to kill anywhere and to rerun:

1. read the job records, logs and game files; each game's SHA-256 must be its record's (or the game is one
   the games-complete marker already lists as bad: packed as it is); otherwise nothing is written;
2. write the pack under a temporary name, fsync it, rename it into place, fsync the directory;
3. re-read it: every member's bytes against its SHA-256, every game against its job's record, and the
   members against what step 1 read; a rerun that finds the pack checks it the same way;
4. delete the loose files, each only if its bytes are its packed copy's, then their empty folders.

So at any moment a generation is either loose (before the rename), or packed with some loose files left
(after it); both read the same (`read_member`, `game_urls`: the pack wins where both hold a file, and a loose
file that vanishes while being read is read from the pack). `unpack_generation` writes the loose files back
(same bytes, same modification times), then removes the pack's marker and the pack.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa
import pyarrow.ipc as ipc

from minigo_core.base.config import RunConfig
from minigo_core.data import games_complete, jobrecord, layout, storage
from minigo_core.data.schedule import selfplay_job_count

log = logging.getLogger(__name__)

PACK_FORMAT = "minigo-pack"
PACK_VERSION = 1
PACKED_FORMAT = "minigo-packed"
METADATA_KEY = b"minigo"
KINDS = ("jobrecord", "log", "game")
SCHEMA = pa.schema(
    [
        ("kind", pa.string()),
        ("path", pa.string()),
        ("size", pa.int64()),
        ("sha256", pa.string()),
        ("mtime", pa.float64()),
        ("data", pa.large_binary()),
    ]
)
BATCH_MEMBERS = 256  # members per record batch (a batch of 19x19 games is a few MB)
# a file of a generation that a pack holds: games/genGGGG/NAME or logs/selfplay/genGGGG/NAME
_MEMBER = re.compile(r"^(?:(?P<root>.*)/)?(?P<rel>(?:games|logs/selfplay)/gen(?P<gen>\d{4,})/[^/]+)$")
_BAD_GAME = re.compile(r"(game\d+\.arrow)\b")

Checkpoint = Callable[[str], None]


class PackError(ValueError):
    """A pack cannot be written, read or trusted; the message names the file and what to do."""


def _nothing(step: str) -> None:
    """The default checkpoint: the steps of a pack are named so that a test can stop at each."""


@dataclass(frozen=True)
class Member:
    kind: str
    path: str  # relative to the run root
    size: int
    sha256: str
    mtime: float
    data: bytes | None = None  # held while packing; `Pack.read` gives a packed member's bytes


def rel_path(url: str) -> str:
    """A layout path built on the root "" as a path relative to the run root."""
    return url.lstrip("/")


# ------------------------------------------------------------------------------------------------ reading
class Pack:
    """An open pack (memory-mapped when local): its members, and any member's bytes."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            if "://" in url:
                source = pa.BufferReader(storage.read_bytes(url))
            else:
                source = pa.memory_map(url)
            reader = ipc.open_file(source)
            meta = json.loads((reader.schema.metadata or {})[METADATA_KEY])
            self.table = reader.read_all()
        except FileNotFoundError:
            raise
        except (pa.ArrowException, OSError, ValueError, KeyError, TypeError) as exc:
            raise PackError(f"pack {url} is unreadable ({type(exc).__name__}: {exc}); {_RECOVER}") from None
        if not isinstance(meta, dict) or meta.get("format") != PACK_FORMAT:
            raise PackError(f"{url} is not a MiniGo pack (metadata format is not {PACK_FORMAT!r})")
        if meta.get("format_version") != PACK_VERSION:
            raise PackError(
                f"pack {url} has format version {meta.get('format_version')!r}; this software reads version "
                f"{PACK_VERSION}: unpack it with the software version that wrote it"
            )
        if not self.table.schema.remove_metadata().equals(SCHEMA):
            raise PackError(
                f"pack {url} has columns {self.table.schema.names}, not {SCHEMA.names}; {_RECOVER}"
            )
        self.generation = int(meta.get("generation", -1))
        self.paths: list[str] = self.table.column("path").to_pylist()
        self.index = {p: i for i, p in enumerate(self.paths)}

    def __contains__(self, rel: str) -> bool:
        return rel in self.index

    def members(self) -> list[Member]:
        """Every member without its bytes, in the pack's order."""
        cols = [self.table.column(c).to_pylist() for c in ("kind", "path", "size", "sha256", "mtime")]
        return [Member(*row) for row in zip(*cols, strict=True)]

    def read(self, rel: str) -> bytes:
        """A member's bytes (KeyError naming the pack if it holds no such member)."""
        if rel not in self.index:
            raise KeyError(f"pack {self.url} holds no {rel}")
        return self.table.column("data")[self.index[rel]].as_py()

    def damaged(self) -> list[str]:
        """The members whose bytes are not their recorded size and SHA-256 (`path: why`)."""
        out = []
        for m in self.members():
            data = self.read(m.path)
            if len(data) != m.size or storage.sha256_bytes(data) != m.sha256:
                out.append(f"{m.path}: {len(data)} bytes whose SHA-256 is not the one recorded")
        return out


_RECOVER = (
    "if its loose files are still all there, delete it and rerun the pack; otherwise restore it from a "
    "backup, or delete it and its .packed.json and replay the generation's self-play (README)"
)


def open_pack(url: str) -> Pack | None:
    """The pack at `url`, None when there is none; cached per process while the file is unchanged."""
    if "://" in url:
        return _open_cached(url, 0, 0) if storage.exists(url) else None
    try:
        st = os.stat(url)
    except FileNotFoundError:
        return None
    return _open_cached(url, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _open_cached(url: str, mtime_ns: int, size: int) -> Pack:
    return Pack(url)


def _fresh(url: str) -> Pack | None:
    try:
        return Pack(url)
    except FileNotFoundError:
        return None


def locate(url: str) -> tuple[str, str] | None:
    """(pack, member path) of a generation's file (`{root}/games/gen0002/game00042.arrow`, a job record,
    a self-play log) or folder (`{root}/games/gen0002`); None for any other path."""
    url = str(url).rstrip("/")
    m = _MEMBER.match(url) or _MEMBER.match(url + "/x")
    if m is None:
        return None
    gen, root = int(m.group("gen")), m.group("root")
    pack = layout.pack_path(root, gen) if root else rel_path(layout.pack_path("", gen))
    rel = m.group("rel")
    return pack, rel if _MEMBER.match(url) else rel.rsplit("/", 1)[0]


def read_member(url: str) -> bytes:
    """The bytes of a generation's file, from its pack if the generation is packed, else the loose file
    (FileNotFoundError naming both when neither holds it)."""
    where = locate(url)
    pack = open_pack(where[0]) if where else None
    if pack is not None and where[1] in pack:
        return pack.read(where[1])
    try:
        return storage.read_bytes(url)
    except FileNotFoundError:
        pack = open_pack(where[0]) if where else None  # packed (and deleted) meanwhile
        if pack is not None and where[1] in pack:
            return pack.read(where[1])
        also = f" nor in {where[0]}" if where else ""
        raise FileNotFoundError(f"{url} does not exist (not as a file{also})") from None


def list_folder(url: str, suffix: str = "") -> list[str]:
    """The finished files of a folder of a generation (`{root}/games/gen0002`), loose or packed, as loose
    paths (`read_member` reads each), sorted: the same list whether the generation is packed or not."""
    url = str(url).rstrip("/")
    urls = set(storage.list_files(url, suffix))
    where = locate(url)
    pack = open_pack(where[0]) if where else None
    if pack is not None:
        prefix = where[1] + "/"
        names = [p[len(prefix) :] for p in pack.paths if p.startswith(prefix)]
        urls.update(storage.join(url, n) for n in names if n.endswith(suffix) and "/" not in n)
    return sorted(urls)


def game_urls(root: str, generation: int) -> list[str]:
    """The game files of a generation, loose or packed (`list_folder`)."""
    return list_folder(layout.games_dir(root, generation), layout.GAME_SUFFIX)


def exists(url: str) -> bool:
    """Whether a generation's file or folder exists, loose or in its pack."""
    if storage.exists(url):
        return True
    where = locate(url)
    pack = open_pack(where[0]) if where else None
    return pack is not None and (where[1] in pack or any(p.startswith(where[1] + "/") for p in pack.paths))


def is_packed(root: str, generation: int) -> bool:
    return storage.exists(layout.pack_path(root, generation))


# ------------------------------------------------------------------------------------------------ packing
def _member(kind: str, root: str, rel: str) -> Member | None:
    url = storage.join(root, rel)
    try:
        data = storage.read_bytes(url)
    except FileNotFoundError:
        return None
    mtime = storage.mtime(url) or 0.0
    return Member(kind, rel, len(data), storage.sha256_bytes(data), float(mtime), data)


def known_bad_games(marker: dict) -> set[str]:
    """The game file names the games-complete marker lists as bad (packed as they are, or absent)."""
    found = set()
    for entry in marker.get("bad_files") or []:
        m = _BAD_GAME.search(str(entry).split(": ", 1)[0])
        if m:
            found.add(m.group(1))
    return found


def _parse_record(data: bytes, url: str) -> dict:
    try:
        record = json.loads(data)
    except ValueError as exc:
        raise PackError(f"self-play job record {url} is unreadable ({exc}); rerun its job first") from None
    if not isinstance(record, dict) or record.get("format") != jobrecord.RECORD_FORMAT:
        raise PackError(f"{url} is not a self-play job record; rerun its job first")
    return record


def _games_of(record: dict, generation: int, url: str) -> Iterator[tuple[str, str]]:
    """(member path, recorded SHA-256) of each game a job record lists."""
    try:
        for entry in record["files"]:
            yield rel_path(layout.game_path("", generation, int(entry["game"]))), str(entry["sha256"])
    except (KeyError, TypeError, ValueError) as exc:
        raise PackError(
            f"self-play job record {url} lists its games wrongly ({exc}); rerun its job"
        ) from None


def loose_members(cfg: RunConfig, generation: int, marker: dict) -> list[Member]:
    """The loose files of a generation, read and checked: every job's record (all must exist), its log (if
    any), its games, each with its record's SHA-256 unless the marker lists it as bad. PackError naming
    every problem; then nothing is written or deleted."""
    bad = known_bad_games(marker)
    members: list[Member] = []
    problems = []
    for job in range(selfplay_job_count(cfg)):
        rel = rel_path(layout.selfplay_job_path("", generation, job))
        record_member = _member("jobrecord", cfg.root, rel)
        if record_member is None:
            problems.append(f"{storage.join(cfg.root, rel)} is missing")
            continue
        members.append(record_member)
        log_member = _member("log", cfg.root, rel_path(layout.selfplay_log_path("", generation, job)))
        members += [log_member] if log_member is not None else []
        record = _parse_record(record_member.data or b"", storage.join(cfg.root, rel))
        for game, sha in _games_of(record, generation, storage.join(cfg.root, rel)):
            m = _member("game", cfg.root, game)
            name = game.rsplit("/", 1)[-1]
            if m is None and name not in bad:
                problems.append(f"{storage.join(cfg.root, game)} is missing, though {rel} lists it")
            elif m is not None and m.sha256 != sha and name not in bad:
                problems.append(f"{storage.join(cfg.root, game)} is not the file its job wrote ({rel})")
            elif m is not None:
                members.append(m)
    if problems:
        raise PackError(
            f"generation {generation} cannot be packed, nothing was written or deleted: "
            + "; ".join(problems[:10])
            + (f" and {len(problems) - 10} more" if len(problems) > 10 else "")
            + "; rerun games-complete for it (`--forcerun games_complete`), which names the jobs to replay"
        )
    return members


def _fsync_dir(url: str) -> None:
    if "://" in url:
        return
    with contextlib.suppress(OSError):
        fd = os.open(os.path.dirname(url) or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_pack(url: str, generation: int, members: list[Member], checkpoint: Checkpoint = _nothing) -> None:
    """The pack of `members` at `url`: a temporary name, fsync, rename, fsync of the directory."""
    meta = {"format": PACK_FORMAT, "format_version": PACK_VERSION, "generation": generation}
    meta["members"] = len(members)
    schema = SCHEMA.with_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True)})
    with storage.atomic_open(url) as handle:
        with ipc.new_file(handle, schema) as writer:
            for start in range(0, len(members), BATCH_MEMBERS):
                chunk = members[start : start + BATCH_MEMBERS]
                columns = [
                    [m.kind for m in chunk],
                    [m.path for m in chunk],
                    [m.size for m in chunk],
                    [m.sha256 for m in chunk],
                    [m.mtime for m in chunk],
                    [m.data for m in chunk],
                ]
                writer.write_batch(pa.record_batch(columns, schema=schema))
        checkpoint("written")
    _fsync_dir(url)
    checkpoint("renamed")


def verify(pack: Pack, cfg: RunConfig, generation: int, marker: dict) -> list[str]:
    """What is wrong with a generation's pack: a member's bytes not its SHA-256, a job record missing, a
    game not its record's (unless the marker lists it as bad), a game no record lists."""
    problems = pack.damaged()
    bad = known_bad_games(marker)
    recorded: dict[str, str] = {}
    for job in range(selfplay_job_count(cfg)):
        rel = rel_path(layout.selfplay_job_path("", generation, job))
        if rel not in pack:
            problems.append(f"{rel}: the job record is not in the pack")
            continue
        recorded.update(_games_of(_parse_record(pack.read(rel), f"{pack.url}:{rel}"), generation, rel))
    sums = {m.path: m.sha256 for m in pack.members() if m.kind == "game"}
    for game, sha in recorded.items():
        if game.rsplit("/", 1)[-1] in bad:
            continue
        if game not in sums:
            problems.append(f"{game}: listed by its job's record, not in the pack")
        elif sums[game] != sha:
            problems.append(f"{game}: not the file its job's record names (SHA-256 differs)")
    problems += [f"{game}: in the pack, but no job record lists it" for game in sums if game not in recorded]
    return problems


def remove_loose(root: str, pack: Pack, checkpoint: Checkpoint = _nothing) -> int:
    """Delete the loose files the pack holds (each only if its bytes are the packed copy's), then their
    folders if empty; returns the files deleted. PackError (nothing more deleted) for one that differs."""
    removed = 0
    folders = set()
    for m in pack.members():
        url = storage.join(root, m.path)
        folders.add(url.rsplit("/", 1)[0])
        try:
            data = storage.read_bytes(url)
        except FileNotFoundError:
            continue
        if storage.sha256_bytes(data) != m.sha256:
            raise PackError(
                f"{url} differs from its copy in {pack.url}; it was kept (and every file after it): find out "
                "which one is right, delete the other (or `minigo unpack`), then rerun the pack"
            )
        fs, path = storage.fs_and_path(url)
        fs.rm(path)
        removed += 1
        checkpoint(f"removed {m.path}")
    for folder in sorted(folders):
        fs, path = storage.fs_and_path(folder)
        left = [p for p in (fs.ls(path, detail=False) if fs.exists(path) else [])]
        if left:
            log.warning("%s keeps %d files no job record lists: %s", folder, len(left), ", ".join(left[:5]))
        elif fs.exists(path):
            fs.rmdir(path)
    return removed


def packed_summary(pack: Pack, generation: int) -> dict:
    """The pack job's marker (`games/genGGGG.packed.json`): deterministic (a rerun writes the same bytes)."""
    members = pack.members()
    games = [m for m in members if m.kind == "game"]
    listing = "".join(f"{m.path} {m.sha256}\n" for m in games).encode()
    return {
        "format": PACKED_FORMAT,
        "generation": generation,
        "pack": pack.url.rsplit("/", 1)[-1],
        "games": len(games),
        "job_records": sum(m.kind == "jobrecord" for m in members),
        "logs": sum(m.kind == "log" for m in members),
        "game_bytes": sum(m.size for m in games),
        "games_sha256": storage.sha256_bytes(listing),
    }


def pack_generation(cfg: RunConfig, generation: int, checkpoint: Checkpoint = _nothing) -> dict:
    """Pack a generation (see the module docstring); returns its marker's content. Idempotent: a rerun after
    a kill at any step finishes the job. PackError names what is wrong and what to do; nothing is lost."""
    root = cfg.root
    url = layout.pack_path(root, generation)
    marker = games_complete.read_marker(root, generation)
    if marker is None:
        raise PackError(
            f"generation {generation}'s games are not complete "
            f"({layout.complete_marker_path(root, generation)} is missing or unreadable): nothing to pack "
            "before its games-complete job ran"
        )
    storage.remove_stale_temporaries([url])  # left by a pack killed before its rename
    pack = _fresh(url)
    if pack is None:
        members = loose_members(cfg, generation, marker)
        checkpoint("collected")
        write_pack(url, generation, members, checkpoint)
        pack = Pack(url)
        read = [(m.kind, m.path, m.sha256) for m in members]
        if [(m.kind, m.path, m.sha256) for m in pack.members()] != read:
            raise PackError(
                f"pack {url} does not hold what was read; nothing was deleted: delete it and rerun"
            )
        del members
    problems = verify(pack, cfg, generation, marker)
    if problems:
        raise PackError(
            f"pack {url} failed its check, nothing was deleted: {'; '.join(problems[:10])}; {_RECOVER}"
        )
    checkpoint("verified")
    removed = remove_loose(root, pack, checkpoint)
    checkpoint("removed")
    log.info("generation %d: %d members packed into %s, %d loose files deleted", generation,
             len(pack.paths), url, removed)  # fmt: skip
    return packed_summary(pack, generation)


def write_packed_marker(url: str, summary: dict) -> None:
    storage.remove_stale_temporaries([url])  # left by a pack job killed while writing its marker
    storage.write_text(url, json.dumps(summary, indent=1) + "\n")


def unpack_generation(cfg: RunConfig, generation: int, checkpoint: Checkpoint = _nothing) -> int:
    """Write a packed generation's files back (same bytes and modification times), then remove its
    `.packed.json` and its pack; returns the files written. A kill leaves the pack: rerun."""
    root = cfg.root
    url = layout.pack_path(root, generation)
    pack = _fresh(url)
    if pack is None:
        raise PackError(f"generation {generation} is not packed: there is no {url}")
    damaged = pack.damaged()
    if damaged:
        raise PackError(f"pack {url} is damaged ({'; '.join(damaged[:5])}); nothing was unpacked; {_RECOVER}")
    written = 0
    for m in pack.members():
        loose = storage.join(root, m.path)
        with contextlib.suppress(FileNotFoundError):
            if storage.sha256_bytes(storage.read_bytes(loose)) == m.sha256:
                continue
            raise PackError(f"{loose} exists and differs from its copy in {url}; move it away and rerun")
        storage.write_bytes(loose, pack.read(m.path))
        if "://" not in loose and m.mtime:
            os.utime(loose, (m.mtime, m.mtime))
        written += 1
        checkpoint(f"wrote {m.path}")
    for done in (layout.packed_marker_path(root, generation), url):
        fs, path = storage.fs_and_path(done)
        with contextlib.suppress(FileNotFoundError):
            fs.rm(path)
        checkpoint(f"removed {done.rsplit('/', 1)[-1]}")
    return written

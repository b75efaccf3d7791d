"""The full disk of a `disk-full` kill: run B's root on a size-limited tmpfs of its own (root only), filled to
the last byte at the kill's moment and freed when that Snakemake attempt has ended, before the next one. At
the end the tmpfs goes and its files stay, copied into a plain directory of the same path."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

FILLER = "chaos-disk-filler"  # not a run artifact: deleted before the next attempt


class SmallDisk:
    """A tmpfs of `size_mb` mounted at `root` (an empty directory); `fill` writes a filler file until the
    filesystem is full, `free` deletes it, `unmount` takes the tmpfs away (its files with it)."""

    def __init__(self, root: Path, size_mb: int) -> None:
        self.root, self.size_mb = root, size_mb
        self.filler = root / FILLER
        self.mounted = False

    def mount(self) -> None:
        """Mount the tmpfs; RuntimeError says why not (not root, no tmpfs)."""
        if os.geteuid() != 0:
            raise RuntimeError("disk-full mounts a size-limited tmpfs as run B's root: run as root")
        self.root.mkdir(parents=True, exist_ok=True)
        argv = ["mount", "-t", "tmpfs", "-o", f"size={self.size_mb}m", "tmpfs", str(self.root)]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"cannot mount a tmpfs at {self.root}: {proc.stderr.strip()}")
        self.mounted = True

    def fill(self) -> int:
        """Write the filler until a write fails (ENOSPC); the bytes it holds."""
        with open(self.filler, "ab", buffering=0) as handle:
            for block in (1 << 20, 4096, 1):
                with contextlib.suppress(OSError):
                    while True:
                        handle.write(b"\0" * block)
        return self.filler.stat().st_size

    def free(self) -> bool:
        """Delete the filler; whether there was one."""
        try:
            self.filler.unlink()
        except FileNotFoundError:
            return False
        return True

    def unmount(self) -> None:
        """Take the tmpfs away, its files copied first into a plain directory of the same path."""
        if not self.mounted:
            return
        self.free()
        kept = self.root.with_name(self.root.name + ".kept")
        shutil.copytree(self.root, kept, symlinks=True)
        subprocess.run(["umount", "-l", str(self.root)], capture_output=True)
        self.mounted = False
        shutil.rmtree(self.root, ignore_errors=True)
        kept.rename(self.root)

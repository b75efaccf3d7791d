"""A bounded buffer of ready training batches, filled by background threads.

`Prefetcher(make_batch, start, stop, capacity, threads)` yields `make_batch(i)` for i = start .. stop-1 in
order. Background threads compute up to `capacity` batches ahead (read, decompress, unpack bits, augment);
the consumer waits only when the next batch is not ready yet, and `wait_s` is the total time it waited.
With `threads=0` nothing runs ahead: each batch is made on demand in the consumer's thread and all of that
time counts as waiting (the "prefetch off" baseline).

`make_batch(i)` must be a pure function of `i` (its randomness seeded from `i`), so the batches and their
order do not depend on thread timing; that is what makes training deterministic and resumable at any step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Prefetcher(Generic[T]):
    def __init__(
        self, make_batch: Callable[[int], T], start: int, stop: int, capacity: int = 8, threads: int = 1
    ) -> None:
        if capacity < 1:
            raise ValueError(f"prefetch capacity must be >= 1, got {capacity}")
        self._make = make_batch
        self._start, self._stop = start, stop
        self._threads = threads
        self._slots = threading.Semaphore(capacity)
        self._cond = threading.Condition()
        self._ready: dict[int, T] = {}
        self._next_claim = start
        self._error: BaseException | None = None
        self._closed = False
        self._workers: list[threading.Thread] = []
        self.wait_s = 0.0
        self.first_wait_s = 0.0  # the wait for the first batch (start-up, before anything could run ahead)
        self.batches = 0

    def _work(self) -> None:
        while True:
            self._slots.acquire()
            with self._cond:
                if self._closed or self._error is not None or self._next_claim >= self._stop:
                    self._slots.release()
                    return
                i = self._next_claim
                self._next_claim += 1
            try:
                batch = self._make(i)
            except BaseException as exc:  # handed to the consumer, which raises it
                with self._cond:
                    self._error = exc
                    self._cond.notify_all()
                return
            with self._cond:
                self._ready[i] = batch
                self._cond.notify_all()

    def __iter__(self) -> Iterator[T]:
        if self._threads > 0:
            for k in range(self._threads):
                worker = threading.Thread(target=self._work, name=f"prefetch-{k}", daemon=True)
                worker.start()
                self._workers.append(worker)
        try:
            for i in range(self._start, self._stop):
                t0 = time.perf_counter()
                if self._threads == 0:
                    batch = self._make(i)
                else:
                    with self._cond:
                        while i not in self._ready and self._error is None:
                            self._cond.wait()
                        if i not in self._ready:
                            raise RuntimeError(f"preparing training batch {i} failed: {self._error}") from (
                                self._error
                            )
                        batch = self._ready.pop(i)
                    self._slots.release()
                waited = time.perf_counter() - t0
                self.wait_s += waited
                if self.batches == 0:
                    self.first_wait_s = waited
                self.batches += 1
                yield batch
        finally:
            self.close()

    def close(self) -> None:
        """Stop the background threads (batches being made are finished and dropped)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for _ in self._workers:
            self._slots.release()
        for worker in self._workers:
            worker.join()
        self._workers.clear()

"""A search that stops at a time budget: growing chunks of readouts on a kept tree until one would not fit.

Both searches a model player uses keep their tree when asked about the same position again, and each call
adds its readouts to it (`mcts.MCTSPlayer.search`: `set_root` returns the current root;
`engine.Searcher.search`: `Tree::set_root` keeps a position equal to the root and `begin_search` starts a
fresh budget of readouts). So a timed search is the same search cut into chunks, with the clock read between
them. Each chunk after the first is as many readouts as the search holds so far, so the last one, whose
Gumbel sequential halving chooses the move, is a large share of them; a last chunk that the budget would cut
below a quarter of the readouts so far is not started.

What fits in the time left is estimated at the slower of two rates: the search's so far and its last
chunk's. A readout costs more as the tree grows (deeper descents, more of the tree out of cache), so the
rate so far, which the cheap first readouts flatter, would plan a last chunk that overruns the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
DEFAULT_MAX_READOUTS = 50_000  # a timed search's ceiling: high enough that the clock, not it, ends the search


def search_for(
    step: Callable[[int], T],
    seconds: float,
    max_readouts: int,
    first_chunk: int,
    clock: Callable[[], float] = time.perf_counter,
) -> T:
    """Call `step(n)` (n more readouts) with n = `first_chunk`, then doubling, until `max_readouts` or until
    the next chunk, at the slower of the rate so far and the last chunk's, would end past `seconds` from the
    start; returns the last result."""
    start = clock()
    done = last = min(first_chunk, max_readouts)
    result = step(done)
    last_end = clock()
    last_took = last_end - start
    while done < max_readouts:
        elapsed = last_end - start
        per_readout = max(elapsed / done, last_took / last)
        room = int((seconds - elapsed) / per_readout) if per_readout > 0 else max_readouts
        n = min(done, max_readouts - done, room)
        if n < max(min(first_chunk, max_readouts - done), done // 4):
            break
        result = step(n)
        now = clock()
        done, last, last_took, last_end = done + n, n, now - last_end, now
    return result

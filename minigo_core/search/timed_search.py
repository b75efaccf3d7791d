"""A search that stops at a time budget: growing chunks of readouts on a kept tree until one would not fit.

Both searches a model player uses keep their tree when asked about the same position again, and each call
adds its readouts to it (`mcts.MCTSPlayer.search`: `set_root` returns the current root;
`engine.Searcher.search`: `Tree::set_root` keeps a position equal to the root and `begin_search` starts a
fresh budget of readouts). So a timed search is the same search cut into chunks, with the clock read between
them. Each chunk after the first is as many readouts as the search holds so far, so the last one, whose
Gumbel sequential halving chooses the move, is a large share of them; a last chunk that the budget would cut
below a quarter of the readouts so far is not started.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def search_for(
    step: Callable[[int], T],
    seconds: float,
    max_readouts: int,
    first_chunk: int,
    clock: Callable[[], float] = time.perf_counter,
) -> T:
    """Call `step(n)` (n more readouts) with n = `first_chunk`, then doubling, until `max_readouts` or until
    the next chunk, at the rate so far, would end past `seconds` from the start; returns the last result."""
    start = clock()
    done = min(first_chunk, max_readouts)
    result = step(done)
    while done < max_readouts:
        elapsed = clock() - start
        room = int((seconds - elapsed) * done / elapsed) if elapsed > 0 else max_readouts
        n = min(done, max_readouts - done, room)
        if n < max(min(first_chunk, max_readouts - done), done // 4):
            break
        result = step(n)
        done += n
    return result

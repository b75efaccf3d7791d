"""Pass-alive areas by Benson's algorithm (Benson 1976, "Life in the game of Go"): KataGo's two input planes
of the side to move's and the opponent's pass-alive area, the `passalive` feature set (features.py).

For a colour C, a *region* is a maximal connected set of points that are not C's stones (empty points and
the opponent's stones), and a region is *vital* to a C chain when every empty point of the region is a
liberty of that chain. Benson's algorithm starts from all of C's chains and all regions and removes, until
nothing changes, every chain with fewer than two vital regions left and every region that borders a removed
chain. The chains left are *unconditionally alive*: the opponent cannot capture them even if C passes every
move. C's pass-alive area is those chains' stones and the regions left that are vital to one of them: every
empty point there touches an alive chain, so the opponent cannot make an eye in it (its stones there are
dead), as KataGo marks the area with its big territories left out.

A 4-block net sees 9 points across at most; whether a group far away has two eyes it cannot read. The native
engine computes the same planes (`pass_alive_area` in csrc/board.cpp, compared point for point on random games
by tests/unit/test_benson.py).
"""

from __future__ import annotations

import numpy as np

from minigo_core.game.go import EMPTY, Position


def _regions(colors: list[int], neighbors: list, color: int) -> tuple[list[int], list[list[int]]]:
    """The region index of every point (-1 on `color`'s stones) and each region's points."""
    region = [-1] * len(colors)
    points: list[list[int]] = []
    for start, c in enumerate(colors):
        if c == color or region[start] >= 0:
            continue
        region[start] = len(points)
        members, stack = [start], [start]
        while stack:
            for q in neighbors[stack.pop()]:
                if colors[q] != color and region[q] < 0:
                    region[q] = len(points)
                    members.append(q)
                    stack.append(q)
        points.append(members)
    return region, points


def pass_alive_area(position: Position, color: int) -> np.ndarray:
    """Bool `(N, N)`: `color`'s pass-alive area, its unconditionally alive chains' stones and the regions they
    enclose that are vital to one of them (the module's docstring)."""
    colors, gid, groups = position._colors, position._gid, position._groups
    neighbors = position._geom.neighbors
    _, points = _regions(colors, neighbors, color)
    border = [{gid[q] for p in pts for q in neighbors[p] if colors[q] == color} for pts in points]
    vital = []
    for pts, chains in zip(points, border, strict=True):
        empties = [p for p in pts if colors[p] == EMPTY]
        vital.append({g for g in chains if all(p in groups[g][1] for p in empties)})
    alive = {gid[p] for p, c in enumerate(colors) if c == color}
    live_regions = set(range(len(points)))
    while True:
        dead = {g for g in alive if sum(g in vital[i] for i in live_regions) < 2}
        alive -= dead
        gone = {i for i in live_regions if not border[i] <= alive}
        live_regions -= gone
        if not dead and not gone:
            break
    out = np.zeros(len(colors), dtype=bool)
    for g in alive:
        out[list(groups[g][0])] = True
    for i in live_regions:
        if vital[i] & alive:
            out[points[i]] = True
    n = position.board_size
    return out.reshape(n, n)


def pass_alive_planes(position: Position) -> tuple[np.ndarray, np.ndarray]:
    """uint8 `(N, N)` each: the side to move's pass-alive area, then the opponent's."""
    me = position.to_play
    return (pass_alive_area(position, me).astype(np.uint8), pass_alive_area(position, -me).astype(np.uint8))

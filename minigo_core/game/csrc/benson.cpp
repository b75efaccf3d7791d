// Pass-alive areas by Benson's algorithm: benson.py's, point for point (its docstring says the rules). A
// region is a maximal connected set of points that are not colour c's stones; it is vital to a chain of c
// when every empty point of it is a liberty of the chain. Chains with fewer than two vital regions left, and
// the regions that border such a chain, are removed until nothing changes; the chains left are
// unconditionally alive, and c's area is their stones and the regions left that are vital to one of them.

#include <algorithm>
#include <cstring>

#include "board.h"

namespace mgengine {

namespace {

// the (region, chain) borders of c's regions: each pair once, with whether the region is vital to the chain
struct Border {
  int16_t region, chain;
  bool vital;
};

}  // namespace

void pass_alive_area(const Board& b, int c, uint8_t* out) {
  const int n2 = b.n2;
  const int N = b.N;
  int16_t region[kMaxPoints];
  int16_t stack[kMaxPoints];
  int16_t order[kMaxPoints];  // the points region by region; start[r] .. start[r + 1] - 1 are region r's
  int16_t start[kMaxPoints + 1];
  std::fill(region, region + n2, static_cast<int16_t>(-1));
  auto neighbours = [&](int p, auto&& visit) {
    const int x = p % N, y = p / N;
    if (y > 0) visit(p - N);
    if (y < N - 1) visit(p + N);
    if (x > 0) visit(p - 1);
    if (x < N - 1) visit(p + 1);
  };
  int regions = 0, placed = 0;
  for (int s = 0; s < n2; ++s) {
    if (b.color[s] == c || region[s] >= 0) continue;
    start[regions] = static_cast<int16_t>(placed);
    int top = 0;
    region[s] = static_cast<int16_t>(regions);
    stack[top++] = static_cast<int16_t>(s);
    while (top > 0) {
      const int p = stack[--top];
      order[placed++] = static_cast<int16_t>(p);
      neighbours(p, [&](int q) {
        if (b.color[q] != c && region[q] < 0) {
          region[q] = static_cast<int16_t>(regions);
          stack[top++] = static_cast<int16_t>(q);
        }
      });
    }
    ++regions;
  }
  start[regions] = static_cast<int16_t>(placed);
  // each region's bordering chains (by group root), and whether every empty point of it touches the chain
  Border borders[4 * kMaxPoints];
  int nb = 0;
  int16_t seen[kMaxPoints];  // seen[root] == r + 1: the chain is already a border of region r
  std::fill(seen, seen + n2, static_cast<int16_t>(0));
  for (int r = 0; r < regions; ++r) {
    const int first = nb;
    for (int i = start[r]; i < start[r + 1]; ++i) {
      neighbours(order[i], [&](int q) {
        if (b.color[q] == c && seen[b.group[q]] != r + 1) {
          seen[b.group[q]] = static_cast<int16_t>(r + 1);
          borders[nb++] = {static_cast<int16_t>(r), b.group[q], true};
        }
      });
    }
    for (int i = start[r]; i < start[r + 1]; ++i) {
      const int p = order[i];
      if (b.color[p] != kEmpty) continue;
      for (int k = first; k < nb; ++k) {
        if (!borders[k].vital) continue;
        bool liberty = false;
        neighbours(p,
                   [&](int q) { liberty = liberty || (b.color[q] == c && b.group[q] == borders[k].chain); });
        borders[k].vital = liberty;
      }
    }
  }
  bool chain_alive[kMaxPoints], region_alive[kMaxPoints];
  for (int p = 0; p < n2; ++p) chain_alive[p] = b.color[p] == c && b.group[p] == p;
  std::fill(region_alive, region_alive + regions, true);
  int16_t vital_count[kMaxPoints];
  for (bool changed = true; changed;) {
    changed = false;
    std::fill(vital_count, vital_count + n2, static_cast<int16_t>(0));
    for (int k = 0; k < nb; ++k) {
      if (borders[k].vital && region_alive[borders[k].region]) ++vital_count[borders[k].chain];
    }
    for (int p = 0; p < n2; ++p) {
      if (chain_alive[p] && vital_count[p] < 2) chain_alive[p] = false, changed = true;
    }
    for (int k = 0; k < nb; ++k) {
      if (region_alive[borders[k].region] && !chain_alive[borders[k].chain]) {
        region_alive[borders[k].region] = false;
        changed = true;
      }
    }
  }
  bool area[kMaxPoints];
  std::fill(area, area + regions, false);
  for (int k = 0; k < nb; ++k) {
    if (borders[k].vital && chain_alive[borders[k].chain] && region_alive[borders[k].region]) {
      area[borders[k].region] = true;
    }
  }
  for (int p = 0; p < n2; ++p) {
    out[p] = b.color[p] == c ? chain_alive[b.group[p]] : area[region[p]];
  }
}

}  // namespace mgengine

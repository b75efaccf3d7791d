// The compiled Go rules, feature planes and symmetries (board.h): the same results as minigo_core/game/go.py,
// features.py and symmetries.py, point for point and byte for byte (tests/unit/test_engine_rules.py checks
// it).
//
// Groups are kept incrementally. Every stone knows its group's root (group[p]) and the next stone of its
// group (next_stone[p], a circular list); the root holds the group's exact liberty count and size. A move:
// - joins the new stone to its friendly neighbours (the largest group is kept, the others are relabelled and
//   their lists spliced in), and gets the liberties of the result: with one friendly neighbour group, its
//   count minus the point played plus the new stone's empty neighbours that group did not touch; with two or
//   more, a recount over the stones of the merged group (each empty neighbour once, by a bitset);
// - takes the point played from each distinct opponent neighbour group (it was a liberty of each exactly
//   once), and removes those left with none;
// - gives every captured point to each distinct group of the mover next to it (it was occupied, so it is a
//   new liberty of each of them exactly once).
// No global mutable state: boards can be played in many threads at once.
#include "board.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace mgengine {

namespace {

// ------------------------------------------------------------------------------------ neighbour tables
struct Geometry {
  int16_t nbr[kMaxPoints][4];  // up, down, left, right (as go._Geometry), the first count[p] valid
  uint8_t count[kMaxPoints];
};

constexpr std::array<Geometry, kMaxN + 1> build_geometries() {
  std::array<Geometry, kMaxN + 1> g{};
  for (int n = 1; n <= kMaxN; ++n) {
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        int p = r * n + c, k = 0;
        if (r > 0) g[n].nbr[p][k++] = static_cast<int16_t>(p - n);
        if (r < n - 1) g[n].nbr[p][k++] = static_cast<int16_t>(p + n);
        if (c > 0) g[n].nbr[p][k++] = static_cast<int16_t>(p - 1);
        if (c < n - 1) g[n].nbr[p][k++] = static_cast<int16_t>(p + 1);
        g[n].count[p] = static_cast<uint8_t>(k);
      }
    }
  }
  return g;
}

constexpr std::array<Geometry, kMaxN + 1> kGeometry = build_geometries();

// A set of points (one bit each), cleared on construction.
struct PointSet {
  uint64_t bits[(kMaxPoints + 63) / 64] = {};
  // true if p was not in the set (and adds it)
  bool insert(int p) {
    uint64_t m = uint64_t{1} << (p & 63);
    uint64_t& w = bits[p >> 6];
    bool fresh = !(w & m);
    w |= m;
    return fresh;
  }
};

// Exact liberty count of the group with root `root`: every empty neighbour of its stones, once.
int count_liberties(const Board& b, const Geometry& g, int root) {
  PointSet seen;
  int libs = 0, s = root;
  do {
    const int16_t* nb = g.nbr[s];
    for (int k = 0, cnt = g.count[s]; k < cnt; ++k) {
      int q = nb[k];
      if (b.color[q] == kEmpty && seen.insert(q)) ++libs;
    }
    s = b.next_stone[s];
  } while (s != root);
  return libs;
}

}  // namespace

// ------------------------------------------------------------------------------------------- Board

void Board::reset(int board_size, double komi_) {
  // every byte, padding included, so that two boards of one position compare equal byte for byte (the
  // search's tree keeps its root when memcmp finds the same Board): a board on the stack would otherwise
  // carry whatever the stack held before in its padding
  const bool keep = keep_history;
  std::memset(static_cast<void*>(this), 0, sizeof(Board));
  keep_history = keep;
  // the fields whose empty value is not zero (counts, captures, colours, history and liberties are)
  N = board_size;
  n2 = board_size * board_size;
  komi = komi_;
  to_play = kBlack;
  ko = -1;
  last_move = -1;
  prev_move = -1;
  for (int p = 0; p < kMaxPoints; ++p) {
    group[p] = -1;
    next_stone[p] = static_cast<int16_t>(p);
  }
}

bool Board::legal(int p) const {
  if (p == n2) return true;
  if (p < 0 || p > n2) return false;
  if (color[p] != kEmpty || p == ko) return false;
  const Geometry& g = kGeometry[N];
  const int16_t* nb = g.nbr[p];
  const int me = to_play;
  for (int k = 0, cnt = g.count[p]; k < cnt; ++k) {
    int q = nb[k];
    int c = color[q];
    if (c == kEmpty) return true;
    // own group that keeps a liberty, or an opponent group it captures
    if ((c == me) != (libs[group[q]] == 1)) return true;
  }
  return false;
}

void Board::legal_mask(uint8_t* out) const {
  for (int p = 0; p < n2; ++p) out[p] = legal(p) ? 1 : 0;
  out[n2] = 1;
}

void Board::play(int p) {
  // history: the current board becomes history[0] (a pass pushes it too, as Position.play_move does)
  if (keep_history) {
    int keep = history_len < kHistory ? history_len : kHistory - 1;
    for (int i = keep; i > 0; --i) std::memcpy(history[i], history[i - 1], static_cast<size_t>(n2));
    std::memcpy(history[0], color, static_cast<size_t>(n2));
    if (history_len < kHistory) ++history_len;
  }
  const int me = to_play;
  prev_move = last_move;
  last_move = p;
  ++n;
  to_play = -me;
  if (p == n2) {
    ko = -1;
    return;
  }

  const Geometry& g = kGeometry[N];
  const int16_t* nb = g.nbr[p];
  const int cnt = g.count[p];

  // what is around the move: empty points, distinct friendly and opponent groups
  int own[4], opp[4];
  int n_own = 0, n_opp = 0, n_empty = 0;
  for (int k = 0; k < cnt; ++k) {
    int q = nb[k];
    int c = color[q];
    if (c == kEmpty) {
      ++n_empty;
    } else {
      int r = group[q];
      int* list = c == me ? own : opp;
      int& len = c == me ? n_own : n_opp;
      bool seen = false;
      for (int i = 0; i < len; ++i) seen |= list[i] == r;
      if (!seen) list[len++] = r;
    }
  }

  // the new stone joins its friendly neighbours
  color[p] = static_cast<int8_t>(me);
  int root;
  if (n_own == 0) {
    root = p;
    group[p] = static_cast<int16_t>(p);
    next_stone[p] = static_cast<int16_t>(p);
    size[p] = 1;
    libs[p] = static_cast<int16_t>(n_empty);
  } else {
    root = own[0];
    for (int i = 1; i < n_own; ++i)
      if (size[own[i]] > size[root]) root = own[i];
    group[p] = static_cast<int16_t>(root);
    next_stone[p] = next_stone[root];
    next_stone[root] = static_cast<int16_t>(p);
    size[root] = static_cast<int16_t>(size[root] + 1);
    if (n_own == 1) {
      // the old liberties minus p, plus the empty neighbours of p the group did not touch yet
      int l = libs[root] - 1;
      for (int k = 0; k < cnt; ++k) {
        int e = nb[k];
        if (color[e] != kEmpty) continue;
        const int16_t* enb = g.nbr[e];
        bool touched = false;
        for (int j = 0, ecnt = g.count[e]; j < ecnt; ++j) {
          int q = enb[j];
          touched |= q != p && group[q] == root;
        }
        if (!touched) ++l;
      }
      libs[root] = static_cast<int16_t>(l);
    } else {
      for (int i = 0; i < n_own; ++i) {
        int r = own[i];
        if (r == root) continue;
        int s = r;
        do {
          group[s] = static_cast<int16_t>(root);
          s = next_stone[s];
        } while (s != r);
        int16_t t = next_stone[root];  // splice the two circular lists
        next_stone[root] = next_stone[r];
        next_stone[r] = t;
        size[root] = static_cast<int16_t>(size[root] + size[r]);
        size[r] = 0;
        libs[r] = 0;
      }
      libs[root] = static_cast<int16_t>(count_liberties(*this, g, root));
    }
  }

  // opponent groups lose the point played; those left without a liberty are captured
  int16_t removed[kMaxPoints];
  int captured = 0;
  for (int i = 0; i < n_opp; ++i) {
    int r = opp[i];
    if (--libs[r] > 0) continue;
    int s = r;
    do {
      int nxt = next_stone[s];
      color[s] = kEmpty;
      group[s] = -1;
      next_stone[s] = static_cast<int16_t>(s);
      removed[captured++] = static_cast<int16_t>(s);
      s = nxt;
    } while (s != r);
    size[r] = 0;
  }
  if (captured) {
    // every captured point is a new liberty of each distinct group of the mover next to it
    for (int i = 0; i < captured; ++i) {
      int s = removed[i];
      const int16_t* snb = g.nbr[s];
      int roots[4], n_roots = 0;
      for (int k = 0, scnt = g.count[s]; k < scnt; ++k) {
        int q = snb[k];
        if (color[q] != me) continue;
        int rq = group[q];
        bool dup = false;
        for (int j = 0; j < n_roots; ++j) dup |= roots[j] == rq;
        if (!dup) {
          roots[n_roots++] = rq;
          ++libs[rq];
        }
      }
    }
    caps[me == kBlack ? 0 : 1] += captured;
  }

  // simple ko: a lone stone played into an opponent's eye that captured exactly one stone
  ko = (captured == 1 && n_own == 0 && n_empty == 0) ? removed[0] : -1;
}

double Board::score() const {
  int black = 0, white = 0;
  for (int p = 0; p < n2; ++p) {
    black += color[p] == kBlack;
    white += color[p] == kWhite;
  }
  const Geometry& g = kGeometry[N];
  PointSet seen;
  int stack[kMaxPoints];
  for (int start = 0; start < n2; ++start) {
    if (color[start] != kEmpty || !seen.insert(start)) continue;
    int top = 0, region = 0, borders = 0;  // borders: bit 1 black, bit 2 white
    stack[top++] = start;
    while (top) {
      int s = stack[--top];
      ++region;
      for (int k = 0, cnt = g.count[s]; k < cnt; ++k) {
        int q = g.nbr[s][k];
        int c = color[q];
        if (c == kEmpty) {
          if (seen.insert(q)) stack[top++] = q;
        } else {
          borders |= c == kBlack ? 1 : 2;
        }
      }
    }
    if (borders == 1) black += region;
    if (borders == 2) white += region;
  }
  return static_cast<double>(black - white) - komi;
}

void Board::ownership(int8_t* out) const {
  std::memcpy(out, color, static_cast<size_t>(n2));
  const Geometry& g = kGeometry[N];
  PointSet seen;
  int stack[kMaxPoints], region[kMaxPoints];
  for (int start = 0; start < n2; ++start) {
    if (color[start] != kEmpty || !seen.insert(start)) continue;
    int top = 0, len = 0, borders = 0;  // borders: bit 1 black, bit 2 white
    stack[top++] = start;
    while (top) {
      int s = stack[--top];
      region[len++] = s;
      for (int k = 0, cnt = g.count[s]; k < cnt; ++k) {
        int q = g.nbr[s][k];
        int c = color[q];
        if (c == kEmpty) {
          if (seen.insert(q)) stack[top++] = q;
        } else {
          borders |= c == kBlack ? 1 : 2;
        }
      }
    }
    if (borders == 1 || borders == 2) {
      const int8_t owner = borders == 1 ? kBlack : kWhite;
      for (int i = 0; i < len; ++i) out[region[i]] = owner;
    }
  }
}

bool Board::eyeish(int p, int c) const {
  if (color[p] != kEmpty) return false;
  const Geometry& g = kGeometry[N];
  for (int k = 0, cnt = g.count[p]; k < cnt; ++k)
    if (color[g.nbr[p][k]] != c) return false;
  return true;
}

const int8_t* Board::board_back(int i) const {
  if (i <= 0 || history_len == 0) return color;
  return history[(i <= history_len ? i : history_len) - 1];
}

// ----------------------------------------------------------------------------------------- search moves

void search_moves(const Board& b, uint8_t* out) {
  b.legal_mask(out);
  if (b.last_move == b.n2) return;  // the opponent just passed: every legal move, the pass included
  bool any = false;
  for (int p = 0; p < b.n2; ++p) {
    if (out[p] && b.eyeish(p, b.to_play)) out[p] = 0;
    any |= out[p] != 0;
  }
  out[b.n2] = any ? 0 : 1;
}

// ------------------------------------------------------------------------------------- feature planes

int num_planes(int feature_set) {
  switch (feature_set) {
    case kFeaturesAgz: return 17;
    case kFeaturesMlperf07: return 13;
    case kFeaturesLadders: return 15;
    case kFeaturesTactics: return 17;
    case kFeaturesPassAlive: return 17;
    default: return -1;
  }
}

void liberties_after_moves(const Board& b, uint8_t* out) {
  const Geometry& g = kGeometry[b.N];
  const int me = b.to_play;
  uint32_t mark[kMaxPoints] = {};  // mark[q] == stamp: q is counted for the point being read
  uint32_t stamp = 0;
  for (int p = 0; p < b.n2; ++p) {
    out[p] = 0;
    if (b.color[p] != kEmpty || !b.legal(p)) continue;
    ++stamp;
    int count = 0;
    auto count_once = [&](int q) {
      if (mark[q] != stamp) {
        mark[q] = stamp;
        ++count;
      }
    };
    int merged[4], captured[4], nm = 0, nc = 0;
    for (int k = 0; k < g.count[p]; ++k) {
      const int q = g.nbr[p][k];
      const int c = b.color[q];
      if (c == kEmpty) {
        count_once(q);
      } else if (c == me) {
        if (std::find(merged, merged + nm, b.group[q]) == merged + nm) merged[nm++] = b.group[q];
      } else if (b.libs[b.group[q]] == 1) {
        if (std::find(captured, captured + nc, b.group[q]) == captured + nc) captured[nc++] = b.group[q];
      }
    }
    // the friendly groups the stone joins bring their liberties (but p); 3 is enough to know
    for (int i = 0; i < nm && count < 3; ++i) {
      int s = merged[i];
      do {
        for (int k = 0; k < g.count[s]; ++k) {
          const int q = g.nbr[s][k];
          if (b.color[q] == kEmpty && q != p) count_once(q);
        }
        s = b.next_stone[s];
      } while (s != merged[i] && count < 3);
    }
    // the stones it captures become liberties where they touch the new group
    for (int i = 0; i < nc && count < 3; ++i) {
      int s = captured[i];
      do {
        bool touches = false;
        for (int k = 0; k < g.count[s] && !touches; ++k) {
          const int q = g.nbr[s][k];
          touches = q == p || (b.color[q] == me && std::find(merged, merged + nm, b.group[q]) != merged + nm);
        }
        if (touches) count_once(s);
        s = b.next_stone[s];
      } while (s != captured[i] && count < 3);
    }
    out[p] = static_cast<uint8_t>(std::min(count, 3));
  }
}

// ------------------------------------------------------------------------------------------- ladders
// ladders.py's reading, option for option and move for move (its docstring says the rules).

namespace {

constexpr int kLadderPlays = 200;  // ladders.LADDER_PLAYS

// The liberties of the group at p, ascending; returns how many (all written: out holds kMaxPoints).
int group_liberties(const Board& b, int p, int* out) {
  const Geometry& g = kGeometry[b.N];
  PointSet seen;
  int n = 0, root = b.group[p], s = root;
  do {
    for (int k = 0, cnt = g.count[s]; k < cnt; ++k) {
      int q = g.nbr[s][k];
      if (b.color[q] == kEmpty && seen.insert(q)) out[n++] = q;
    }
    s = b.next_stone[s];
  } while (s != root);
  std::sort(out, out + n);
  return n;
}

// `to` = `from` for reading: the points' state and what play() reads, not the history (a ladder's boards
// never write feature planes), so a copy is ~N*N*9 bytes rather than the whole Board.
void copy_for_reading(const Board& from, Board& to) {
  to.N = from.N;
  to.n2 = from.n2;
  to.komi = from.komi;
  to.to_play = from.to_play;
  to.n = from.n;
  to.ko = from.ko;
  to.last_move = from.last_move;
  to.prev_move = from.prev_move;
  to.caps[0] = from.caps[0];
  to.caps[1] = from.caps[1];
  to.history_len = 0;
  to.keep_history = false;
  const size_t n2 = static_cast<size_t>(from.n2);
  std::memcpy(to.color, from.color, n2);
  std::memcpy(to.group, from.group, n2 * sizeof(int16_t));
  std::memcpy(to.next_stone, from.next_stone, n2 * sizeof(int16_t));
  std::memcpy(to.libs, from.libs, n2 * sizeof(int16_t));
  std::memcpy(to.size, from.size, n2 * sizeof(int16_t));
}

struct LadderReader {
  std::vector<Board>& boards;  // one per depth, reused
  int plays = 0;
  bool out_of_plays = false;

  // `to` = `from` after its side to move plays q; false when the query has read all its moves
  bool play(const Board& from, int q, Board& to) {
    if (plays >= kLadderPlays) {
      out_of_plays = true;
      return false;
    }
    ++plays;
    copy_for_reading(from, to);
    to.play(q);
    return true;
  }

  bool cannot_escape(const Board& pos, int p, int depth) {
    const Geometry& g = kGeometry[pos.N];
    const int d = pos.to_play;
    PointSet seen;
    int options[kMaxPoints], n = 0, libs[kMaxPoints];
    group_liberties(pos, p, libs);
    seen.insert(libs[0]);
    options[n++] = libs[0];
    int root = pos.group[p], s = root;
    do {
      for (int k = 0, cnt = g.count[s]; k < cnt; ++k) {
        int q = g.nbr[s][k];
        if (pos.color[q] == -d && pos.libs[pos.group[q]] == 1) {
          group_liberties(pos, q, libs);
          if (seen.insert(libs[0])) options[n++] = libs[0];
        }
      }
      s = pos.next_stone[s];
    } while (s != root);
    std::sort(options, options + n);
    Board& after = boards[static_cast<size_t>(depth)];
    for (int i = 0; i < n; ++i) {
      if (!pos.legal(options[i])) continue;
      if (!play(pos, options[i], after)) return false;
      int left = after.liberties_at(p);
      if (left >= 3 || (left == 2 && !chase_captures(after, p, depth + 1))) return false;
    }
    return true;
  }

  bool chase_captures(const Board& pos, int p, int depth) {
    int libs[kMaxPoints];
    int n = group_liberties(pos, p, libs);
    for (int i = 0; i < n; ++i)
      if (atari_captures(pos, p, libs[i], depth)) return true;
    return false;
  }

  bool atari_captures(const Board& pos, int p, int q, int depth) {
    if (!pos.legal(q)) return false;
    Board& after = boards[static_cast<size_t>(depth)];
    if (!play(pos, q, after)) return false;
    return after.liberties_at(p) == 1 && cannot_escape(after, p, depth + 1);
  }
};

std::vector<Board>& ladder_boards() {
  // every depth a query can reach (each level plays one move), per thread
  thread_local std::vector<Board> boards(static_cast<size_t>(kLadderPlays) + 2);
  return boards;
}

}  // namespace

void ladder_planes(const Board& b, uint8_t* captured, uint8_t* moves) {
  const int n2 = b.n2, me = b.to_play;
  std::memset(captured, 0, static_cast<size_t>(n2));
  std::memset(moves, 0, static_cast<size_t>(n2));
  std::vector<Board>& boards = ladder_boards();
  Board& at = boards.back();  // the board as it is, then reused for the other side to move
  copy_for_reading(b, at);
  bool passed = false;  // `at` has the other side to move (ladders.py's pass)
  PointSet visited;
  int libs[kMaxPoints];
  for (int p = 0; p < n2; ++p) {
    if (b.color[p] == kEmpty || !visited.insert(b.group[p])) continue;
    const int owner = b.color[p];
    const int n = b.libs[b.group[p]];
    if (n > 2) continue;
    // 1 liberty: the owner moves next; 2: the other side does
    const bool want_passed = (n == 1) == (owner != me);
    if (want_passed != passed) {
      at.to_play = want_passed ? -me : me;
      at.ko = want_passed ? -1 : b.ko;
      passed = want_passed;
    }
    bool hit = false;
    if (n == 1) {
      LadderReader r{boards};
      hit = r.cannot_escape(at, p, 0) && !r.out_of_plays;
    } else {
      group_liberties(b, p, libs);
      for (int i = 0; i < 2; ++i) {
        LadderReader r{boards};
        bool works = r.atari_captures(at, p, libs[i], 0) && !r.out_of_plays;
        hit |= works;
        if (works && owner != me) moves[libs[i]] = 1;
      }
    }
    if (hit) {
      int s = p;
      do {
        captured[s] = 1;
        s = b.next_stone[s];
      } while (s != p);
    }
  }
}

void write_features(const Board& b, int feature_set, int sym, uint8_t* out) {
  const bool ladders =
      feature_set == kFeaturesLadders || feature_set == kFeaturesTactics || feature_set == kFeaturesPassAlive;
  const bool mlperf = feature_set == kFeaturesMlperf07 || ladders;
  const int boards = feature_set == kFeaturesAgz ? 8 : mlperf ? 4 : 0;
  if (boards == 0) return;
  const int16_t* src = symmetry_source(sym, b.N);
  if (src == nullptr) return;
  const int n2 = b.n2;
  const int me = b.to_play;
  for (int i = 0; i < boards; ++i) {
    const int8_t* bb = b.board_back(i);
    uint8_t* mine = out + static_cast<size_t>(2 * i) * n2;
    uint8_t* theirs = mine + n2;
    for (int j = 0; j < n2; ++j) {
      int v = bb[src[j]];
      mine[j] = v == me;
      theirs[j] = v == -me;
    }
  }
  uint8_t* plane = out + static_cast<size_t>(2 * boards) * n2;
  std::memset(plane, me == kBlack ? 1 : 0, static_cast<size_t>(n2));
  if (!mlperf) return;
  uint8_t* l1 = plane + n2;
  uint8_t* l2 = l1 + n2;
  uint8_t* l3 = l2 + n2;
  uint8_t* atari = l3 + n2;
  const Geometry& g = kGeometry[b.N];
  for (int j = 0; j < n2; ++j) {
    int p = src[j];
    int l = b.liberties_at(p);
    l1[j] = l == 1;
    l2[j] = l == 2;
    l3[j] = l == 3;
    uint8_t hit = 0;
    if (b.color[p] == kEmpty) {
      for (int k = 0, cnt = g.count[p]; k < cnt; ++k) {
        int q = g.nbr[p][k];
        hit |= b.color[q] == -me && b.libs[b.group[q]] == 1;
      }
    }
    atari[j] = hit;
  }
  if (!ladders) return;
  uint8_t captured[kMaxPoints], moves[kMaxPoints];
  ladder_planes(b, captured, moves);
  uint8_t* lc = atari + n2;
  uint8_t* lm = lc + n2;
  for (int j = 0; j < n2; ++j) {
    lc[j] = captured[src[j]];
    lm[j] = moves[src[j]];
  }
  if (feature_set == kFeaturesPassAlive) {
    uint8_t mine_area[kMaxPoints], theirs_area[kMaxPoints];
    pass_alive_area(b, me, mine_area);
    pass_alive_area(b, -me, theirs_area);
    uint8_t* own = lm + n2;
    uint8_t* opp = own + n2;
    for (int j = 0; j < n2; ++j) {
      own[j] = mine_area[src[j]];
      opp[j] = theirs_area[src[j]];
    }
    return;
  }
  if (feature_set != kFeaturesTactics) return;
  uint8_t after[kMaxPoints];
  liberties_after_moves(b, after);
  uint8_t* self_atari = lm + n2;
  uint8_t* two = self_atari + n2;
  for (int j = 0; j < n2; ++j) {
    self_atari[j] = after[src[j]] == 1;
    two[j] = after[src[j]] == 2;
  }
}

// ------------------------------------------------------------------------------------------- symmetries

namespace {

struct SymmetryTables {
  int16_t src[kNumSymmetries][kMaxN + 1][kMaxPoints + 1];
  SymmetryTables() {
    int16_t a[kMaxPoints], t[kMaxPoints];
    for (int n = 1; n <= kMaxN; ++n) {
      for (int sym = 0; sym < kNumSymmetries; ++sym) {
        // symmetries.apply_planes on arange(n*n).reshape(n, n): flip left-right if sym >= 4, then
        // np.rot90 (counter-clockwise) sym % 4 times: rot90(m)[i][j] = m[j][n - 1 - i]
        for (int r = 0; r < n; ++r)
          for (int c = 0; c < n; ++c)
            a[r * n + c] = static_cast<int16_t>(sym >= 4 ? r * n + (n - 1 - c) : r * n + c);
        for (int k = 0; k < sym % 4; ++k) {
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) t[i * n + j] = a[j * n + (n - 1 - i)];
          std::memcpy(a, t, sizeof(int16_t) * static_cast<size_t>(n * n));
        }
        std::memcpy(src[sym][n], a, sizeof(int16_t) * static_cast<size_t>(n * n));
        src[sym][n][n * n] = static_cast<int16_t>(n * n);
      }
    }
  }
};

}  // namespace

const int16_t* symmetry_source(int sym, int N) {
  if (sym < 0 || sym >= kNumSymmetries || N < 1 || N > kMaxN) return nullptr;
  static const SymmetryTables tables;
  return tables.src[sym][N];
}

}  // namespace mgengine

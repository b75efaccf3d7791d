// The compiled rules' board behind plain C functions (rules_capi.h): minigo_core/game/native_board.py
// (ctypes) drives one board move by move for the tests that compare it with the Python rules, and the rules
// benchmark plays random games with it.
#include "rules_capi.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "board.h"

namespace mgengine {
namespace {

Board* as_board(void* h) { return static_cast<Board*>(h); }
const Board* as_board(const void* h) { return static_cast<const Board*>(h); }

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int below(uint64_t& state, int n) {  // uniform in [0, n)
  return static_cast<int>((static_cast<unsigned __int128>(splitmix64(state)) * static_cast<unsigned>(n)) >>
                          64);
}

// Recomputes groups from the colours and compares them with the incremental tracker: 0 if consistent, else a
// positive code naming the first thing that differs.
int check_invariants(const Board& b) {
  const int N = b.N, n2 = b.n2;
  auto nbrs = [N](int p, int* out) {
    int r = p / N, c = p % N, k = 0;
    if (r > 0) out[k++] = p - N;
    if (r < N - 1) out[k++] = p + N;
    if (c > 0) out[k++] = p - 1;
    if (c < N - 1) out[k++] = p + 1;
    return k;
  };
  std::vector<int> label(static_cast<size_t>(n2), -1);
  for (int start = 0; start < n2; ++start) {
    int col = b.color[start];
    if (col == kEmpty) {
      if (b.group[start] != -1) return 1;  // an empty point in a group
      continue;
    }
    if (col != kBlack && col != kWhite) return 2;
    if (label[static_cast<size_t>(start)] >= 0) continue;
    // flood fill the group from `start`
    std::vector<int> stones{start};
    std::vector<char> is_lib(static_cast<size_t>(n2), 0);
    label[static_cast<size_t>(start)] = start;
    int libs = 0;
    for (size_t i = 0; i < stones.size(); ++i) {
      int nb[4];
      for (int k = 0, cnt = nbrs(stones[i], nb); k < cnt; ++k) {
        int q = nb[k];
        if (b.color[q] == kEmpty) {
          if (!is_lib[static_cast<size_t>(q)]) {
            is_lib[static_cast<size_t>(q)] = 1;
            ++libs;
          }
        } else if (b.color[q] == col && label[static_cast<size_t>(q)] < 0) {
          label[static_cast<size_t>(q)] = start;
          stones.push_back(q);
        }
      }
    }
    int root = b.group[start];
    if (root < 0 || root >= n2) return 3;  // no root
    for (int s : stones)
      if (b.group[s] != root) return 4;   // stones of one group with different roots
    if (b.group[root] != root) return 5;  // the root is not its own root
    if (b.size[root] != static_cast<int>(stones.size())) return 6;
    if (b.libs[root] != libs) return 7;
    if (libs == 0) return 8;
    // the circular list visits exactly the group's stones
    int s = root, steps = 0;
    do {
      if (s < 0 || s >= n2 || b.group[s] != root) return 9;
      s = b.next_stone[s];
      if (++steps > n2) return 10;
    } while (s != root);
    if (steps != static_cast<int>(stones.size())) return 11;
  }
  if (b.history_len < 0 || b.history_len > kHistory) return 12;
  if (b.ko >= n2 || (b.ko >= 0 && b.color[b.ko] != kEmpty)) return 13;
  return 0;
}

}  // namespace
}  // namespace mgengine

using mgengine::as_board;
using mgengine::Board;

MG_RULES_API void* mg_board_create(int N, double komi) {
  if (N < 2 || N > mgengine::kMaxN) return nullptr;
  Board* b = new (std::nothrow) Board;
  if (b) b->reset(N, komi);
  return b;
}

MG_RULES_API void mg_board_destroy(void* h) { delete as_board(h); }

MG_RULES_API void* mg_board_copy(const void* h) {
  Board* b = new (std::nothrow) Board;
  if (b) std::memcpy(static_cast<void*>(b), h, sizeof(Board));  // a Board is a flat value
  return b;
}

MG_RULES_API int mg_board_legal(const void* h, int p) { return as_board(h)->legal(p) ? 1 : 0; }

MG_RULES_API int mg_board_play(void* h, int p) {
  Board* b = as_board(h);
  if (!b->legal(p)) return -1;
  b->play(p);
  return 0;
}

MG_RULES_API void mg_board_legal_mask(const void* h, uint8_t* out) { as_board(h)->legal_mask(out); }

MG_RULES_API void mg_board_search_moves(const void* h, uint8_t* out) {
  mgengine::search_moves(*as_board(h), out);
}

MG_RULES_API double mg_board_score(const void* h) { return as_board(h)->score(); }
MG_RULES_API int mg_board_game_over(const void* h) { return as_board(h)->game_over() ? 1 : 0; }
MG_RULES_API int mg_board_to_play(const void* h) { return as_board(h)->to_play; }
MG_RULES_API int mg_board_ko(const void* h) { return as_board(h)->ko; }
MG_RULES_API int mg_board_n(const void* h) { return as_board(h)->n; }
MG_RULES_API int mg_board_size(const void* h) { return as_board(h)->N; }
MG_RULES_API double mg_board_komi(const void* h) { return as_board(h)->komi; }
MG_RULES_API int mg_board_last_move(const void* h) { return as_board(h)->last_move; }
MG_RULES_API int mg_board_history_len(const void* h) { return as_board(h)->history_len; }
MG_RULES_API int mg_board_check(const void* h) { return mgengine::check_invariants(*as_board(h)); }

MG_RULES_API void mg_board_caps(const void* h, int32_t* out) {
  out[0] = as_board(h)->caps[0];
  out[1] = as_board(h)->caps[1];
}

MG_RULES_API void mg_board_board(const void* h, int8_t* out) {
  std::memcpy(out, as_board(h)->color, static_cast<size_t>(as_board(h)->n2));
}

// the board i moves ago (board_back): 0 now; past the history kept, the oldest board kept
MG_RULES_API void mg_board_board_back(const void* h, int i, int8_t* out) {
  std::memcpy(out, as_board(h)->board_back(i), static_cast<size_t>(as_board(h)->n2));
}

MG_RULES_API void mg_board_liberties(const void* h, int16_t* out) {
  const Board* b = as_board(h);
  for (int p = 0; p < b->n2; ++p) out[p] = static_cast<int16_t>(b->liberties_at(p));
}

MG_RULES_API void mg_board_eyeish(const void* h, int color, uint8_t* out) {
  const Board* b = as_board(h);
  for (int p = 0; p < b->n2; ++p) out[p] = b->eyeish(p, color) ? 1 : 0;
}

MG_RULES_API int mg_board_num_planes(int feature_set) { return mgengine::num_planes(feature_set); }

// writes num_planes(feature_set) * N * N bytes; -1 (nothing written) for an unknown set or symmetry
MG_RULES_API int mg_board_features(const void* h, int feature_set, int sym, uint8_t* out) {
  int planes = mgengine::num_planes(feature_set);
  if (planes < 0 || sym < 0 || sym >= mgengine::kNumSymmetries) return -1;
  mgengine::write_features(*as_board(h), feature_set, sym, out);
  return planes;
}

// writes N * N + 1 entries; -1 for an unknown symmetry or size
MG_RULES_API int mg_board_symmetry_source(int sym, int N, int16_t* out) {
  const int16_t* src = mgengine::symmetry_source(sym, N);
  if (src == nullptr) return -1;
  std::memcpy(out, src, sizeof(int16_t) * static_cast<size_t>(N * N + 1));
  return 0;
}

// Rules benchmark: `games` random games on an N x N board (a random legal move that does not fill a one-point
// eye of the mover, else a pass; until two passes or 2 * N * N moves, as minigo_core/bench/rules.py plays
// them). Returns the moves played (-1 for a bad size). out_seconds (may be null) gets [0] the time of the
// playouts (move choice + play) and [1] the time of replaying the same moves with play() alone.
MG_RULES_API int64_t mg_board_random_playouts(int N, int games, uint64_t seed, double* out_seconds) {
  if (N < 2 || N > mgengine::kMaxN || games < 0) return -1;
  using clock = std::chrono::steady_clock;
  const int n2 = N * N;
  std::vector<int16_t> moves;
  std::vector<int> lengths;
  Board b;
  int candidates[mgengine::kMaxPoints];
  uint64_t state = seed;
  auto start = clock::now();
  for (int game = 0; game < games; ++game) {
    b.reset(N, 7.5);
    int len = 0;
    while (!b.game_over() && b.n < 2 * n2) {
      int count = 0;
      for (int p = 0; p < n2; ++p)
        if (b.legal(p) && !b.eyeish(p, b.to_play)) candidates[count++] = p;
      int move = count ? candidates[mgengine::below(state, count)] : n2;
      b.play(move);
      moves.push_back(static_cast<int16_t>(move));
      ++len;
    }
    lengths.push_back(len);
  }
  double playout_s = std::chrono::duration<double>(clock::now() - start).count();
  start = clock::now();
  size_t i = 0;
  int64_t checksum = 0;
  for (int len : lengths) {
    b.reset(N, 7.5);
    for (int k = 0; k < len; ++k) b.play(moves[i++]);
    checksum += b.caps[0];
  }
  double replay_s = std::chrono::duration<double>(clock::now() - start).count();
  volatile int64_t sink = checksum;  // keeps the replay from being optimised away
  (void)sink;
  if (out_seconds) {
    out_seconds[0] = playout_s;
    out_seconds[1] = replay_s;
  }
  return static_cast<int64_t>(moves.size());
}

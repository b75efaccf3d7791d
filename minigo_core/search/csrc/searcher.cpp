// The searcher: one position (or a few, batched) searched at a time for play and analysis, on kept trees
// (MiniGo's reuse), with what analysis reads of a searched root (visits, Q, prior, principal variations).
// Players (`minigo_core/play/players.py`), GUI analysis (`analysis.py`) and the tests against mcts.py use
// it through the C interface declared in engine_capi.h.
#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include "engine.h"
#include "engine_capi.h"

namespace mgengine {
constexpr int32_t kSkipSlot = -1;  // a slot's only "move" when it is not searched this time
// One position, one search (tests against mcts.py; players).
struct Searcher {
  Engine e;
  int64_t seed = 0;
};

}  // namespace mgengine

using mgengine::Engine;
using mgengine::Game;
using mgengine::Searcher;
using mgengine::State;

// The searcher's slots: slot k is game k of the engine (its own tree and random stream), so the network
// batches gather leaves of every slot searched at once.
namespace {
int searcher_slots(Searcher& sr, int count, int64_t seed) {
  Engine& e = sr.e;
  while (static_cast<int>(e.games.size()) < count) {
    const int k = static_cast<int>(e.games.size());
    auto g = std::make_unique<Game>(&e.s, e.N);
    g->index = k;
    g->rng.seed(static_cast<uint64_t>(seed), 0, static_cast<uint64_t>(k));
    g->pos.reset(e.N, e.komi);
    e.games.push_back(std::move(g));
  }
  return 0;
}

// When the tree's root is a position on the way to the one after `moves` (the opponent replied to the move
// the tree chose, or a GUI stepped forward), the tree is moved down to each position in between, so the
// subtree of the moves actually played is kept (Tree::set_root keeps a child's subtree); else nothing
// changes.
void walk_down(mgengine::Tree& t, const int32_t* moves, int n, int N, double komi) {
  if (t.root < 0) return;
  const mgengine::Board& root = t.kept_board(t.root);
  const int root_n = root.n;
  if (root_n >= n - 1) return;  // the same position or its child: set_root's own reuse
  mgengine::Board b;
  b.reset(N, komi);
  for (int i = 0; i < root_n; ++i) b.play(moves[i]);
  if (std::memcmp(b.color, root.color, sizeof(b.color)) != 0 || b.to_play != root.to_play || b.ko != root.ko)
    return;
  for (int i = root_n; i < n - 1; ++i) {  // (set_root rebuilds the tree: `root` is not read again)
    b.play(moves[i]);
    t.set_root(b);
  }
}

// Searches slots 0 .. count-1, slot k the position after moves[offsets[k] .. offsets[k+1]) from the empty
// board, all at once (one network batch per round holds the leaves of every slot still searching). codes[k]:
// 0, -1-i if the slot's move i is illegal, -1-n for a finished game (such a slot is not searched). Each
// searched slot keeps its tree (MiniGo's reuse) and its result (mg_searcher_result).
void search_slots(Searcher& sr, int count, const int32_t* moves, const int32_t* offsets, bool full_search,
                  bool noise, int32_t* codes) {
  Engine& e = sr.e;
  std::vector<Game*> active;
  for (int k = 0; k < count; ++k) {
    Game& g = *e.games[k];
    g.state = State::kDone;
    mgengine::Board b;
    b.reset(e.N, e.komi);
    codes[k] = 0;
    const int n = offsets[k + 1] - offsets[k];
    if (n == 1 &&
        moves[offsets[k]] == mgengine::kSkipSlot) {  // not searched this time: its tree and result are kept
      codes[k] = 1;
      continue;
    }
    for (int i = 0; i < n && codes[k] == 0; ++i) {
      const int32_t m = moves[offsets[k] + i];
      if (m < 0 || m > e.N * e.N || !b.legal(m)) {
        codes[k] = -1 - i;
        break;
      }
      b.play(m);
    }
    if (codes[k] != 0) continue;
    if (g.tree.is_terminal(b)) {
      codes[k] = -1 - n;
      continue;
    }
    walk_down(g.tree, moves + offsets[k], n, e.N, e.komi);
    g.pos = b;
    g.full_search = full_search;
    g.tree.set_root(g.pos);
    g.tree.reserve(g.full_search ? e.s.readouts : e.s.fast_readouts);
    if (!g.tree.nodes[g.tree.root].expanded) {
      g.pending.assign(1, g.tree.root);
      e.queue_leaf(g, g.tree.root);
      g.state = State::kWaitRoot;
    } else {
      e.begin_search(g);
    }
    active.push_back(&g);
  }
  e.evaluate();  // the roots not yet expanded, in one batch (deliver starts their searches)
  for (Game* gp : active) {
    Game& g = *gp;
    // the caller's noise choice overrides the settings' (begin_search decided from dirichlet_weight)
    if (noise != g.noise) {
      g.noise = noise;
      g.tree.restore_root_prior();
      if (e.s.search == 1)
        g.groot.start(g.tree, g.noise ? &g.rng : nullptr, g.budget);
      else if (g.noise)
        g.tree.apply_dirichlet(g.rng);
    }
  }
  std::vector<Game*> searching = active;
  while (!searching.empty()) {
    bool queued = false;
    std::vector<Game*> still;
    for (Game* gp : searching) {
      Game& g = *gp;
      if (g.done >= g.budget) continue;
      if (e.collect(g))
        queued = true;
      else if (e.s.search == 1 && g.groot.done >= g.groot.budget)
        continue;
      still.push_back(gp);
    }
    if (queued) e.evaluate();
    searching.swap(still);
  }
  for (Game* gp : active) {
    Game& g = *gp;
    g.result_move = e.s.search == 1 ? g.groot.chosen(g.tree) : g.tree.pick_move_puct(g.rng);
    g.result_value = g.tree.root_q_mover();
    g.has_result = true;
    g.state = State::kStart;
  }
}

Game* searched_slot(void* handle, int slot) {
  auto* sr = static_cast<Searcher*>(handle);
  if (sr == nullptr || slot < 0 || slot >= static_cast<int>(sr->e.games.size())) return nullptr;
  Game* g = sr->e.games[slot].get();
  return g->has_result ? g : nullptr;
}
}  // namespace

extern "C" {

// ---- one search of one position ---------------------------------------------------------------------------
MG_API void* mg_searcher_create(const void* net, const MgEngineSettings* s, int N, double komi, int64_t seed,
                                char* err, int errlen) {
  try {
    auto sr = std::make_unique<Searcher>();
    if (!mgengine::init_engine(sr->e, net, s, N, komi, err, errlen)) return nullptr;
    sr->seed = seed;
    searcher_slots(*sr, 1, seed);
    return sr.release();
  } catch (...) {
    mgengine::set_error(err, errlen, "cannot create the searcher");
  }
  return nullptr;
}

// Sets the position to the one after `moves` from the empty board (returns -1-i if moves[i] is illegal),
// searches it (a full search with or without root noise, or a fast one) and writes the root's visit counts,
// its Gumbel improved policy (whatever the search), the root value (mover's view) and the chosen move.
MG_API int mg_searcher_search(void* handle, const int32_t* moves, int nmoves, int full_search, int noise,
                              int32_t* visits, float* policy, double* root_value, int* move) {
  auto* sr = static_cast<Searcher*>(handle);
  if (sr == nullptr || nmoves < 0) return -1000000;
  try {
    const int32_t offsets[2] = {0, nmoves};
    int32_t code = 0;
    search_slots(*sr, 1, moves, offsets, full_search != 0, noise != 0, &code);
    if (code != 0) return code;
    return mg_searcher_result(handle, 0, visits, policy, root_value, move);
  } catch (...) {
    return -1000000;
  }
}

MG_API int mg_searcher_search_many(void* handle, int count, const int32_t* moves, const int32_t* offsets,
                                   int full_search, int noise, int32_t* codes) {
  auto* sr = static_cast<Searcher*>(handle);
  if (sr == nullptr || count < 1 || offsets == nullptr || codes == nullptr) return -1000000;
  for (int k = 0; k < count; ++k)
    if (offsets[k + 1] < offsets[k]) return -1000000;
  try {
    searcher_slots(*sr, count, sr->seed);
    search_slots(*sr, count, moves, offsets, full_search != 0, noise != 0, codes);
    return 0;
  } catch (...) {
    return -1000000;
  }
}

MG_API int mg_searcher_result(void* handle, int slot, int32_t* visits, float* policy, double* root_value,
                              int* move) {
  Game* g = searched_slot(handle, slot);
  if (g == nullptr) return -1000000;
  const int A = g->tree.A;
  if (visits != nullptr) g->tree.root_visits(visits);
  if (policy != nullptr) {
    std::vector<double> pi(A);
    g->tree.improved_policy(g->tree.root, pi.data());
    for (int a = 0; a < A; ++a) policy[a] = static_cast<float>(pi[a]);
  }
  if (root_value != nullptr) *root_value = g->result_value;
  if (move != nullptr) *move = g->result_move;
  return 0;
}

MG_API int mg_searcher_root_stats(void* handle, int slot, int32_t* visits, double* q, float* prior,
                                  uint8_t* legal, double* info) {
  Game* g = searched_slot(handle, slot);
  if (g == nullptr) return -1;
  const mgengine::Tree& t = g->tree;
  const auto& root = t.nodes[t.root];
  const int b = root.block;
  if (b < 0) return -1;
  const double root_q = t.root_q_mover();
  for (int a = 0; a < t.A; ++a) {
    const int32_t n = t.cN[b + a];
    visits[a] = n;
    q[a] = n > 0 ? t.cW[b + a] / n * root.to_play : root_q;
    prior[a] = static_cast<float>(t.root_orig_prior.empty() ? t.cprior[b + a] : t.root_orig_prior[a]);
    legal[a] = t.clegal[b + a];
  }
  info[0] = t.root_N;
  info[1] = root_q;
  info[2] = root.value;
  info[3] = static_cast<double>(t.nodes.size());
  return 0;
}

MG_API int mg_searcher_pv(void* handle, int slot, int first, int32_t* out, int32_t* visits, int max_len) {
  Game* g = searched_slot(handle, slot);
  if (g == nullptr || max_len < 1) return -1;
  const mgengine::Tree& t = g->tree;
  if (first < 0 || first >= t.A) return -1;
  int b = t.nodes[t.root].block;
  if (b < 0 || t.cN[b + first] <= 0) return 0;
  int len = 0;
  if (visits != nullptr) visits[len] = t.cN[b + first];
  out[len++] = first;
  int x = t.cchild[b + first];
  while (x >= 0 && len < max_len) {
    b = t.nodes[x].block;
    if (b < 0) break;
    int best = -1;
    int32_t most = 0;
    for (int a = 0; a < t.A; ++a)
      if (t.cN[b + a] > most) most = t.cN[b + a], best = a;
    if (best < 0) break;
    if (visits != nullptr) visits[len] = most;
    out[len++] = best;
    x = t.cchild[b + best];
  }
  return len;
}

MG_API int mg_searcher_set_avoid(void* handle, int slot, const uint8_t* avoid) {
  auto* sr = static_cast<Searcher*>(handle);
  if (sr == nullptr || slot < 0) return -1;
  try {
    searcher_slots(*sr, slot + 1, sr->seed);
    Game& g = *sr->e.games[slot];
    std::vector<uint8_t> mask;
    if (avoid != nullptr) {
      mask.assign(avoid, avoid + sr->e.A);
      if (std::none_of(mask.begin(), mask.end(), [](uint8_t v) { return v != 0; })) mask.clear();
    }
    if (mask != g.root_avoid) {  // a root built under other moves to avoid: start a fresh tree
      g.root_avoid = std::move(mask);
      g.tree.clear();
      g.has_result = false;
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

MG_API int mg_searcher_set_readouts(void* handle, int readouts) {
  auto* sr = static_cast<Searcher*>(handle);
  if (sr == nullptr || readouts < 1) return -1;
  sr->e.s.readouts = readouts;
  return 0;
}

MG_API void mg_searcher_destroy(void* handle) { delete static_cast<Searcher*>(handle); }

}  // extern "C"

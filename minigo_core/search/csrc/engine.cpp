// The self-play engine: K games in one process, one tree per game, each network batch made of leaves from
// many games (by default one leaf per game, so no virtual loss), evaluated by the fused inference engine in
// this library. A game's moves depend only on its own random stream and the network's outputs for its own
// positions, and the fused engine computes each position of a batch the same way whatever else is in the
// batch, so a game's file is the same whether it was played alone or among K others, with 1 or 2 cores.
//
// The C interface is declared in engine_capi.h (loaded by minigo_core/search/engine.py with ctypes).
#include "engine_capi.h"

#if __has_include(<malloc.h>)
#include <malloc.h>  // mallopt (glibc)
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "board.h"
#include "kernels.h"
#include "search.h"

namespace mgengine {
namespace {

// Timings are in CPU seconds of the whole process (all its "DSP cores"), steady on a shared machine; the
// features, timed per leaf, use the cheaper wall clock (a few microseconds per batch at most).
using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
inline double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Row {
  int32_t move_index;
  std::vector<std::pair<int16_t, int32_t>> visits;  // the root's non-zero visit counts: (move, count)
  std::vector<float> policy;  // Gumbel: the improved policy (the training target); PUCT: empty
  float root_value;
  int8_t to_play;
};

enum class State { kStart, kWaitRoot, kSearch, kDone };

struct Game {
  Game(const SearchSettings* s, int N) : tree(s, N) {}
  int index = 0;
  Rng rng;
  Board pos;
  Tree tree;
  State state = State::kStart;
  bool resign_enabled = true;
  bool full_search = true, noise = false;
  int budget = 0, done = 0;
  GumbelRoot groot;
  std::vector<int> pending;  // leaves waiting for the network, in selection order (repeats allowed)
  std::vector<int32_t> moves;
  std::vector<Row> rows;
  int resigned_by = 0, would_resign_move = -1, would_resign_color = 0;
  int64_t readouts = 0;
  bool reported = false;
};

struct Stats {
  double total_s = 0, network_s = 0, features_s = 0;
  int64_t batches = 0, leaves = 0, readouts = 0, max_batch = 0;
};

struct Engine {
  const mgdsp::FusedNetCore* net = nullptr;
  SearchSettings s{};
  int N = 0, A = 0, planes = 0;
  double komi = 7.5;
  std::vector<std::unique_ptr<Game>> games;
  std::vector<int> finished;  // games ended since the last report
  // the batch: one row per leaf (game, leaf node, symmetry); features written straight into `input`
  struct Slot {
    int game, leaf, sym;
  };
  std::vector<Slot> slots;
  std::vector<uint8_t> input;
  std::vector<float> policy, value, unpermuted;
  Stats stats;

  void queue_leaf(Game& g, int leaf) {
    const int sym = s.random_symmetry ? g.rng.below(kNumSymmetries) : 0;
    const size_t row = slots.size();
    const size_t per = static_cast<size_t>(planes) * N * N;
    if (input.size() < (row + 1) * per) input.resize((row + 1) * per * 2);
    const auto t0 = Clock::now();
    write_features(g.tree.kept_board(leaf), s.feature_set, sym, input.data() + row * per);
    stats.features_s += seconds_since(t0);
    slots.push_back({g.index, leaf, sym});
  }

  void begin_search(Game& g) {
    Tree& t = g.tree;
    t.ensure_built(t.root);
    g.noise = g.full_search && s.dirichlet_weight > 0;
    g.budget = g.full_search ? s.readouts : s.fast_readouts;
    g.done = 0;
    if (s.search == 1) {
      t.restore_root_prior();
      g.groot.start(t, g.noise ? &g.rng : nullptr, g.budget);
    } else if (g.noise) {
      t.restore_root_prior();
      t.apply_dirichlet(g.rng);
    } else {
      t.restore_root_prior();
    }
    g.state = State::kSearch;
  }

  // Select leaves for the next batch; terminal leaves are backed up at once. Returns whether any was queued.
  bool collect(Game& g) {
    Tree& t = g.tree;
    const int want = s.search == 1 ? 1 : std::max(1, s.parallel_readouts);
    bool queued = false;
    int taken = 0;
    while (taken < want && g.done < g.budget) {
      int leaf;
      if (s.search == 1) {
        const int a = g.groot.next_action(t);
        if (a < 0) {  // nothing left to simulate (no considered move): the search is over
          g.done = g.budget;
          break;
        }
        leaf = t.select_leaf_gumbel(a);
      } else {
        leaf = t.select_leaf_puct();
      }
      ++g.done;
      ++g.readouts;
      ++taken;
      Node& nd = t.nodes[leaf];
      if (!nd.terminal && t.is_terminal(t.kept_board(leaf))) {
        nd.terminal = 1;
        nd.terminal_value = t.kept_board(leaf).score() > 0 ? 1.0 : -1.0;
        t.drop_board(leaf);  // its value is known: the search never reads its board again
      }
      if (nd.terminal) {
        t.backup(leaf, nd.terminal_value, false);
        if (s.search == 1) break;  // one simulation at a time
        continue;
      }
      if (s.search == 0) t.add_virtual_loss(leaf);
      bool seen = false;
      for (int p : g.pending) seen |= p == leaf;
      g.pending.push_back(leaf);
      if (!seen) queue_leaf(g, leaf);
      queued = true;
    }
    return queued;
  }

  void finish_move(Game& g, bool play) {
    Tree& t = g.tree;
    const int A_ = A;
    int move;
    Row row;
    std::vector<int32_t> visits(A_);
    t.root_visits(visits.data());
    row.visits.reserve(static_cast<size_t>(A_ - std::count(visits.begin(), visits.end(), 0)));
    for (int a = 0; a < A_; ++a)
      if (visits[a] != 0) row.visits.emplace_back(static_cast<int16_t>(a), visits[a]);
    if (s.search == 1) {
      move = g.groot.chosen(t);
      std::vector<double> pi(A_);
      t.improved_policy(t.root, pi.data());
      row.policy.resize(A_);
      for (int a = 0; a < A_; ++a) row.policy[a] = static_cast<float>(pi[a]);
    } else {
      move = t.pick_move_puct(g.rng);
    }
    const double root_value = t.root_q_mover();
    if (!play) return;
    if (root_value < s.resign_threshold) {
      if (g.resign_enabled) {
        g.resigned_by = g.pos.to_play;
        g.state = State::kDone;
        return;
      }
      if (g.would_resign_move < 0) {
        g.would_resign_move = g.pos.n;
        g.would_resign_color = g.pos.to_play;
      }
    }
    if (g.full_search) {
      row.move_index = g.pos.n;
      row.root_value = static_cast<float>(root_value);
      row.to_play = static_cast<int8_t>(g.pos.to_play);
      g.rows.push_back(std::move(row));
    }
    g.pos.play(move);
    g.moves.push_back(move);
    g.state = State::kStart;
  }

  // Runs game g's logic until it waits for the network or ends.
  void advance(Game& g) {
    for (;;) {
      switch (g.state) {
        case State::kDone: return;
        case State::kWaitRoot: return;
        case State::kStart: {
          const bool stopped = s.stop_after_moves > 0 && g.pos.n >= s.stop_after_moves;
          if (g.pos.game_over() || g.pos.n >= g.tree.max_game_length || stopped) {
            g.state = State::kDone;
            return;
          }
          g.full_search = g.rng.uniform() < s.full_search_fraction;
          g.tree.set_root(g.pos);
          g.tree.reserve(g.full_search ? s.readouts : s.fast_readouts);
          if (!g.tree.nodes[g.tree.root].expanded) {
            g.pending.assign(1, g.tree.root);
            queue_leaf(g, g.tree.root);
            g.state = State::kWaitRoot;
            return;
          }
          begin_search(g);
          break;
        }
        case State::kSearch:
          if (g.done >= g.budget) {
            finish_move(g, true);
            break;
          }
          if (collect(g)) return;
          break;
      }
    }
  }

  // Evaluates the batch and hands each game its results.
  void evaluate() {
    const int B = static_cast<int>(slots.size());
    if (B == 0) return;
    policy.resize(static_cast<size_t>(B) * A);
    value.resize(B);
    const double t0 = cpu_now();
    net->run(input.data(), true, B, true, policy.data(), value.data());
    stats.network_s += cpu_now() - t0;
    stats.batches += 1;
    stats.leaves += B;
    stats.max_batch = std::max<int64_t>(stats.max_batch, B);
    unpermuted.resize(static_cast<size_t>(B) * A);
    const int n2 = N * N;
    for (int r = 0; r < B; ++r) {
      const int16_t* src = symmetry_source(slots[r].sym, N);
      const float* out = policy.data() + static_cast<size_t>(r) * A;
      float* orig = unpermuted.data() + static_cast<size_t>(r) * A;
      for (int j = 0; j <= n2; ++j) orig[src[j]] = out[j];
    }
    // rows of one game are consecutive; deliver game by game, in selection order
    std::unordered_map<int, int> row_of;
    for (int r = 0; r < B;) {
      Game& g = *games[slots[r].game - games.front()->index];
      row_of.clear();
      int r_end = r;
      while (r_end < B && slots[r_end].game == slots[r].game) {
        row_of[slots[r_end].leaf] = r_end;
        ++r_end;
      }
      deliver(g, row_of);
      r = r_end;
    }
    slots.clear();
  }

  void deliver(Game& g, const std::unordered_map<int, int>& row_of) {
    Tree& t = g.tree;
    for (int leaf : g.pending) {
      const int r = row_of.at(leaf);
      const float v = value[r];
      Node& nd = t.nodes[leaf];
      const double value_black = static_cast<double>(v) * nd.to_play;
      if (!nd.expanded) t.expand(leaf, unpermuted.data() + static_cast<size_t>(r) * A, v);
      if (g.state == State::kWaitRoot) {
        t.backup(leaf, value_black, false);
      } else {
        t.backup(leaf, value_black, s.search == 0);
      }
    }
    for (int leaf : g.pending) t.drop_board(leaf);
    g.pending.clear();
    if (g.state == State::kWaitRoot) begin_search(g);
  }
};

struct Selfplay {
  Engine e;
  int first = 0;
};

// One position, one search (tests against mcts.py; players).
struct Searcher {
  Engine e;
};

void set_error(char* err, int errlen, const char* msg) {
  if (err != nullptr && errlen > 0) std::snprintf(err, static_cast<size_t>(errlen), "%s", msg);
}

bool init_engine(Engine& e, const void* net, const SearchSettings* s, int N, double komi, char* err,
                 int errlen) {
  const auto* core = static_cast<const mgdsp::FusedNetCore*>(net);
  if (core == nullptr || s == nullptr) {
    set_error(err, errlen, "no network or no settings");
    return false;
  }
  if (core->N != N || N < 2 || N > kMaxN) {
    set_error(err, errlen, "the network's board size differs from the engine's (or is not 2..19)");
    return false;
  }
  if (num_planes(s->feature_set) != core->planes) {
    set_error(err, errlen, "the feature set's number of planes differs from the network's input planes");
    return false;
  }
  if (s->search != 0 && s->search != 1) {
    set_error(err, errlen, "search must be 0 (puct) or 1 (gumbel)");
    return false;
  }
  e.net = core;
  e.s = *s;
  e.N = N;
  e.A = N * N + 1;
  e.planes = core->planes;
  e.komi = komi;
  return true;
}

}  // namespace
}  // namespace mgengine

using mgengine::Engine;
using mgengine::Game;
using mgengine::Searcher;
using mgengine::Selfplay;
using mgengine::State;

extern "C" {

MG_API size_t mg_engine_sizeof_EngineSettings() { return sizeof(MgEngineSettings); }

MG_API void* mg_selfplay_create(const void* net, const MgEngineSettings* s, int N, double komi, int64_t seed,
                                int generation, int first_game, int count, char* err, int errlen) {
  if (count < 1 || first_game < 0) {
    mgengine::set_error(err, errlen, "count must be >= 1 and first_game >= 0");
    return nullptr;
  }
  try {
    auto sp = std::make_unique<Selfplay>();
    if (!mgengine::init_engine(sp->e, net, s, N, komi, err, errlen)) return nullptr;
#ifdef M_MMAP_THRESHOLD
    // Each tree's vectors reserve room for a whole search (megabytes) and are reallocated as trees are
    // re-rooted, K trees interleaved. glibc's default raises its mmap threshold after the first such block is
    // freed, and from then on serves them from the heap, where freed blocks are reused with their pages
    // resident: the job's peak RSS approached the trees' reserved capacity, not what they hold. A fixed
    // threshold keeps them mapped: their untouched room is never resident and a freed tree goes back to the
    // system.
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
    sp->first = first_game;
    for (int i = 0; i < count; ++i) {
      auto g = std::make_unique<Game>(&sp->e.s, N);
      g->index = first_game + i;
      g->rng.seed(static_cast<uint64_t>(seed), static_cast<uint64_t>(generation),
                  static_cast<uint64_t>(first_game + i));
      g->pos.reset(N, komi);
      g->resign_enabled = g->rng.uniform() >= s->resign_disabled_fraction;
      sp->e.games.push_back(std::move(g));
    }
    return sp.release();
  } catch (const std::bad_alloc&) {
    mgengine::set_error(err, errlen, "out of memory");
  } catch (const std::exception& ex) {
    mgengine::set_error(err, errlen, ex.what());
  }
  return nullptr;
}

// Plays until at least one game ends; writes the ended games' indices to finished_out (at most max).
MG_API int mg_selfplay_run(void* handle, int* finished_out, int max) {
  auto* sp = static_cast<Selfplay*>(handle);
  if (sp == nullptr || max < 1) return -1;
  try {
    Engine& e = sp->e;
    const double t0 = mgengine::cpu_now();
    while (e.finished.empty()) {
      bool active = false;
      for (auto& gp : e.games) {
        Game& g = *gp;
        if (g.reported) continue;
        e.advance(g);
        if (g.state == State::kDone) {
          g.reported = true;
          e.finished.push_back(g.index);
        } else {
          active = true;
        }
      }
      e.evaluate();
      if (!active) break;
    }
    e.stats.total_s += mgengine::cpu_now() - t0;
    const int n = std::min<int>(max, static_cast<int>(e.finished.size()));
    for (int i = 0; i < n; ++i) finished_out[i] = e.finished[i];
    e.finished.erase(e.finished.begin(), e.finished.begin() + n);
    return n;
  } catch (...) {
    return -1;
  }
}

static Game* game_of(void* handle, int game) {
  auto* sp = static_cast<Selfplay*>(handle);
  if (sp == nullptr) return nullptr;
  const int i = game - sp->first;
  if (i < 0 || i >= static_cast<int>(sp->e.games.size())) return nullptr;
  return sp->e.games[i].get();
}

// info: moves, rows, resigned_by, would_resign_move, would_resign_color, resign_enabled, readouts;
// score: the Tromp-Taylor score of the final position (meaningful when nobody resigned).
MG_API int mg_selfplay_game_info(void* handle, int game, int64_t* info, double* score) {
  Game* g = game_of(handle, game);
  if (g == nullptr || g->state != State::kDone) return -1;
  info[0] = static_cast<int64_t>(g->moves.size());
  info[1] = static_cast<int64_t>(g->rows.size());
  info[2] = g->resigned_by;
  info[3] = g->would_resign_move;
  info[4] = g->would_resign_color;
  info[5] = g->resign_enabled ? 1 : 0;
  info[6] = g->readouts;
  *score = g->pos.score();
  return 0;
}

MG_API int mg_selfplay_game_moves(void* handle, int game, int32_t* out) {
  Game* g = game_of(handle, game);
  if (g == nullptr || g->state != State::kDone) return -1;
  std::memcpy(out, g->moves.data(), sizeof(int32_t) * g->moves.size());
  return 0;
}

// move_index (rows), visits (rows x A), policy (rows x A, Gumbel only; may be null), root_value, to_play
// (rows)
MG_API int mg_selfplay_game_rows(void* handle, int game, int32_t* move_index, int32_t* visits, float* policy,
                                 float* root_value, int8_t* to_play) {
  Game* g = game_of(handle, game);
  if (g == nullptr || g->state != State::kDone) return -1;
  const size_t A = static_cast<size_t>(g->tree.A);
  for (size_t r = 0; r < g->rows.size(); ++r) {
    move_index[r] = g->rows[r].move_index;
    std::memset(visits + r * A, 0, sizeof(int32_t) * A);
    for (const auto& [a, n] : g->rows[r].visits) visits[r * A + static_cast<size_t>(a)] = n;
    if (policy != nullptr && !g->rows[r].policy.empty())
      std::memcpy(policy + r * A, g->rows[r].policy.data(), sizeof(float) * A);
    root_value[r] = g->rows[r].root_value;
    to_play[r] = g->rows[r].to_play;
  }
  return 0;
}

// Leaves game `game` out before the first mg_selfplay_run (its file survives from an earlier attempt): it is
// never played nor reported. The other games are unchanged: each game's moves depend on its own random
// stream only, not on which games share its batches. Returns 0, or -1 for a game not in this job.
MG_API int mg_selfplay_skip(void* handle, int game) {
  Game* g = game_of(handle, game);
  if (g == nullptr) return -1;
  g->reported = true;
  g->state = State::kDone;
  return 0;
}

MG_API void mg_selfplay_game_release(void* handle, int game) {
  Game* g = game_of(handle, game);
  if (g == nullptr) return;
  g->tree.clear();
  g->tree.nodes.shrink_to_fit();
  g->rows.clear();
  g->rows.shrink_to_fit();
}

// out: total_s, network_s, features_s, batches, leaves, readouts, max_batch, nodes, blocks
MG_API void mg_selfplay_stats(void* handle, double* out) {
  auto* sp = static_cast<Selfplay*>(handle);
  if (sp == nullptr) return;
  const auto& st = sp->e.stats;
  int64_t readouts = 0;
  for (auto& g : sp->e.games) readouts += g->readouts;
  out[0] = st.total_s;
  out[1] = st.network_s;
  out[2] = st.features_s;
  out[3] = static_cast<double>(st.batches);
  out[4] = static_cast<double>(st.leaves);
  out[5] = static_cast<double>(readouts);
  out[6] = static_cast<double>(st.max_batch);
  double nodes = 0, blocks = 0;
  for (auto& g : sp->e.games) {
    nodes += static_cast<double>(g->tree.nodes.size());
    blocks += static_cast<double>(g->tree.cN.size()) / g->tree.A;
  }
  out[7] = nodes;  // nodes and children's blocks held now, all games
  out[8] = blocks;
}

MG_API void mg_selfplay_destroy(void* handle) { delete static_cast<Selfplay*>(handle); }

// ---- one search of one position ---------------------------------------------------------------------------
MG_API void* mg_searcher_create(const void* net, const MgEngineSettings* s, int N, double komi, int64_t seed,
                                char* err, int errlen) {
  try {
    auto sr = std::make_unique<Searcher>();
    if (!mgengine::init_engine(sr->e, net, s, N, komi, err, errlen)) return nullptr;
    auto g = std::make_unique<Game>(&sr->e.s, N);
    g->rng.seed(static_cast<uint64_t>(seed), 0, 0);
    g->pos.reset(N, komi);
    sr->e.games.push_back(std::move(g));
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
  if (sr == nullptr) return -1;
  try {
    Engine& e = sr->e;
    Game& g = *e.games[0];
    mgengine::Board b;
    b.reset(e.N, e.komi);
    for (int i = 0; i < nmoves; ++i) {
      if (!b.legal(moves[i])) return -1 - i;
      b.play(moves[i]);
    }
    if (g.tree.is_terminal(b)) return -1 - nmoves;
    g.pos = b;
    g.full_search = full_search != 0;
    g.tree.set_root(g.pos);
    g.tree.reserve(g.full_search ? e.s.readouts : e.s.fast_readouts);
    if (!g.tree.nodes[g.tree.root].expanded) {
      g.pending.assign(1, g.tree.root);
      e.queue_leaf(g, g.tree.root);
      g.state = State::kWaitRoot;
      e.evaluate();
    } else {
      e.begin_search(g);
    }
    // the caller's noise choice overrides the settings' (begin_search decided from dirichlet_weight)
    if (static_cast<bool>(noise) != g.noise) {
      g.noise = noise != 0;
      g.tree.restore_root_prior();
      if (e.s.search == 1)
        g.groot.start(g.tree, g.noise ? &g.rng : nullptr, g.budget);
      else if (g.noise)
        g.tree.apply_dirichlet(g.rng);
    }
    for (;;) {
      if (g.done >= g.budget) break;
      if (e.collect(g))
        e.evaluate();
      else if (e.s.search == 1 && g.groot.done >= g.groot.budget)
        break;
    }
    const int A = e.A;
    std::vector<double> pi(A);
    g.tree.root_visits(visits);
    g.tree.improved_policy(g.tree.root, pi.data());
    for (int a = 0; a < A; ++a) policy[a] = static_cast<float>(pi[a]);
    *move = e.s.search == 1 ? g.groot.chosen(g.tree) : g.tree.pick_move_puct(g.rng);
    *root_value = g.tree.root_q_mover();
    g.state = State::kStart;
    return 0;
  } catch (...) {
    return -1000000;
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

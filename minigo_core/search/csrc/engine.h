// The engine behind the self-play and searcher C APIs (engine.cpp, searcher.cpp): games (one tree each), the
// batch of leaves from many trees evaluated by the fused inference network in this library, and the logic
// that turns a game's searches into moves and training rows. Internal to the `_engine` library.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "board.h"
#include "engine_capi.h"
#include "kernels.h"
#include "search.h"

namespace mgengine {

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
  float surprise;  // KL(the policy target || the network's prior) at the root, nats (Tree::root_surprise)
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
  std::vector<int> pending;      // leaves waiting for the network, in selection order (repeats allowed)
  std::vector<int> batch_moves;  // Gumbel: the considered moves of the batch being collected
  std::vector<int32_t> moves;
  std::vector<Row> rows;
  int resigned_by = 0, would_resign_move = -1, would_resign_color = 0;
  int64_t readouts = 0;
  bool reported = false;
  // a searcher's slot: the last search's chosen move and root value (mover's view)
  bool has_result = false;
  int result_move = -1;
  double result_value = 0;
  // a searcher's slot: root moves the search must not try (analysis's avoidMoves; empty: none)
  std::vector<uint8_t> root_avoid;
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
  std::vector<float> policy, value, score, unpermuted;  // score: the score head's, with the utility on
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
    if (!g.root_avoid
             .empty()) {  // moves to avoid are not legal at this root (the tree is fresh: see searcher)
      uint8_t* legal = t.clegal.data() + t.nodes[t.root].block;
      for (int a = 0; a < A; ++a) legal[a] = legal[a] && !g.root_avoid[a];
    }
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
    const int want = std::max(1, s.parallel_readouts);
    bool queued = false;
    int taken = 0;
    g.batch_moves.clear();
    while (taken < want && g.done < g.budget) {
      int leaf;
      if (s.search == 1) {
        // Gumbel batches a phase's simulations of different considered moves only: their descents stay in
        // disjoint subtrees and read nothing the others back up, so the batch searches exactly what one
        // simulation at a time would (no virtual loss). A batch ends with its phase (the halving reads every
        // simulation backed up) or at a move it already holds (that simulation waits for the next batch).
        if (!g.pending.empty() && g.groot.phase_started()) break;
        const int a = g.groot.next_action(t);
        if (a < 0) {  // nothing left to simulate (no considered move): the search is over
          g.done = g.budget;
          break;
        }
        if (std::find(g.batch_moves.begin(), g.batch_moves.end(), a) != g.batch_moves.end()) {
          g.groot.give_back();
          break;
        }
        g.batch_moves.push_back(a);
        leaf = t.select_leaf_gumbel(a);
      } else {
        leaf = t.select_leaf_puct();
      }
      ++g.done;
      ++g.readouts;
      ++taken;
      Node& nd = t.nodes[leaf];
      if (!nd.terminal && t.is_terminal(t.kept_board(leaf))) {
        const double score = t.kept_board(leaf).score();
        nd.terminal = 1;
        nd.terminal_value = score > 0 ? 1.0 : -1.0;
        nd.terminal_utility = leaf_utility(s, nd.terminal_value, score);  // the exact margin
        t.drop_board(leaf);  // its value is known: the search never reads its board again
      }
      if (nd.terminal) {
        t.backup(leaf, nd.terminal_value, nd.terminal_utility, false);
        if (s.search == 1 && want == 1) break;  // one simulation at a time
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
    std::vector<double> pi(A_);  // the policy target: Gumbel's improved policy, or the visits normalised
    if (s.search == 1) {
      move = g.groot.chosen(t);
      t.improved_policy(t.root, pi.data());
      row.policy.resize(A_);
      for (int a = 0; a < A_; ++a) row.policy[a] = static_cast<float>(pi[a]);
    } else {
      move = t.pick_move_puct(g.rng);
      const double total = std::accumulate(visits.begin(), visits.end(), 0.0);
      for (int a = 0; a < A_; ++a) pi[a] = total > 0 ? visits[a] / total : 0.0;
    }
    row.surprise = static_cast<float>(t.root_surprise(pi.data()));
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
    if (s.score_utility > 0) {  // the score head too (the policy and value are the same bits either way)
      score.resize(B);
      net->run(input.data(), true, B, true, policy.data(), value.data(), nullptr, score.data());
    } else {
      net->run(input.data(), true, B, true, policy.data(), value.data());
    }
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
      // the score head predicts the margin / N*N (float, as fused.Heads's points)
      const double points =
          s.score_utility > 0 ? static_cast<double>(score[r] * static_cast<float>(N * N)) : 0;
      const double utility = leaf_utility(s, static_cast<double>(v), points);
      if (!nd.expanded) t.expand(leaf, unpermuted.data() + static_cast<size_t>(r) * A, v, utility);
      const double utility_black = utility * nd.to_play;
      if (g.state == State::kWaitRoot) {
        t.backup(leaf, value_black, utility_black, false);
      } else {
        t.backup(leaf, value_black, utility_black, s.search == 0);
      }
    }
    for (int leaf : g.pending) t.drop_board(leaf);
    g.pending.clear();
    if (g.state == State::kWaitRoot) begin_search(g);
  }
};

inline void set_error(char* err, int errlen, const char* msg) {
  if (err != nullptr && errlen > 0) std::snprintf(err, static_cast<size_t>(errlen), "%s", msg);
}

inline bool init_engine(Engine& e, const void* net, const SearchSettings* s, int N, double komi, char* err,
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
  if (!(s->score_utility >= 0 && s->score_utility <= 1) ||
      (s->score_utility > 0 && !(s->score_utility_scale > 0 && std::isfinite(s->score_utility_scale)))) {
    set_error(err, errlen, "selfplay.score_utility must be in [0, 1] and selfplay.score_utility_scale > 0");
    return false;
  }
  if (s->score_utility > 0 && !core->has_aux) {
    set_error(err, errlen,
              "selfplay.score_utility > 0 reads the score head, and this model has none (model.aux_heads: "
              "false): set selfplay.score_utility: 0 or use a model with the auxiliary heads");
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

}  // namespace mgengine

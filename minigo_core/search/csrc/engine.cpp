// The self-play engine: K games in one process, one tree per game, each network batch made of leaves from
// many games (by default one leaf per game, so no virtual loss), evaluated by the fused inference network in
// this library. A game's moves depend only on its own random stream and the network's outputs for its own
// positions, and the fused network computes each position of a batch the same way whatever else is in the
// batch, so a game's file is the same whether it was played alone or among K others, with 1 or 2 cores.
//
// The C interface is declared in engine_capi.h (loaded by minigo_core/search/engine.py with ctypes).
#include "engine_capi.h"

#if __has_include(<malloc.h>)
#include <malloc.h>  // mallopt (glibc)
#endif

#include <exception>
#include <memory>
#include <new>

#include "engine.h"

namespace mgengine {
struct Selfplay {
  Engine e;
  int first = 0;
};

}  // namespace mgengine

using mgengine::Engine;
using mgengine::Game;
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
                                 float* root_value, int8_t* to_play, float* surprise) {
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
    if (surprise != nullptr) surprise[r] = g->rows[r].surprise;
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

}  // extern "C"

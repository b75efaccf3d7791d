// The C API of the self-play engine library `minigo_core/search/_engine*.so`: every function and struct it
// exports (extern "C", loaded with ctypes; `minigo_core/search/engine.py`'s table ENGINE_FUNCTIONS and its
// `EngineSettings` mirror this header). The library also holds the fused inference network and exports its
// functions (infer_capi.h, included here): `mg_fused_create` builds the network the engine evaluates.
//
//   mg_selfplay_create(net, settings, N, komi, seed, generation, first_game, count) -> handle
//   mg_selfplay_skip(handle, game): leave out a game already played by an earlier attempt
//   mg_selfplay_run(handle, finished_out, max) -> number of games that just ended (0: all done, -1: error)
//   mg_selfplay_game_info / _moves / _rows / _release: a finished game's record, then its memory back
//   mg_selfplay_stats(handle, out): timings and counts
//   mg_searcher_*: one search of one position (tests against mcts.py, players)
//   mg_uct_genmove: the `uct:N` reference player's move (plain UCT with random playouts, no network)
#pragma once

#include <cstddef>
#include <cstdint>

#include "infer_capi.h"

extern "C" {

// The search settings (a plain struct shared with Python through ctypes: int32 and double fields only;
// `mgengine::SearchSettings` inside the engine).
struct MgEngineSettings {
  int32_t search;  // 0: PUCT, 1: Gumbel
  int32_t readouts;
  int32_t fast_readouts;
  int32_t parallel_readouts;  // leaves per tree per network batch (PUCT: virtual loss when > 1)
  double full_search_fraction;
  double c_base;
  double c_init;
  double dirichlet_weight;
  double dirichlet_alpha;
  int32_t softpick_moves;
  int32_t init_unvisited_loss;  // 0: parent's value (Python MiniGo), 1: a loss (C++ MiniGo)
  double resign_threshold;
  double resign_disabled_fraction;
  int32_t gumbel_considered;
  int32_t random_symmetry;
  double gumbel_c_visit;
  double gumbel_c_scale;
  int32_t feature_set;       // 0: agz, 1: mlperf07, 2: ladders, 3: tactics, 4: passalive
  int32_t max_game_length;   // 0: 2 * N * N
  int32_t stop_after_moves;  // 0: play each game to its end; > 0: end it after this many moves (benchmarks:
                             // the search is not cut short, unlike max_game_length)
  // KataGo's score utility (selfplay.score_utility, score_utility_scale): a leaf backs up v + score_utility *
  // (2/pi) atan(score / score_utility_scale), the score head's margin in points; 0: off, the value head alone
  // (the network's score head is not run). Root values, resignation and analysis stay win/loss values.
  double score_utility;
  double score_utility_scale;  // points (> 0 when score_utility > 0)
};

// sizeof(MgEngineSettings), checked against the ctypes mirror when the library loads.
MG_API size_t mg_engine_sizeof_EngineSettings(void);

// ---- many games at once ----
// Returns a handle, or null with a message in err; `net` is a mg_fused_create handle of this library.
MG_API void* mg_selfplay_create(const void* net, const MgEngineSettings* s, int N, double komi, int64_t seed,
                                int generation, int first_game, int count, char* err, int errlen);
// Plays until at least one game ends; writes the ended games' indices to finished_out (at most max).
MG_API int mg_selfplay_run(void* handle, int* finished_out, int max);
// info: moves, rows, resigned_by, would_resign_move, would_resign_color, resign_enabled, readouts;
// score: the Tromp-Taylor score of the final position (meaningful when nobody resigned).
MG_API int mg_selfplay_game_info(void* handle, int game, int64_t* info, double* score);
MG_API int mg_selfplay_game_moves(void* handle, int game, int32_t* out);
// move_index (rows), visits (rows x A), policy (rows x A, Gumbel only; may be null), root_value, to_play
// (rows), surprise (rows: KL(the policy target || the network's prior) at the root, nats; may be null)
MG_API int mg_selfplay_game_rows(void* handle, int game, int32_t* move_index, int32_t* visits, float* policy,
                                 float* root_value, int8_t* to_play, float* surprise);
// Leaves game `game` out before the first mg_selfplay_run; 0, or -1 for a game not in this job.
MG_API int mg_selfplay_skip(void* handle, int game);
MG_API void mg_selfplay_game_release(void* handle, int game);
// out: total_s, network_s, features_s, batches, leaves, readouts, max_batch, nodes, blocks
MG_API void mg_selfplay_stats(void* handle, double* out);
MG_API void mg_selfplay_destroy(void* handle);

// ---- one search of one position ----
MG_API void* mg_searcher_create(const void* net, const MgEngineSettings* s, int N, double komi, int64_t seed,
                                char* err, int errlen);
// 0; -1-i if moves[i] is illegal (-1-nmoves: a finished game); <= -1000000 on failure.
MG_API int mg_searcher_search(void* handle, const int32_t* moves, int nmoves, int full_search, int noise,
                              int32_t* visits, float* policy, double* root_value, int* move);
// Several positions searched at once (one network batch a round holds leaves of each): slot k (a tree of its
// own, kept between calls, with its own random stream from (seed, 0, k)) searches the position after
// moves[offsets[k] .. offsets[k+1]) from the empty board; a slot whose moves are the single value -1 is left
// alone (its tree and last result kept). codes[k]: 0, 1 for a slot left alone, -1-i if the slot's move i is
// illegal, -1-n for a finished game (not searched). Returns 0, or <= -1000000 on bad arguments or failure.
MG_API int mg_searcher_search_many(void* handle, int count, const int32_t* moves, const int32_t* offsets,
                                   int full_search, int noise, int32_t* codes);
// The last search of `slot` (slot 0: mg_searcher_search's): what mg_searcher_search writes (any pointer may
// be null). 0, or <= -1000000 for a slot not searched.
MG_API int mg_searcher_result(void* handle, int slot, int32_t* visits, float* policy, double* root_value,
                              int* move);
// The root of `slot`'s tree after its last search, for analysis (A = N*N + 1 entries each): each move's
// visits, mean value Q from the mover's view (the root's Q for unvisited moves), prior (before any noise) and
// legality; info (4): the root's visits, its Q (mover's view), the network's value of the root (mover's
// view), the nodes the tree holds. 0, or -1 for a slot not searched.
MG_API int mg_searcher_root_stats(void* handle, int slot, int32_t* visits, double* q, float* prior,
                                  uint8_t* legal, double* info);
// The principal variation of `slot`'s root move `first`: first, then at each node its most visited child, at
// most max_len moves written to out, and (visits, may be null) each one's visits. Returns its length (0:
// `first` has no visits), or -1 for bad arguments.
MG_API int mg_searcher_pv(void* handle, int slot, int first, int32_t* out, int32_t* visits, int max_len);
// Root moves `slot`'s searches must not try (avoid: A entries, non-zero = avoid; null or all zero: none), as
// long as they are set; changing them starts the slot's tree afresh. A root whose every legal move is
// avoided has none to search: the caller keeps at least one. 0, or -1 for bad arguments.
MG_API int mg_searcher_set_avoid(void* handle, int slot, const uint8_t* avoid);
// Readouts of the next full searches (>= 1; a search by time grows its chunks on the kept tree): 0, or -1.
MG_API int mg_searcher_set_readouts(void* handle, int readouts);
MG_API void mg_searcher_destroy(void* handle);

// ---- the `uct:N` reference player (uct.cpp): Monte-Carlo tree search with random playouts, no network ----
// The move for the player to move after `moves` (flat, pass = N*N) from the empty N x N board: `playouts`
// playouts (>= 1), UCB1 with exploration constant `exploration` (<= 0: the default, uct.cpp's
// kUctExploration), the root's most visited move. Deterministic for (moves, komi, playouts, seed,
// exploration). out_winrate (may be null): the chosen move's win rate for the player to move;
// out_visits (may be null, N*N + 1 entries): the root's visits per move. Returns the move (flat, N*N = pass),
// or -1 on bad arguments, an illegal move in `moves`, or a finished game. Never resigns.
MG_API int32_t mg_uct_genmove(int N, double komi, const int32_t* moves, int n_moves, int64_t playouts,
                              uint64_t seed, double exploration, double* out_winrate, int32_t* out_visits);

}  // extern "C"

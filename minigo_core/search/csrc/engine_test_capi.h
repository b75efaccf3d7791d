// The C API of the engine's test library `minigo_core/search/_engine_test*.so`: the compiled rules (board.h)
// and the Gumbel improved policy (search.h) behind plain C functions, for tests and the rules benchmark
// through ctypes (`minigo_core/search/native_board.py`'s table TEST_FUNCTIONS mirrors this header). Built
// from engine_test_capi.cpp, board.cpp and search.cpp; no job loads it, and the production library
// `_engine` exports none of these. Every entry point checks its arguments: an illegal move or an unknown
// feature set or symmetry answers -1 and changes nothing, never crashes.
#pragma once

#include <cstdint>

#define MG_TEST_API __attribute__((visibility("default")))

extern "C" {

// ---- one board (a mgengine::Board behind a handle) ----
MG_TEST_API void* mg_board_create(int N, double komi);  // null for a size outside 2..19
MG_TEST_API void mg_board_destroy(void* h);
MG_TEST_API void* mg_board_copy(const void* h);
MG_TEST_API int mg_board_legal(const void* h, int p);
MG_TEST_API int mg_board_play(void* h, int p);  // 0, or -1 (nothing played) for an illegal move
MG_TEST_API void mg_board_legal_mask(const void* h, uint8_t* out);
MG_TEST_API void mg_board_search_moves(const void* h, uint8_t* out);
MG_TEST_API double mg_board_score(const void* h);
MG_TEST_API int mg_board_game_over(const void* h);
MG_TEST_API int mg_board_to_play(const void* h);
MG_TEST_API int mg_board_ko(const void* h);
MG_TEST_API int mg_board_n(const void* h);
MG_TEST_API int mg_board_size(const void* h);
MG_TEST_API double mg_board_komi(const void* h);
MG_TEST_API int mg_board_last_move(const void* h);
MG_TEST_API int mg_board_history_len(const void* h);
// 0 if the incremental groups match the ones recomputed from the stones, else a code naming what differs
MG_TEST_API int mg_board_check(const void* h);
MG_TEST_API void mg_board_caps(const void* h, int32_t* out);
MG_TEST_API void mg_board_board(const void* h, int8_t* out);
// the board i moves ago (board_back): 0 now; past the history kept, the oldest board kept
MG_TEST_API void mg_board_board_back(const void* h, int i, int8_t* out);
MG_TEST_API void mg_board_liberties(const void* h, int16_t* out);
MG_TEST_API void mg_board_eyeish(const void* h, int color, uint8_t* out);
MG_TEST_API int mg_board_num_planes(int feature_set);
// writes num_planes(feature_set) * N * N bytes; -1 (nothing written) for an unknown set or symmetry
MG_TEST_API int mg_board_features(const void* h, int feature_set, int sym, uint8_t* out);
// writes N * N + 1 entries; -1 for an unknown symmetry or size
MG_TEST_API int mg_board_symmetry_source(int sym, int N, int16_t* out);
// Rules benchmark: random games played in C++; the moves played (-1 for a bad size), out_seconds [playout,
// replay]
MG_TEST_API int64_t mg_board_random_playouts(int N, int games, uint64_t seed, double* out_seconds);

// ---- the search's arithmetic ----
// Gumbel AlphaZero's improved policy (search.h's gumbel_improved_policy), for tests of its properties.
MG_TEST_API void mg_gumbel_improved_policy(int A, const double* prior, const int32_t* N,
                                           const double* q_mover, const uint8_t* legal, double raw_value,
                                           double c_visit, double c_scale, double* out);

}  // extern "C"

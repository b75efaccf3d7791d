// The C API of the compiled rules library `minigo_core/game/_rules*.so`: one board (board.h) behind a handle
// and the replay of a game's moves into training examples (replay.cpp), as plain C functions loaded with
// ctypes (`minigo_core/game/native_board.py`'s table RULES_FUNCTIONS and `native_replay.py`'s
// REPLAY_FUNCTIONS mirror this header). The searcher's library (`minigo_core/search/_engine`) compiles the
// same board.cpp in: the rules live here, once. Every entry point checks its arguments: an illegal move or an
// unknown feature set or symmetry answers -1 and changes nothing, never crashes.
#pragma once

#include <cstdint>

#define MG_RULES_API __attribute__((visibility("default")))

extern "C" {

// ---- one board (a mgengine::Board behind a handle) ----
MG_RULES_API void* mg_board_create(int N, double komi);  // null for a size outside 2..19
MG_RULES_API void mg_board_destroy(void* h);
MG_RULES_API void* mg_board_copy(const void* h);
MG_RULES_API int mg_board_legal(const void* h, int p);
MG_RULES_API int mg_board_play(void* h, int p);  // 0, or -1 (nothing played) for an illegal move
MG_RULES_API void mg_board_legal_mask(const void* h, uint8_t* out);
MG_RULES_API void mg_board_search_moves(const void* h, uint8_t* out);
MG_RULES_API double mg_board_score(const void* h);
MG_RULES_API int mg_board_game_over(const void* h);
MG_RULES_API int mg_board_to_play(const void* h);
MG_RULES_API int mg_board_ko(const void* h);
MG_RULES_API int mg_board_n(const void* h);
MG_RULES_API int mg_board_size(const void* h);
MG_RULES_API double mg_board_komi(const void* h);
MG_RULES_API int mg_board_last_move(const void* h);
MG_RULES_API int mg_board_history_len(const void* h);
// 0 if the incremental groups match the ones recomputed from the stones, else a code naming what differs
MG_RULES_API int mg_board_check(const void* h);
MG_RULES_API void mg_board_caps(const void* h, int32_t* out);
MG_RULES_API void mg_board_board(const void* h, int8_t* out);
// the board i moves ago (board_back): 0 now; past the history kept, the oldest board kept
MG_RULES_API void mg_board_board_back(const void* h, int i, int8_t* out);
MG_RULES_API void mg_board_liberties(const void* h, int16_t* out);
MG_RULES_API void mg_board_eyeish(const void* h, int color, uint8_t* out);
MG_RULES_API int mg_board_num_planes(int feature_set);
// writes num_planes(feature_set) * N * N bytes; -1 (nothing written) for an unknown set or symmetry
MG_RULES_API int mg_board_features(const void* h, int feature_set, int sym, uint8_t* out);
// writes N * N + 1 entries; -1 for an unknown symmetry or size
MG_RULES_API int mg_board_symmetry_source(int sym, int N, int16_t* out);
// Rules benchmark: random games played in C++; the moves played (-1 for a bad size), out_seconds [playout,
// replay]
MG_RULES_API int64_t mg_board_random_playouts(int N, int games, uint64_t seed, double* out_seconds);

// ---- training examples of a finished game (replay.cpp; minigo_core/game/native_replay.py) ----
// Replays `moves` (n_moves flat points, pass = N*N, each played by the side to move) from the empty N x N
// board (N 2..19) with `komi` and writes, for each of the n_at move numbers in `at` (non-decreasing, each
// 0..n_moves: the position before move at[i]; n_moves is the final position), the feature planes of
// `feature_set` (0 agz, 1 mlperf07) as features.extract_batch does (uint8, symmetry 0, num_planes x N x N
// at planes_out + i * num_planes * N * N) and the colour to move (to_play_out[i]: 1 Black, -1 White). Then
// the final position's Tromp-Taylor ownership (ownership_out, N*N int8: 1 Black's, -1 White's, 0 neither;
// go.Position.ownership) and score (*score_out: Black's area minus White's, minus komi; Position.score).
// Returns 0; -1-i if moves[i] is illegal (what came before it may be written); <= -1000000 for bad
// arguments (board size, feature set, n_moves past 999999, `at` out of order or out of range, a null
// pointer).
MG_RULES_API int mg_replay_examples(int N, double komi, int feature_set, const int32_t* moves, int n_moves,
                                    const int32_t* at, int n_at, uint8_t* planes_out, int8_t* to_play_out,
                                    int8_t* ownership_out, double* score_out);

}  // extern "C"

// The compiled Go rules, feature planes and symmetries of the self-play engine (namespace mgengine).
//
// The same rules as minigo_core/game/go.py (MiniGo's): suicide illegal, captures of any number of groups,
// simple ko, the game ends after two consecutive passes, Tromp-Taylor area score with komi to White. Points
// are flat indices p = row * N + col (row 0 the top row); the pass is p = N * N. Groups and liberties are
// kept incrementally: each point knows its group (a circular list of stones), each group its exact liberty
// count, so a move costs work proportional to the groups it touches, and a Board is a flat value (copyable
// with memcpy; no pointers), which is what the search tree stores per node.
//
// Feature planes (features.py) and the 8 symmetries (symmetries.py) are defined here byte for byte as there.
#pragma once

#include <cstdint>

namespace mgengine {

constexpr int kMaxN = 19;
constexpr int kMaxPoints = kMaxN * kMaxN;
constexpr int kHistory = 7;  // previous boards kept for the feature planes (as go.HISTORY)
constexpr int kBlack = 1, kWhite = -1, kEmpty = 0;
constexpr int kFeaturesAgz = 0, kFeaturesMlperf07 = 1, kFeaturesLadders = 2, kFeaturesTactics = 3;
constexpr int kFeaturesPassAlive = 4;
constexpr int kNumSymmetries = 8;

struct Board {
  // ---- read-only state (change it only through reset/play) ----
  int N = 0, n2 = 0;
  double komi = 7.5;
  int to_play = kBlack;
  int n = 0;             // moves played, passes included
  int ko = -1;           // the point the side to move may not play because of ko, or -1
  int last_move = -1;    // the move just played (flat; n2 = pass), -1 at the start
  int prev_move = -1;    // the move before it, -1 if none
  int caps[2] = {0, 0};  // stones captured by Black, by White
  int8_t color[kMaxPoints];
  // previous boards, most recent first: history[0] is the board before the last move; history_len <= kHistory
  int history_len = 0;
  int8_t history[kHistory][kMaxPoints];
  // incremental groups: group root of each stone (-1 where empty), next stone in the group's circular list,
  // and at each root the group's exact liberty count and size
  int16_t group[kMaxPoints];
  int16_t next_stone[kMaxPoints];
  int16_t libs[kMaxPoints];
  int16_t size[kMaxPoints];
  // false: play() leaves `history` as it is (the uct:N player's playouts, which read no feature planes, set
  // it on their copy of the board; a reset does not change it)
  bool keep_history = true;

  void reset(int board_size, double komi_);
  // legality for the side to move (p == n2: pass, always legal; p out of range: false)
  bool legal(int p) const;
  // Position.all_legal_moves(): out[0 .. n2] (pass last, always 1)
  void legal_mask(uint8_t* out) const;
  // plays p (must be legal for to_play; p == n2 passes) and updates history, ko, captures, to_play
  void play(int p);
  bool game_over() const { return last_move == n2 && prev_move == n2; }
  double score() const;  // Tromp-Taylor: Black's area minus White's, minus komi
  // Position.ownership(): out[0 .. n2-1] 1 Black's (stone or territory), -1 White's, 0 neither (what score
  // counts, point by point)
  void ownership(int8_t* out) const;
  // Position.eyeish: empty and every on-board neighbour of colour c
  bool eyeish(int p, int c) const;
  int liberties_at(int p) const { return color[p] == kEmpty ? 0 : libs[group[p]]; }
  // the board i moves ago (0: now); when history runs out, the oldest board kept (as the feature planes)
  const int8_t* board_back(int i) const;
};

// mcts.search_moves: the legal moves the search considers (out[0 .. n2], pass last): no filling of one's own
// one-point eyes, and a pass only after the opponent passed or when nothing else is left.
void search_moves(const Board& b, uint8_t* out);

// agz 17, mlperf07 13, ladders 15, tactics 17, passalive 17; -1 for an unknown set
int num_planes(int feature_set);
// ladders.py's two planes of b in board coordinates (out[0 .. n2-1] each): stones a ladder captures, and the
// points where the side to move starts a ladder that captures (read the same, move for move)
void ladder_planes(const Board& b, uint8_t* captured, uint8_t* moves);
// Position.liberties_after_moves, capped: out[p] (p = 0 .. n2-1) the liberties of the side to move's group
// after it plays p, its captures made (3 for 3 or more), 0 where it may not play (occupied, suicide, ko)
void liberties_after_moves(const Board& b, uint8_t* out);
// benson.py's pass_alive_area: out[p] (p = 0 .. n2-1) 1 in colour c's pass-alive area (its unconditionally
// alive chains by Benson's algorithm and the regions they enclose that are vital to one of them), else 0
void pass_alive_area(const Board& b, int c, uint8_t* out);
// The planes of features.py for b, transformed by symmetry sym (planes[c][j] = plane_c[src[j]], see
// symmetry_source), written as uint8 NCHW (planes, N, N) at out.
void write_features(const Board& b, int feature_set, int sym, uint8_t* out);

// src[j] (j = 0 .. n2, pass last, src[n2] = n2): the flat point whose value lands at j under symmetry sym
// (symmetries._source_index). Tables are built once per (sym, N) and never freed.
const int16_t* symmetry_source(int sym, int N);
inline int invert_symmetry(int sym) { return sym < 4 ? (4 - sym) % 4 : sym; }

}  // namespace mgengine

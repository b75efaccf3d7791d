// `uct:N`, the reference player of the fixed Elo ladder: plain Monte-Carlo tree search (UCT: UCB1 on win
// rates, Kocsis and Szepesvari 2006) with uniformly random playouts on the engine's board (board.h), no
// network. Stateless per call: the position is the moves from the empty board, the tree is built for N
// playouts and freed; the same (position, seed, N, exploration) gives the same move on every machine.
//
// One playout: from the root, descend by UCB1 to a node with no visits (a node's children, the moves of
// `search_moves`, are made on its second visit, in an order shuffled by the seeded generator, and every
// unvisited child is tried once, in that order, before any is tried twice), then a random game to the end:
// the mover picks uniformly among the legal points that are not its own one-point eyes (`eyeish`) and
// passes only when none is left, until two passes in a row. Scored Tromp-Taylor with the board's komi
// (Board::score): a win for Black counts 1, a jigo 1/2. The move played is the root's most visited child
// (ties: more wins, then the first in the shuffled order); it may be the pass, which the tree offers only
// after the opponent passed or when nothing else is left (the search_moves rule). It never resigns.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "board.h"
#include "engine_capi.h"
#include "search.h"

namespace mgengine {
namespace {

// UCB1's exploration constant c in  wins / n + c * sqrt(ln n_parent / n)  with wins in [0, 1]. Auer et al.'s
// UCB1 is c = sqrt(2) (2 Cp, Kocsis and Szepesvari's Cp = 1/sqrt(2) for rewards in [0, 1]), but the win rates
// of random playouts are noisy and biased, and Go programs without RAVE did better exploring far less. 0.3
// is this search's best in a small 9x9 round-robin (20 games a pair, colours alternating): at 1024
// playouts 0.5 beat 1.0 16-4 and 0.7 17-3, 0.3 beat 0.5 14-6, lost 9-11 to 0.2 and beat 0.4 11-9 (noise);
// at 256 playouts 0.3 beat 0.5 14-6 (0.2 beat 0.3 15-5 there). The C API takes another value for
// experiments; the ladder's rungs use this one.
constexpr double kUctExploration = 0.3;
// A playout stops after this many moves times the number of points (a cycle under simple ko can repeat
// for ever) and is scored where it stands; real random games on N x N end after about 1.5 N^2 moves.
constexpr int kPlayoutLengthFactor = 3;

struct UctNode {
  int32_t first_child = -1;  // index of the first child in the pool; -1 until the node is expanded
  int32_t visits = 0;
  int32_t half_wins = 0;  // wins of the player who played `move` into this node, in half points (jigo: 1)
  int16_t move = -1;      // flat, pass = n2
  int16_t n_children = 0;
};

class Uct {
 public:
  Uct(const Board& root, uint64_t seed, double exploration)
      : root_(root), c_(exploration > 0 ? exploration : kUctExploration) {
    // one stream per (seed, position): the moves played so far are part of the key
    rng_.seed(seed, static_cast<uint64_t>(root.n), 0x756374ull /* "uct" */);
    build_neighbours(root.N);
  }

  void run(int64_t playouts) {
    // the pool: the root's children, then at most one expansion per playout after the first (a node is
    // expanded on its second visit), each at most N^2 + 1 children; grown as needed, freed with the tree
    const int64_t expected = (root_.n2 + 1) * (1 + playouts / 8);
    nodes_.reserve(static_cast<size_t>(expected < (int64_t{1} << 22) ? expected : (int64_t{1} << 22)));
    nodes_.emplace_back();
    for (int64_t i = 0; i < playouts; ++i) playout();
  }

  // The root's most visited child, its win rate for the player to move, and the visits of every move.
  int best(double* winrate, int32_t* visits) const {
    const UctNode& r = nodes_[0];
    int best = -1;
    for (int i = 0; i < r.n_children; ++i) {
      const UctNode& ch = nodes_[r.first_child + i];
      if (visits != nullptr) visits[ch.move] = ch.visits;
      if (best < 0) {
        best = r.first_child + i;
        continue;
      }
      const UctNode& b = nodes_[best];
      if (ch.visits > b.visits || (ch.visits == b.visits && ch.half_wins > b.half_wins))
        best = r.first_child + i;
    }
    if (winrate != nullptr)
      *winrate = nodes_[best].visits ? 0.5 * nodes_[best].half_wins / nodes_[best].visits : 0.5;
    return nodes_[best].move;
  }

 private:
  const Board& root_;
  const double c_;
  Rng rng_;
  std::vector<UctNode> nodes_;
  std::vector<int32_t> path_;
  Board b_;                    // the playout's board
  int16_t empty_[kMaxPoints];  // the empty points of b_ (in a playout)
  int16_t slot_[kMaxPoints];   // slot_[p]: p's index in empty_
  int n_empty_ = 0;
  uint8_t candidates_[kMaxPoints + 1];
  int16_t nbr_[kMaxPoints][4];  // on-board neighbours of each point, the first nbr_count_[p]
  uint8_t nbr_count_[kMaxPoints];

  // 0 .. n-1 (Lemire's multiply-shift: no division in the playout loop)
  int below(int n) { return static_cast<int>(((rng_.next() >> 32) * static_cast<uint64_t>(n)) >> 32); }

  void playout();
  void expand(int x);
  int select(int x) const;
  int rollout();  // the result of a random game from b_: 2 Black wins, 1 jigo, 0 White wins
  int result() const {
    const double s = b_.score();
    return s > 0 ? 2 : s < 0 ? 0 : 1;
  }
  void collect_empty();
  void take_empty(int p);
  // Board::eyeish(p, c) for an empty p, inline (the playout's hottest test)
  bool own_eye(int p, int c) const {
    for (int k = 0; k < nbr_count_[p]; ++k)
      if (b_.color[nbr_[p][k]] != c) return false;
    return true;
  }
  // the stones the move p of the other colour captures (written to out; returns how many)
  int about_to_capture(int p, int opponent, int16_t* out) const;
  void build_neighbours(int N);
};

void Uct::build_neighbours(int N) {
  for (int r = 0; r < N; ++r) {
    for (int c = 0; c < N; ++c) {
      const int p = r * N + c;
      int k = 0;
      if (r > 0) nbr_[p][k++] = static_cast<int16_t>(p - N);
      if (r < N - 1) nbr_[p][k++] = static_cast<int16_t>(p + N);
      if (c > 0) nbr_[p][k++] = static_cast<int16_t>(p - 1);
      if (c < N - 1) nbr_[p][k++] = static_cast<int16_t>(p + 1);
      nbr_count_[p] = static_cast<uint8_t>(k);
    }
  }
}

void Uct::playout() {
  b_ = root_;
  b_.keep_history = false;
  path_.clear();
  path_.push_back(0);
  const int cap = root_.n + kPlayoutLengthFactor * root_.n2;
  int x = 0, outcome;
  while (true) {
    if (b_.game_over() || b_.n >= cap) {
      outcome = result();
      break;
    }
    if (nodes_[x].first_child < 0) {
      if (x != 0 && nodes_[x].visits == 0) {
        outcome = rollout();
        break;
      }
      expand(x);
    }
    x = select(x);
    b_.play(nodes_[x].move);
    path_.push_back(x);
  }
  // node at depth d was moved into by the root's player to move when d is odd, by the other one when even
  const bool root_black = root_.to_play == kBlack;
  for (size_t d = 0; d < path_.size(); ++d) {
    UctNode& node = nodes_[path_[d]];
    const bool mover_black = (d % 2 == 1) == root_black;
    ++node.visits;
    node.half_wins += mover_black ? outcome : 2 - outcome;
  }
}

void Uct::expand(int x) {
  search_moves(b_, candidates_);
  const int first = static_cast<int>(nodes_.size());
  for (int p = 0; p <= b_.n2; ++p) {
    if (!candidates_[p]) continue;
    UctNode ch;
    ch.move = static_cast<int16_t>(p);
    nodes_.push_back(ch);
  }
  const int n = static_cast<int>(nodes_.size()) - first;
  for (int i = n - 1; i > 0; --i) {  // Fisher-Yates: the order unvisited children are tried in
    const int j = below(i + 1);
    const int16_t t = nodes_[first + i].move;
    nodes_[first + i].move = nodes_[first + j].move;
    nodes_[first + j].move = t;
  }
  nodes_[x].first_child = first;
  nodes_[x].n_children = static_cast<int16_t>(n);
}

int Uct::select(int x) const {
  const UctNode& parent = nodes_[x];
  const double explore = c_ * std::sqrt(std::log(static_cast<double>(parent.visits)));
  int best = -1;
  double best_score = -1;
  for (int i = parent.first_child, end = parent.first_child + parent.n_children; i < end; ++i) {
    const UctNode& ch = nodes_[i];
    if (ch.visits == 0) return i;
    const double n = ch.visits;
    const double score = 0.5 * ch.half_wins / n + explore / std::sqrt(n);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return best;
}

void Uct::collect_empty() {
  n_empty_ = 0;
  for (int p = 0; p < b_.n2; ++p) {
    if (b_.color[p] != kEmpty) continue;
    slot_[p] = static_cast<int16_t>(n_empty_);
    empty_[n_empty_++] = static_cast<int16_t>(p);
  }
}

// p leaves the empty list (the last entry takes its slot)
void Uct::take_empty(int p) {
  const int i = slot_[p];
  const int16_t last = empty_[--n_empty_];
  empty_[i] = last;
  slot_[last] = static_cast<int16_t>(i);
}

int Uct::rollout() {
  collect_empty();
  const int pass = b_.n2;
  const int cap = root_.n + kPlayoutLengthFactor * root_.n2;
  int16_t captured[kMaxPoints];
  while (!b_.game_over() && b_.n < cap) {
    const int me = b_.to_play;
    // uniform over the allowed points: draw among the k untried ones; a refused point is swapped to the
    // end of the untried part (kept in the list: it may be allowed on a later move)
    int move = pass;
    for (int k = n_empty_; k > 0; --k) {
      const int i = below(k);
      const int p = empty_[i];
      if (!own_eye(p, me) && b_.legal(p)) {
        move = p;
        break;
      }
      const int16_t q = empty_[k - 1];
      empty_[k - 1] = static_cast<int16_t>(p);
      empty_[i] = q;
      slot_[p] = static_cast<int16_t>(k - 1);
      slot_[q] = static_cast<int16_t>(i);
    }
    if (move == pass) {
      b_.play(pass);
      continue;
    }
    // the opponent's groups next to the move with one liberty (the move) are captured: their stones
    const int n_captured = about_to_capture(move, -me, captured);
    b_.play(move);
    take_empty(move);
    for (int i = 0; i < n_captured; ++i) {
      slot_[captured[i]] = static_cast<int16_t>(n_empty_);
      empty_[n_empty_++] = captured[i];
    }
  }
  return result();
}

int Uct::about_to_capture(int p, int opponent, int16_t* out) const {
  int n = 0, roots[4], n_roots = 0;
  for (int k = 0; k < nbr_count_[p]; ++k) {
    const int q = nbr_[p][k];
    if (b_.color[q] != opponent || b_.libs[b_.group[q]] != 1) continue;
    const int r = b_.group[q];
    bool seen = false;
    for (int j = 0; j < n_roots; ++j) seen |= roots[j] == r;
    if (seen) continue;
    roots[n_roots++] = r;
    int s = r;
    do {
      out[n++] = static_cast<int16_t>(s);
      s = b_.next_stone[s];
    } while (s != r);
  }
  return n;
}

}  // namespace
}  // namespace mgengine

extern "C" {

MG_API int32_t mg_uct_genmove(int N, double komi, const int32_t* moves, int n_moves, int64_t playouts,
                              uint64_t seed, double exploration, double* out_winrate, int32_t* out_visits) {
  using mgengine::Board;
  if (N < 2 || N > mgengine::kMaxN || n_moves < 0 || (n_moves > 0 && moves == nullptr) || playouts < 1)
    return -1;
  auto root = std::make_unique<Board>();
  root->reset(N, komi);
  for (int i = 0; i < n_moves; ++i) {
    if (moves[i] < 0 || moves[i] > root->n2 || !root->legal(moves[i]) || root->game_over()) return -1;
    root->play(moves[i]);
  }
  if (root->game_over()) return -1;
  if (out_visits != nullptr)
    for (int p = 0; p <= root->n2; ++p) out_visits[p] = 0;
  auto uct = std::make_unique<mgengine::Uct>(*root, seed, exploration);
  uct->run(playouts);
  return uct->best(out_winrate, out_visits);
}

}  // extern "C"

// The compiled searches of the self-play engine: MiniGo's PUCT (the same arithmetic as
// minigo_core/search/mcts.py, so fixed positions give the same visit counts) and Gumbel AlphaZero
// (Danihelka et al., ICLR 2022), on one tree per game, with the AlphaGo Zero paper's names.
//
// A tree is a vector of nodes. The statistics of a node's children live in a block of per-child arrays (N,
// virtual losses, W, P, legality, child index; with the score utility on, U), made the first time the search
// walks through the node; a node's own N and W are in its parent's block (the root's in the tree). W (the
// value head's win/loss values) and U (the utilities the search reads instead, `leaf_utility`) are from
// Black's view, as in MiniGo. MiniGo's two score terms, Q and P / (1 + N), are computed from the block when
// scoring (the same float64 operations as mcts.py's caches, so the same values). Boards (about 6 KB each) are
// kept for the root, every kBoardEvery-th level of the nodes with a block and the leaves waiting for the
// network; a leaf's board is dropped once it is evaluated, and any node's board that is not kept is replayed
// from its nearest ancestor's when the search walks through it (a few moves). Leaves are not evaluated here:
// `select_leaf` returns a leaf, the caller evaluates it (in a batch with other trees' leaves) and calls
// `expand` and `backup`.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "board.h"
#include "engine_capi.h"

namespace mgengine {

// Deterministic random numbers, one stream per game: xoshiro256** seeded through splitmix64 from
// (run seed, generation, game index). Draws depend only on the game's own sequence of calls.
struct Rng {
  uint64_t s[4];
  void seed(uint64_t a, uint64_t b, uint64_t c);
  uint64_t next();
  double uniform();                       // [0, 1), 53 bits
  int below(int n);                       // 0 .. n-1
  double log_gamma_sample(double alpha);  // log of a Gamma(alpha, 1) draw (stable for alpha << 1)
  double gumbel();                        // standard Gumbel
};

// The search settings: the C API's struct (engine_capi.h), which Python fills through ctypes.
using SearchSettings = MgEngineSettings;

// The value a position backs up, the view of `value`'s player: the value head's v (win/loss, [-1, 1]), plus
// with the score utility on (s.score_utility > 0, KataGo's static score utility centred at 0)
// s.score_utility * (2/pi) atan(points / s.score_utility_scale), `points` the final margin (the score head's,
// or a finished game's exact score) from the same view. Off, v itself (the same bits). mcts.leaf_utility is
// the same arithmetic.
constexpr double kTwoOverPi = 2.0 / 3.141592653589793;
inline double leaf_utility(const SearchSettings& s, double value, double points) {
  if (!(s.score_utility > 0)) return value;
  return value + s.score_utility * (kTwoOverPi * std::atan(points / s.score_utility_scale));
}

// numpy's pairwise summation of a float64 vector (the order np.sum adds in), so sums match mcts.py bit for
// bit.
double numpy_sum(const double* a, int n);

// Gumbel AlphaZero's improved policy softmax(logits + sigma(completed Q)) over the legal moves (0 elsewhere):
// completed Q is Q(a) for visited moves and the mixed value v_mix for the others, min-max normalised over
// the legal moves; sigma(q) = (c_visit + max_b N(b)) * c_scale * q. q_mover: Q(a) from the view of the player
// to move; raw_value: the network's value of the node, same view. With no visits it equals the prior.
void gumbel_improved_policy(int A, const double* prior, const int32_t* N, const double* q_mover,
                            const uint8_t* legal, double raw_value, double c_visit, double c_scale,
                            double* out, const double* log_prior = nullptr);

// Boards are kept at the root and at every kBoardEvery-th level of the built nodes; any other node's board is
// replayed from its nearest ancestor keeping one (at most kBoardEvery - 1 moves) when the search needs it.
constexpr int kBoardEvery = 4;

struct Node {
  int32_t board = -1;   // slot of the node's Board in Tree::boards; -1 when dropped (replayed when needed)
  int32_t parent = -1;  // -1: the root
  int32_t move = -1;    // the move from the parent (flat, pass = n2)
  int32_t block = -1;   // offset of the children's block, -1 until built
  int32_t probs = -1;   // offset of the network's policy (A floats) from expansion until the block is built
  int8_t expanded = 0;
  int8_t terminal = 0;  // found to be terminal: terminal_value holds the result
  int8_t to_play = kBlack;
  int8_t hop = 0;  // levels below the nearest ancestor that keeps its board once built (0: this node does)
  double terminal_value = 0;    // Black's view, +-1
  double terminal_utility = 0;  // leaf_utility of the final position, Black's view
  double q_init = 0;            // Q of unvisited children, mover's view (of the search's values)
  double value = 0;             // the network's value, mover's view (win/loss: what analysis reports)
  double utility = 0;           // leaf_utility of the node, mover's view (what the search backs up)
};

class Tree {
 public:
  Tree(const SearchSettings* s, int N);
  const SearchSettings* s;
  int N, n2, A;
  int max_game_length;
  std::vector<Node> nodes;
  std::vector<Board> boards;
  std::vector<int32_t> free_boards;
  Board scratch;  // the board of node scratch_node, replayed (a node that keeps none)
  int32_t scratch_node = -1;
  std::vector<int32_t> replay;  // the moves being replayed into `scratch`
  // children's blocks (A entries per built node); cvirt only where virtual losses can be pending at selection
  // (PUCT with parallel_readouts > 1): elsewhere every virtual loss is undone before the next selection
  bool virtual_loss;
  std::vector<int32_t> cN, cvirt, cchild;
  std::vector<int32_t> no_virtual;  // A zeros: the virtual losses of a tree without cvirt
  // cW sums the win/loss values (what is recorded and reported); with the score utility on, cU sums the
  // utilities the search reads (Q, Gumbel's completed Q); off, cU is empty and the search reads cW
  bool with_utility;
  std::vector<double> cW, cU, cprior;
  std::vector<double> clogp;  // log of cprior (-1e9 where 0), for Gumbel's improved policy at every level
  std::vector<uint8_t> clegal;
  std::vector<float> probs;  // the network's policy of expanded nodes without a block yet (A floats each)
  std::vector<int32_t> free_probs;
  std::vector<double> root_orig_prior;  // the root's prior before noise (empty: no noise applied)
  int32_t root = -1;
  int32_t root_N = 0;
  double root_W = 0;

  void clear();
  // Room for `readouts` more nodes and blocks, so a search never regrows (and never fragments) its vectors.
  void reserve(int readouts);
  // Make `board` the root: the current root's child after one move keeps its subtree (MiniGo's reuse).
  void set_root(const Board& board);
  bool is_terminal(const Board& b) const { return b.game_over() || b.n >= max_game_length; }
  // the node's own N, virtual losses and W (from its parent's block, or the root's)
  double node_N(int x) const;
  double node_virt(int x) const;
  double node_W(int x) const;
  double root_q_mover() const;  // root W / N from the view of the player to move
  // the node's board (replayed into `scratch` if it keeps none: valid until the next call)
  const Board& board(int x);
  const Board& kept_board(int x) const { return boards[nodes[x].board]; }  // nodes known to keep theirs
  void drop_board(int x);  // an evaluated or terminal leaf: keep only what the tree needs
  const int32_t* virt(int b) const { return virtual_loss ? cvirt.data() + b : no_virtual.data(); }
  // the sums of the search's values of block b's children (Black's view): cU's, or cW's with the utility off
  const double* search_W(int b) const { return with_utility ? cU.data() + b : cW.data() + b; }
  void expand(int x, const float* policy, float value_mover, double utility_mover);
  void ensure_built(int x);
  int child(int x, int a);  // the child after move a (made on first use)
  // PUCT
  int select_leaf_puct();
  void add_virtual_loss(int leaf);
  // one visit of every node from the leaf up to the root: the win/loss value to W, the utility to U (the
  // root's own statistics hold the win/loss value only: the search never reads the root's own U)
  void backup(int leaf, double value_black, double utility_black, bool undo_virtual_loss);
  void set_prior(int x, const double* prior);
  void refresh_log_prior(int b);  // clogp of block b from cprior
  void apply_dirichlet(Rng& rng);
  void restore_root_prior();
  int pick_move_puct(Rng& rng) const;
  void root_visits(int32_t* out) const;
  // KL(target || the network's prior at the root, before any noise) in nats: how far the search moved the
  // policy at this position (KataGo's policy surprise; the window can sample by it). 0 for an unbuilt root.
  double root_surprise(const double* target) const;
  // Gumbel
  void improved_policy(int x, double* out) const;
  int select_child_gumbel(int x) const;
  int select_leaf_gumbel(int root_action);

 private:
  void build(int x);
  int new_node(const Board& b, int parent, int move);
  int32_t store_board(const Board& b);
  double q_mover(int b, int a, int to_play, double q_init) const;
};

// The root of a Gumbel search: the considered moves and the sequential-halving schedule over the budget.
struct GumbelRoot {
  std::vector<double> g;       // Gumbel noise per move (0 without noise)
  std::vector<double> logits;  // log prior (-inf for moves not searched)
  std::vector<int> remaining;  // considered moves still in the halving
  std::vector<int> schedule;   // root moves of the current phase's simulations, in order
  size_t next = 0;
  int phases = 1, budget = 0, done = 0;
  void start(const Tree& t, Rng* rng, int budget);
  int next_action(const Tree& t);  // -1 when the budget is spent
  // whether the current phase's simulations are all started: the next action halves, which must read every
  // one of them backed up
  bool phase_started() const { return next >= schedule.size(); }
  // the last next_action's simulation is not run now: it comes again next
  void give_back() {
    --next;
    --done;
  }
  int chosen(const Tree& t) const;  // the move the search picks
 private:
  void plan_phase(const Tree& t);
  double score(const Tree& t, int a, const std::vector<double>& sigma) const;
  std::vector<double> sigma_q(const Tree& t) const;
};

}  // namespace mgengine

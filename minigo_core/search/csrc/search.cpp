// The PUCT and Gumbel searches on one game's tree (see search.h). The PUCT arithmetic follows mcts.py step by
// step (same operations in the same order, float64), so on a fixed position with noise and random symmetries
// off the compiled search and the Python reference give the same visit counts. The x86-64 baseline this file
// is compiled for has no FMA, so no multiply-add is contracted.
#include "search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mgengine {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSoftpickExponent = 0.98;

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

// ---- random numbers ---------------------------------------------------------------------------------------
void Rng::seed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = 0x6D696E69676Full;  // "minigo"
  x ^= splitmix64(a);
  x = splitmix64(x) ^ b;
  x = splitmix64(x) ^ c;
  for (auto& w : s) w = splitmix64(x);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

int Rng::below(int n) { return static_cast<int>((next() >> 33) % static_cast<uint64_t>(n)); }

double Rng::log_gamma_sample(double alpha) {
  // Marsaglia and Tsang (2000); for alpha < 1, Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha), kept in logs
  // (at Go's Dirichlet alphas, 0.03-0.13, U^(1/alpha) underflows in linear space).
  double boost = 0;
  if (alpha < 1) {
    double u;
    do u = uniform();
    while (u <= 0);
    boost = std::log(u) / alpha;
    alpha += 1;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      double u1, u2;  // Box-Muller
      do u1 = uniform();
      while (u1 <= 0);
      u2 = uniform();
      x = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (u > 0 && std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v) + boost;
  }
}

double Rng::gumbel() {
  double u;
  do u = uniform();
  while (u <= 0);
  return -std::log(-std::log(u));
}

// ---- numpy's float64 sum ---------------------------------------------------------------------------------
double numpy_sum(const double* a, int n) {
  if (n < 8) {
    double res = 0.;  // numpy: -0.0 + ..., equal for these non-negative sums
    for (int i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_sum(a, n2) + numpy_sum(a + n2, n - n2);
}

// ---- Gumbel AlphaZero's improved policy -------------------------------------------------------------------
void gumbel_improved_policy(int A, const double* prior, const int32_t* N, const double* q_mover,
                            const uint8_t* legal, double raw_value, double c_visit, double c_scale,
                            double* out, const double* log_prior) {
  // v_mix = (v + sum_b N(b) * sum_{visited} pi(a) q(a) / sum_{visited} pi(a)) / (1 + sum_b N(b))
  double sum_n = 0, pi_visited = 0, pi_q = 0;
  int max_n = 0;
  for (int a = 0; a < A; ++a) {
    if (!legal[a] || N[a] <= 0) continue;
    sum_n += N[a];
    max_n = std::max(max_n, N[a]);
    pi_visited += prior[a];
    pi_q += prior[a] * q_mover[a];
  }
  double v_mix = raw_value;
  if (sum_n > 0 && pi_visited > 0) v_mix = (raw_value + sum_n * (pi_q / pi_visited)) / (1.0 + sum_n);
  double lo = kInf, hi = -kInf;
  for (int a = 0; a < A; ++a) {
    if (!legal[a]) continue;
    const double q = N[a] > 0 ? q_mover[a] : v_mix;
    out[a] = q;
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  const double range = std::max(hi - lo, 1e-8);
  const double scale = (c_visit + max_n) * c_scale;
  double mx = -kInf;
  for (int a = 0; a < A; ++a) {
    if (!legal[a]) continue;
    const double logit = log_prior != nullptr ? log_prior[a] : prior[a] > 0 ? std::log(prior[a]) : -1e9;
    out[a] = logit + scale * ((out[a] - lo) / range);
    mx = std::max(mx, out[a]);
  }
  double total = 0;
  for (int a = 0; a < A; ++a) {
    out[a] = legal[a] ? std::exp(out[a] - mx) : 0.0;
    total += out[a];
  }
  for (int a = 0; a < A; ++a) out[a] /= total;
}

// ---- the tree ---------------------------------------------------------------------------------------------
Tree::Tree(const SearchSettings* s_, int N_)
    : s(s_),
      N(N_),
      n2(N_ * N_),
      A(N_ * N_ + 1),
      virtual_loss(s_->search == 0 && s_->parallel_readouts > 1),
      no_virtual(static_cast<size_t>(A), 0),
      with_utility(s_->score_utility > 0) {
  max_game_length = s->max_game_length > 0 ? s->max_game_length : 2 * n2;
}

void Tree::clear() {
  nodes.clear();
  cN.clear();
  cvirt.clear();
  cchild.clear();
  cW.clear();
  cU.clear();
  cprior.clear();
  clogp.clear();
  clegal.clear();
  boards.clear();
  free_boards.clear();
  probs.clear();
  free_probs.clear();
  root_orig_prior.clear();
  scratch_node = -1;
  root = -1;
  root_N = 0;
  root_W = 0;
}

// A vector's room for n entries: at least n, and when it must grow, at least twice what it had (a search
// adding chunks to a kept tree would otherwise copy the whole tree at every chunk).
template <typename V>
static void grow_to(V& v, size_t n) {
  if (v.capacity() < n) v.reserve(std::max(n, 2 * v.capacity()));
}

void Tree::reserve(int readouts) {
  const size_t r = static_cast<size_t>(readouts) + 2;
  const size_t blocks = cN.size() + static_cast<size_t>(A) * r;
  grow_to(nodes, nodes.size() + r);
  grow_to(probs, probs.size() + static_cast<size_t>(A) * r);
  grow_to(cN, blocks);
  grow_to(cchild, blocks);
  if (virtual_loss) grow_to(cvirt, blocks);
  grow_to(cW, blocks);
  if (with_utility) grow_to(cU, blocks);
  grow_to(cprior, blocks);
  grow_to(clogp, blocks);
  grow_to(clegal, blocks);
  grow_to(boards, boards.size() + static_cast<size_t>(readouts) / kBoardEvery + 2);
}

int32_t Tree::store_board(const Board& b) {
  if (!free_boards.empty()) {
    const int32_t slot = free_boards.back();
    free_boards.pop_back();
    std::memcpy(&boards[slot], &b, sizeof(Board));
    return slot;
  }
  boards.emplace_back();
  std::memcpy(&boards.back(), &b, sizeof(Board));
  return static_cast<int32_t>(boards.size()) - 1;
}

const Board& Tree::board(int x) {
  if (nodes[x].board >= 0) return boards[nodes[x].board];
  if (x == scratch_node) return scratch;
  // replay from the nearest ancestor with a board (the root keeps one), or from the scratch board's node
  replay.clear();
  int y = x;
  while (nodes[y].board < 0 && y != scratch_node) {
    replay.push_back(nodes[y].move);
    y = nodes[y].parent;
  }
  if (y != scratch_node) std::memcpy(&scratch, &boards[nodes[y].board], sizeof(Board));
  for (auto m = replay.rbegin(); m != replay.rend(); ++m) scratch.play(*m);
  scratch_node = x;
  return scratch;
}

void Tree::drop_board(int x) {
  Node& nd = nodes[x];
  if (x == root || (nd.block >= 0 && nd.hop == 0) || nd.board < 0) return;
  free_boards.push_back(nd.board);
  nd.board = -1;
}

int Tree::new_node(const Board& b, int parent, int move) {
  const int32_t slot = store_board(b);
  const int hop = parent < 0 ? 0 : (nodes[parent].hop + 1) % kBoardEvery;
  nodes.emplace_back();
  Node& nd = nodes.back();
  nd.board = slot;
  nd.to_play = static_cast<int8_t>(b.to_play);
  nd.hop = static_cast<int8_t>(hop);
  nd.parent = parent;
  nd.move = move;
  return static_cast<int>(nodes.size()) - 1;
}

void Tree::set_root(const Board& board) {
  // reuse: the new position is the current root's child after the move just played
  if (root >= 0 && board.n == kept_board(root).n + 1 && board.last_move >= 0) {
    const int rb = nodes[root].block;
    const int c = rb >= 0 ? cchild[rb + board.last_move] : -1;
    const Board* cb = c >= 0 ? &this->board(c) : nullptr;
    if (c >= 0 && std::memcmp(cb->color, board.color, sizeof(board.color)) == 0 &&
        cb->to_play == board.to_play && cb->ko == board.ko) {
      // copy the subtree of c into a fresh tree (breadth first), the rest is dropped
      Tree fresh(s, N);
      fresh.root_N = static_cast<int32_t>(node_N(c));
      fresh.root_W = node_W(c);
      std::vector<std::pair<int, int>> queue{{c, -1}};  // (old node, new parent)
      std::vector<int> new_index_of_parent_slot;
      for (size_t k = 0; k < queue.size(); ++k) {
        const auto [old, new_parent] = queue[k];
        const Node& o = nodes[old];
        int x;
        if (new_parent < 0) {  // the new root: its board (replayed if it kept none)
          x = fresh.new_node(*cb, -1, -1);
        } else if (o.board >= 0) {
          x = fresh.new_node(boards[o.board], new_parent, o.move);
        } else {
          fresh.nodes.emplace_back();
          x = static_cast<int>(fresh.nodes.size()) - 1;
          fresh.nodes[x].parent = new_parent;
          fresh.nodes[x].move = o.move;
          fresh.nodes[x].to_play = o.to_play;
        }
        Node& nx = fresh.nodes[x];
        nx.hop = new_parent < 0 ? 0 : o.hop;
        nx.expanded = o.expanded;
        nx.terminal = o.terminal;
        nx.terminal_value = o.terminal_value;
        nx.terminal_utility = o.terminal_utility;
        nx.q_init = o.q_init;
        nx.value = o.value;
        nx.utility = o.utility;
        if (o.probs >= 0) {
          nx.probs = static_cast<int32_t>(fresh.probs.size());
          fresh.probs.insert(fresh.probs.end(), probs.begin() + o.probs, probs.begin() + o.probs + A);
        }
        if (new_parent >= 0) fresh.cchild[fresh.nodes[new_parent].block + o.move] = x;
        if (o.block >= 0) {
          const int nb = static_cast<int>(fresh.cN.size());
          fresh.nodes[x].block = nb;
          fresh.cN.insert(fresh.cN.end(), cN.begin() + o.block, cN.begin() + o.block + A);
          if (virtual_loss)
            fresh.cvirt.insert(fresh.cvirt.end(), cvirt.begin() + o.block, cvirt.begin() + o.block + A);
          fresh.cchild.insert(fresh.cchild.end(), A, -1);
          fresh.cW.insert(fresh.cW.end(), cW.begin() + o.block, cW.begin() + o.block + A);
          if (with_utility) fresh.cU.insert(fresh.cU.end(), cU.begin() + o.block, cU.begin() + o.block + A);
          fresh.cprior.insert(fresh.cprior.end(), cprior.begin() + o.block, cprior.begin() + o.block + A);
          fresh.clogp.insert(fresh.clogp.end(), clogp.begin() + o.block, clogp.begin() + o.block + A);
          fresh.clegal.insert(fresh.clegal.end(), clegal.begin() + o.block, clegal.begin() + o.block + A);
          for (int a = 0; a < A; ++a)
            if (cchild[o.block + a] >= 0) queue.push_back({cchild[o.block + a], x});
        }
      }
      fresh.root = 0;
      std::swap(nodes, fresh.nodes);
      std::swap(cN, fresh.cN);
      std::swap(cvirt, fresh.cvirt);
      std::swap(cchild, fresh.cchild);
      std::swap(cW, fresh.cW);
      std::swap(cU, fresh.cU);
      std::swap(cprior, fresh.cprior);
      std::swap(clogp, fresh.clogp);
      std::swap(clegal, fresh.clegal);
      std::swap(boards, fresh.boards);
      std::swap(free_boards, fresh.free_boards);
      std::swap(probs, fresh.probs);
      std::swap(free_probs, fresh.free_probs);
      root_orig_prior.clear();
      scratch_node = -1;
      root = 0;
      root_N = fresh.root_N;
      root_W = fresh.root_W;
      return;
    }
  }
  if (root >= 0 && std::memcmp(&kept_board(root), &board, sizeof(Board)) == 0) return;  // same position
  clear();
  root = new_node(board, -1, -1);
}

double Tree::node_N(int x) const {
  const Node& nd = nodes[x];
  return nd.parent < 0 ? static_cast<double>(root_N)
                       : static_cast<double>(cN[nodes[nd.parent].block + nd.move]);
}
double Tree::node_virt(int x) const {
  const Node& nd = nodes[x];
  return nd.parent < 0 ? 0.0 : static_cast<double>(virt(nodes[nd.parent].block)[nd.move]);
}
double Tree::node_W(int x) const {
  const Node& nd = nodes[x];
  return nd.parent < 0 ? root_W : cW[nodes[nd.parent].block + nd.move];
}
double Tree::root_q_mover() const { return root_N ? root_W / root_N * nodes[root].to_play : 0.0; }

void Tree::expand(int x, const float* policy, float value_mover, double utility_mover) {
  Node& nd = nodes[x];
  // unvisited children: the node's own utility (its value with the utility off), or the worst utility
  nd.q_init = s->init_unvisited_loss ? -1.0 - (with_utility ? s->score_utility : 0.0) : utility_mover;
  nd.value = static_cast<double>(value_mover);
  nd.utility = utility_mover;
  if (!free_probs.empty()) {
    nd.probs = free_probs.back();
    free_probs.pop_back();
    std::memcpy(probs.data() + nd.probs, policy, sizeof(float) * A);
  } else {
    nd.probs = static_cast<int32_t>(probs.size());
    probs.insert(probs.end(), policy, policy + A);
  }
  nd.expanded = 1;
}

void Tree::build(int x) {
  // mcts.MCTSNode._build_vectors: priors over the searched moves, renormalised; unvisited Q = q_init
  uint8_t legal[kMaxPoints + 1];
  const Board& bx = board(x);
  search_moves(bx, legal);
  if (nodes[x].hop == 0 && nodes[x].board < 0) nodes[x].board = store_board(bx);  // kept from now on
  const int b = static_cast<int>(cN.size());
  cN.insert(cN.end(), A, 0);
  if (virtual_loss) cvirt.insert(cvirt.end(), A, 0);
  cchild.insert(cchild.end(), A, -1);
  cW.insert(cW.end(), A, 0.0);
  if (with_utility) cU.insert(cU.end(), A, 0.0);
  cprior.resize(cprior.size() + A);
  clegal.insert(clegal.end(), legal, legal + A);
  Node& nd = nodes[x];
  nd.block = b;
  double* prior = cprior.data() + b;
  const float* p = probs.data() + nd.probs;
  int n_legal = 0;
  for (int a = 0; a < A; ++a) {
    prior[a] = legal[a] ? static_cast<double>(p[a]) : 0.0;
    n_legal += legal[a];
  }
  free_probs.push_back(nd.probs);  // the block holds the prior from now on
  nd.probs = -1;
  const double total = numpy_sum(prior, A);
  if (total > 0) {
    for (int a = 0; a < A; ++a) prior[a] /= total;
  } else {
    for (int a = 0; a < A; ++a) prior[a] = legal[a] ? 1.0 / n_legal : 0.0;
  }
  clogp.resize(cprior.size());
  refresh_log_prior(b);
}

void Tree::refresh_log_prior(int b) {
  for (int a = 0; a < A; ++a) clogp[b + a] = cprior[b + a] > 0 ? std::log(cprior[b + a]) : -1e9;
}

void Tree::ensure_built(int x) {
  if (nodes[x].block < 0) build(x);
}

int Tree::child(int x, int a) {
  const int b = nodes[x].block;
  int c = cchild[b + a];
  if (c < 0) {
    Board next;
    std::memcpy(&next, &board(x), sizeof(Board));
    next.play(a);
    c = new_node(next, x, a);
    cchild[nodes[x].block + a] = c;
  }
  return c;
}

// MiniGo's Q of child a from the mover's view, virtual losses counted as losses (mcts.MCTSNode.refresh)
double Tree::q_mover(int b, int a, int to_play, double q_init) const {
  const int i = b + a;
  const double n_virtual = static_cast<double>(virt(b)[a]);
  const double n = static_cast<double>(cN[i]) + n_virtual;
  return n != 0.0 ? (search_W(b)[a] * to_play - n_virtual) / n : q_init;
}

int Tree::select_leaf_puct() {
  int x = root;
  while (nodes[x].expanded) {
    ensure_built(x);
    const double n = node_N(x) + node_virt(x);
    const double scale =
        2.0 * (std::log((1.0 + n + s->c_base) / s->c_base) + s->c_init) * std::sqrt(std::max(1.0, n - 1.0));
    const int b = nodes[x].block;
    const int to_play = nodes[x].to_play;
    const double q_init = nodes[x].q_init;
    int best = 0;
    double best_score = -kInf;
    const int32_t* virtual_losses = virt(b);
    for (int a = 0; a < A; ++a) {
      if (!clegal[b + a]) continue;
      const double n = static_cast<double>(cN[b + a]) + static_cast<double>(virtual_losses[a]);
      const double sc = q_mover(b, a, to_play, q_init) + scale * (cprior[b + a] / (1.0 + n));
      if (sc > best_score) {
        best_score = sc;
        best = a;
      }
    }
    x = child(x, best);
  }
  return x;
}

void Tree::add_virtual_loss(int leaf) {
  if (!virtual_loss) return;  // undone by the backup before the next selection: nothing to count
  for (int x = leaf; x != root;) {
    const int p = nodes[x].parent;
    cvirt[nodes[p].block + nodes[x].move] += 1;
    x = p;
  }
}

void Tree::backup(int leaf, double value_black, double utility_black, bool undo_virtual_loss) {
  for (int x = leaf;;) {
    if (x == root) {
      root_N += 1;
      root_W += value_black;
      return;
    }
    const int p = nodes[x].parent;
    const int i = nodes[p].block + nodes[x].move;
    cN[i] += 1;
    cW[i] += value_black;
    if (with_utility) cU[i] += utility_black;
    if (undo_virtual_loss && virtual_loss) cvirt[i] -= 1;
    x = p;
  }
}

void Tree::set_prior(int x, const double* prior) {
  const int b = nodes[x].block;
  for (int a = 0; a < A; ++a) cprior[b + a] = prior[a];
  refresh_log_prior(b);
}

void Tree::apply_dirichlet(Rng& rng) {
  // mcts.MCTSPlayer.add_root_noise: (1 - w) P + w Dirichlet(alpha) over the searched moves
  const int b = nodes[root].block;
  if (root_orig_prior.empty()) root_orig_prior.assign(cprior.begin() + b, cprior.begin() + b + A);
  std::vector<double> noise(A, 0.0), mixed(A);
  double mx = -kInf;
  for (int a = 0; a < A; ++a)
    if (clegal[b + a]) {
      noise[a] = rng.log_gamma_sample(s->dirichlet_alpha);
      mx = std::max(mx, noise[a]);
    }
  double total = 0;
  for (int a = 0; a < A; ++a) {
    noise[a] = clegal[b + a] ? std::exp(noise[a] - mx) : 0.0;
    total += noise[a];
  }
  const double w = s->dirichlet_weight;
  for (int a = 0; a < A; ++a) mixed[a] = (1.0 - w) * root_orig_prior[a] + w * (noise[a] / total);
  set_prior(root, mixed.data());
}

void Tree::restore_root_prior() {
  if (root_orig_prior.empty()) return;
  set_prior(root, root_orig_prior.data());
  root_orig_prior.clear();
}

int Tree::pick_move_puct(Rng& rng) const {
  const int b = nodes[root].block;
  if (kept_board(root).n < s->softpick_moves) {
    std::vector<double> cdf(A);
    double total = 0;
    for (int a = 0; a < A; ++a) total += std::pow(static_cast<double>(cN[b + a]), kSoftpickExponent);
    double acc = 0;
    for (int a = 0; a < A; ++a) {
      acc += std::pow(static_cast<double>(cN[b + a]), kSoftpickExponent) / total;
      cdf[a] = acc;
    }
    const double u = rng.uniform() * cdf[A - 1];
    const int k = static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
    return std::min(k, A - 1);
  }
  int best = 0;
  for (int a = 1; a < A; ++a)
    if (cN[b + a] > cN[b + best]) best = a;
  return best;
}

void Tree::root_visits(int32_t* out) const {
  const int b = nodes[root].block;
  for (int a = 0; a < A; ++a) out[a] = b >= 0 ? cN[b + a] : 0;
}

double Tree::root_surprise(const double* target) const {
  const int b = nodes[root].block;
  if (b < 0) return 0.0;
  const double* prior = root_orig_prior.empty() ? cprior.data() + b : root_orig_prior.data();
  double kl = 0;
  for (int a = 0; a < A; ++a)
    if (target[a] > 0) kl += target[a] * (std::log(target[a]) - std::log(std::max(prior[a], 1e-12)));
  return std::max(kl, 0.0);
}

// ---- Gumbel ----------------------------------------------------------------------------------------------
void Tree::improved_policy(int x, double* out) const {
  const int b = nodes[x].block;
  const int to_play = nodes[x].to_play;
  thread_local std::vector<double> q;
  q.resize(A);
  const double* w = search_W(b);
  for (int a = 0; a < A; ++a) q[a] = cN[b + a] > 0 ? w[a] / cN[b + a] * to_play : 0.0;
  gumbel_improved_policy(A, cprior.data() + b, cN.data() + b, q.data(), clegal.data() + b, nodes[x].utility,
                         s->gumbel_c_visit, s->gumbel_c_scale, out, clogp.data() + b);
}

int Tree::select_child_gumbel(int x) const {
  // deterministic non-root selection: argmax_a pi'(a) - N(a) / (1 + sum_b N(b))
  thread_local std::vector<double> pi;
  pi.resize(A);
  improved_policy(x, pi.data());
  const int b = nodes[x].block;
  double sum_n = 0;
  for (int a = 0; a < A; ++a) sum_n += cN[b + a];
  int best = -1;
  double best_score = -kInf;
  for (int a = 0; a < A; ++a) {
    if (!clegal[b + a]) continue;
    const double sc = pi[a] - cN[b + a] / (1.0 + sum_n);
    if (sc > best_score) {
      best_score = sc;
      best = a;
    }
  }
  return best;
}

int Tree::select_leaf_gumbel(int root_action) {
  int x = child(root, root_action);
  while (nodes[x].expanded) {
    ensure_built(x);
    x = child(x, select_child_gumbel(x));
  }
  return x;
}

std::vector<double> GumbelRoot::sigma_q(const Tree& t) const {
  // sigma(completed Q) of the root's moves: log pi'(a) - logits(a), up to a constant (from improved_policy)
  const int b = t.nodes[t.root].block;
  const int to_play = t.nodes[t.root].to_play;
  std::vector<double> q(t.A), out(t.A);
  std::vector<uint8_t> legal(t.A);
  int max_n = 0;
  double sum_n = 0, pi_visited = 0, pi_q = 0;
  const double* w = t.search_W(b);
  for (int a = 0; a < t.A; ++a) {
    legal[a] = t.clegal[b + a];
    const int n = t.cN[b + a];
    q[a] = n > 0 ? w[a] / n * to_play : 0.0;
    if (legal[a] && n > 0) {
      max_n = std::max(max_n, n);
      sum_n += n;
      pi_visited += t.cprior[b + a];
      pi_q += t.cprior[b + a] * q[a];
    }
  }
  const double raw = t.nodes[t.root].utility;
  double v_mix = raw;
  if (sum_n > 0 && pi_visited > 0) v_mix = (raw + sum_n * (pi_q / pi_visited)) / (1.0 + sum_n);
  double lo = kInf, hi = -kInf;
  for (int a = 0; a < t.A; ++a) {
    if (!legal[a]) continue;
    out[a] = t.cN[b + a] > 0 ? q[a] : v_mix;
    lo = std::min(lo, out[a]);
    hi = std::max(hi, out[a]);
  }
  const double range = std::max(hi - lo, 1e-8);
  const double scale = (t.s->gumbel_c_visit + max_n) * t.s->gumbel_c_scale;
  for (int a = 0; a < t.A; ++a) out[a] = legal[a] ? scale * ((out[a] - lo) / range) : -kInf;
  return out;
}

double GumbelRoot::score(const Tree&, int a, const std::vector<double>& sigma) const {
  return g[a] + logits[a] + sigma[a];
}

void GumbelRoot::start(const Tree& t, Rng* rng, int budget_) {
  const int b = t.nodes[t.root].block;
  g.assign(t.A, 0.0);
  logits.assign(t.A, -kInf);
  std::vector<int> legal;
  for (int a = 0; a < t.A; ++a) {
    if (!t.clegal[b + a]) continue;
    legal.push_back(a);
    logits[a] = t.cprior[b + a] > 0 ? std::log(t.cprior[b + a]) : -1e9;
    if (rng != nullptr) g[a] = rng->gumbel();
  }
  budget = budget_;
  done = 0;
  const int m = std::max(1, std::min({budget, t.s->gumbel_considered, static_cast<int>(legal.size())}));
  // Gumbel-top-m: the m moves with the largest g + logits (ties: the lower move)
  std::stable_sort(legal.begin(), legal.end(),
                   [&](int x, int y) { return g[x] + logits[x] > g[y] + logits[y]; });
  remaining.assign(legal.begin(), legal.begin() + std::min<size_t>(m, legal.size()));
  phases = 1;
  while ((1 << phases) < m) ++phases;
  schedule.clear();
  next = 0;
  if (budget > 0 && !remaining.empty()) plan_phase(t);
}

void GumbelRoot::plan_phase(const Tree&) {
  // sequential halving: each remaining move gets floor(n / (phases * |remaining|)) (at least 1) simulations
  const int k = static_cast<int>(remaining.size());
  const int per = std::max(1, budget / (phases * k));
  schedule.clear();
  for (int v = 0; v < per; ++v)
    for (int a : remaining) schedule.push_back(a);
  next = 0;
}

int GumbelRoot::next_action(const Tree& t) {
  if (done >= budget || remaining.empty()) return -1;
  if (next >= schedule.size()) {
    if (remaining.size() > 1) {  // halve: keep the better half by g + logits + sigma(q)
      const auto sigma = sigma_q(t);
      std::stable_sort(remaining.begin(), remaining.end(),
                       [&](int x, int y) { return score(t, x, sigma) > score(t, y, sigma); });
      remaining.resize((remaining.size() + 1) / 2);
    }
    plan_phase(t);
  }
  ++done;
  return schedule[next++];
}

int GumbelRoot::chosen(const Tree& t) const {
  if (remaining.empty()) return t.n2;
  const auto sigma = sigma_q(t);
  int best = remaining[0];
  for (int a : remaining)
    if (score(t, a, sigma) > score(t, best, sigma)) best = a;
  return best;
}

}  // namespace mgengine

// mg_replay_examples (rules_capi.h): a finished game's moves replayed on the engine's board (board.h) into
// what a training example needs besides the search's targets: the feature planes of the sampled positions
// and the final position's ownership and score. The same bytes as go.replay + features.extract_batch +
// Position.ownership/score (tests/unit/test_replay.py compares them); `minigo window` calls it through
// minigo_core/game/native_replay.py, one call per game, instead of replaying in Python.
#include <cstddef>
#include <cstdint>

#include "board.h"
#include "rules_capi.h"

namespace {

constexpr int kBadArguments = -1000000;
constexpr int kMaxMoves = 999999;  // -1-i for an illegal move i stays above kBadArguments

}  // namespace

extern "C" {

MG_RULES_API int mg_replay_examples(int N, double komi, int feature_set, const int32_t* moves, int n_moves,
                                    const int32_t* at, int n_at, uint8_t* planes_out, int8_t* to_play_out,
                                    int8_t* ownership_out, double* score_out) {
  const int planes = mgengine::num_planes(feature_set);
  if (N < 2 || N > mgengine::kMaxN || planes < 0 || n_moves < 0 || n_moves > kMaxMoves || n_at < 0)
    return kBadArguments;
  if ((n_moves > 0 && moves == nullptr) ||
      (n_at > 0 && (at == nullptr || planes_out == nullptr || to_play_out == nullptr)) ||
      ownership_out == nullptr || score_out == nullptr)
    return kBadArguments;
  for (int i = 0; i < n_at; ++i)
    if (at[i] < 0 || at[i] > n_moves || (i > 0 && at[i] < at[i - 1])) return kBadArguments;

  mgengine::Board b;
  b.reset(N, komi);
  const size_t per_example = static_cast<size_t>(planes) * static_cast<size_t>(b.n2);
  int next = 0;  // the next entry of `at` to write
  for (int m = 0;; ++m) {
    for (; next < n_at && at[next] == m; ++next) {
      mgengine::write_features(b, feature_set, 0, planes_out + per_example * static_cast<size_t>(next));
      to_play_out[next] = static_cast<int8_t>(b.to_play);
    }
    if (m == n_moves) break;
    if (!b.legal(moves[m])) return -1 - m;
    b.play(moves[m]);
  }
  b.ownership(ownership_out);
  *score_out = b.score();
  return 0;
}

}  // extern "C"

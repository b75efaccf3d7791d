// The engine's test library (engine_test_capi.h): the search's arithmetic behind plain C functions, for the
// tests that compare it with the Python reference (minigo_core/search/engine_test.py, ctypes).
#include "engine_test_capi.h"

#include <cstdint>

#include "search.h"

extern "C" {

MG_TEST_API void mg_gumbel_improved_policy(int A, const double* prior, const int32_t* N,
                                           const double* q_mover, const uint8_t* legal, double raw_value,
                                           double c_visit, double c_scale, double* out) {
  mgengine::gumbel_improved_policy(A, prior, N, q_mover, legal, raw_value, c_visit, c_scale, out);
}

}  // extern "C"

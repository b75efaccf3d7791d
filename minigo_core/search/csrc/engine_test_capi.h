// The C API of the engine's test library `minigo_core/search/_engine_test*.so`: the search's arithmetic
// (search.h) behind plain C functions, for the tests that compare it with the Python reference, through
// ctypes (`minigo_core/search/engine_test.py`'s table TEST_FUNCTIONS mirrors this header). Built from
// engine_test_capi.cpp, the rules' board.cpp and search.cpp; no job loads it, and the production library
// `_engine` exports none of these.
#pragma once

#include <cstdint>

#define MG_TEST_API __attribute__((visibility("default")))

extern "C" {

// ---- the search's arithmetic ----
// Gumbel AlphaZero's improved policy (search.h's gumbel_improved_policy), for tests of its properties.
MG_TEST_API void mg_gumbel_improved_policy(int A, const double* prior, const int32_t* N,
                                           const double* q_mover, const uint8_t* legal, double raw_value,
                                           double c_visit, double c_scale, double* out);

}  // extern "C"

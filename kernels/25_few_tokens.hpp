// Stage 25's launchers, defined in 25_few_tokens.cu.
#pragma once

#include <array>

#include "common/gemm_problem.hpp"

namespace sgemm {

// How stage 25's launcher runs a shape: tiles of `columns` columns of C (64 or 128) by
// `tokens` rows (8, 16, 32, 64 or 128), K split over clusters of `splits` CTAs (1-8).
struct FewTokensPlan {
    int tokens;
    int columns;
    int splits;
};
constexpr int kMaxFewTokensSplits = 8;

// resident[s]: the CTAs of stage 25's kernel the GPU holds at once in clusters of s CTAs
// (resident[1]: one to an SM, whatever the tile; resident[0] unused).
using ResidentCtas = std::array<int, kMaxFewTokensSplits + 1>;

// What this GPU holds (asked of the occupancy calculator once a process).
const ResidentCtas& few_tokens_resident_ctas();

// The smallest token tile that holds M rows, or 128.
int few_tokens_tile_tokens(int m);

// The plan for a shape on a GPU that holds `resident` (25_few_tokens.cu).
FewTokensPlan few_tokens_plan(const GemmShape& shape, const ResidentCtas& resident);

// Any shape: rows off 16 bytes (K or N off a multiple of 8) are loaded without TMA.
void launch_few_tokens(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

// The same writing C in bf16 (sgemm --c-type bf16; the driver asks K and N multiples of 8).
void launch_few_tokens_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm

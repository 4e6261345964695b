// Stage 20's launchers, defined in 20_hopper_tuned.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// K and N multiples of 8 (TMA's rows start 16-byte aligned).
void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream);

// The tile stage 20's launcher runs a shape in on a GPU of `sms` SMs (tuned_tiles_for in
// 20_hopper_tuned.cu): block_m x block_n, in clusters of cluster_m along M.
struct HopperTile {
    int block_m;
    int block_n;
    int cluster_m;
};
HopperTile hopper_tuned_tile(const GemmShape& shape, int sms);

// The same writing C in bf16 (sgemm --c-type bf16).
void launch_hopper_tuned_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm

#include "dispatch/fp8.hpp"

#include "29_fp8_tiles.hpp"

namespace sgemm {

// Stage 29's kernel in every scaling, in the tile its model predicts fastest for the shape
// (fp8_tile_cycles). Stages 27 and 28 run its kernel in one tile; stage 26 does not promote.
KernelChoice choose_fp8_kernel(const GemmShape& shape, Fp8Scaling) {
    return KernelChoice{29, false, fp8_tile_for(shape, sm_count_here()).name};
}

void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream) {
    launch_fp8_tiles(problem, scaling, operands, d, stream);
}

}  // namespace sgemm

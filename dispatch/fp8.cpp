#include "dispatch/fp8.hpp"

#include "29_fp8_tiles.hpp"
#include "common/fp8_padded_launch.cuh"
#include "common/padded_launch.cuh"

namespace sgemm {

// Stage 29's kernel in every scaling, in the tile its model predicts fastest for the shape
// (fp8_tile_cycles); N off 8 or K off 16 on zero-padded copies, the tile chosen for the padded
// shape. Stages 27 and 28 run its kernel in one tile; stage 26 does not promote.
KernelChoice choose_fp8_kernel(const GemmShape& shape, Fp8Scaling) {
    const bool as_is = takes_as_is(shape, kFp8TmaMultiples);
    return KernelChoice{29, !as_is, fp8_tile_for(padded_shape(shape, kFp8TmaMultiples), sm_count_here()).name};
}

void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream) {
    if (takes_as_is(problem.shape, kFp8TmaMultiples)) return launch_fp8_tiles(problem, scaling, operands, d, stream);
    launch_fp8_padded(problem, scaling, operands, d, stream, launch_fp8_tiles);
}

}  // namespace sgemm

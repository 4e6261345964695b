// Operands scaled by powers of two (stages 21 and 22, through stage 20's kernel for 21):
// row i of A by 2^row_exponents[i], column j of B by 2^column_exponents[j], so that C's
// element (i, j) comes out of the tensor cores 2^(row_exponents[i] + column_exponents[j])
// too large; the epilogue undoes it before C is written. Null pointers: no scaling.
#pragma once

#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"

namespace sgemm {

struct OperandScaling {
    const int* row_exponents = nullptr;
    const int* column_exponents = nullptr;
};

// Undoes the scaling on a warpgroup's accumulators (rows first_row .. + 64 kMBlocks,
// columns first_column .. + kBlockN); exact, as multiplying by a power of two is, unless
// the result is subnormal.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void unscale_accumulators(WarpgroupAccumulators<kMBlocks, kBlockN>& acc,
                                                     const OperandScaling& scaling, const GemmShape& shape,
                                                     int first_row, int first_column) {
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = first_row + 64 * i + wgmma_accumulator_position(threadIdx.x % 128, 0, half).row;
            const int row_exponent = row < shape.m ? scaling.row_exponents[row] : 0;
#pragma unroll
            for (int j = 0; j < kBlockN / 8; ++j) {
                // N is a multiple of 8
                const int column = first_column + wgmma_accumulator_position(threadIdx.x % 128, j, half).column;
                if (column >= shape.n) continue;
                const int exponents[2] = {scaling.column_exponents[column], scaling.column_exponents[column + 1]};
#pragma unroll
                for (int pair = 0; pair < 2; ++pair) {
                    float& value = acc[i][4 * j + 2 * half + pair];
                    value = ldexpf(value, -(row_exponent + exponents[pair]));
                }
            }
        }
}

}  // namespace sgemm

// Small launch helpers shared by every stage.
#pragma once

#include <cuda_runtime.h>

namespace sgemm {

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Block rasterization (stages 10 and 14): a 1D grid walks the tiles of C in groups of
// group_rows block-rows, column by column within a group, so that blocks running at the
// same time share strips of A and B in L2. Returns the first row and column of this
// block's tile.
struct TileOrigin {
    int row;
    int col;
};

template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileOrigin rasterized_tile_origin(int m, int n, int group_rows) {
    const int grid_m = ceil_div(m, kBlockM);
    const int grid_n = ceil_div(n, kBlockN);
    const int blocks_per_group = group_rows * grid_n;
    const int first_block_row = blockIdx.x / blocks_per_group * group_rows;
    const int rows_in_group = min(grid_m - first_block_row, group_rows);
    const int in_group = blockIdx.x % blocks_per_group;
    return TileOrigin{(first_block_row + in_group % rows_in_group) * kBlockM, in_group / rows_in_group * kBlockN};
}

}  // namespace sgemm

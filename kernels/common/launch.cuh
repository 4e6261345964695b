// Small launch helpers shared by every stage.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace sgemm {

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// SMs of the current GPU, for launchers that choose their tiles by how many blocks the
// GPU holds at once (0 if it cannot be asked).
inline int current_sm_count() {
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
        return 0;
    return sms;
}

// How many blocks of `kernel` the current GPU runs at once (0 if it cannot say). A kernel
// not yet allowed more than 48 KB of dynamic shared memory is allowed `shared_bytes` first:
// until then the occupancy calculator counts none of its blocks.
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, std::size_t shared_bytes) {
    if (shared_bytes > 48 * 1024)
        (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes));
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return per_sm * current_sm_count();
}

// Block rasterization (stages 10 and 14): a 1D grid walks the tiles of C in groups of
// group_rows block-rows, column by column within a group, so that blocks running at the
// same time share strips of A and B in L2. Returns the first row and column of tile
// number `tile` in that order.
struct TileOrigin {
    int row;
    int col;
};

template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileOrigin rasterized_tile_origin(int tile, int m, int n, int group_rows) {
    const int grid_m = ceil_div(m, kBlockM);
    const int grid_n = ceil_div(n, kBlockN);
    const int blocks_per_group = group_rows * grid_n;
    const int first_block_row = tile / blocks_per_group * group_rows;
    const int rows_in_group = min(grid_m - first_block_row, group_rows);
    const int in_group = tile % blocks_per_group;
    return TileOrigin{(first_block_row + in_group % rows_in_group) * kBlockM, in_group / rows_in_group * kBlockN};
}

// The tile of the block that runs this, one tile per block.
template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileOrigin rasterized_tile_origin(int m, int n, int group_rows) {
    return rasterized_tile_origin<kBlockM, kBlockN>(blockIdx.x, m, n, group_rows);
}

}  // namespace sgemm

// Stage 23's division of the work (read 23_split_in_registers.cu first): which problems
// it takes, and how its CTAs share them out.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// Stream-K over column blocks: the column blocks' K tiles in a row (a column block's K
// tiles, then the next block's), cut into equal runs; each run goes to row_blocks CTAs
// side by side in the grid, one for each block of kBlockRows rows of C, which read the
// same tiles of B at the same time (once from DRAM). A CTA's sums for each column block
// its run touches go to partial slot (column block + run) row_blocks + row block, a tile
// of C: the runs and the column blocks interleave, so no two pieces share a slot.
struct ColumnBlockRuns {
    static constexpr int kBlockRows = 64, kBlockColumns = 128;

    int k_tiles;      // of each column block
    int row_blocks;   // of kBlockRows in M
    long long units;  // column blocks x k_tiles
    int runs;

    // Run r takes the units from run_start(r) up to run_start(r + 1); the run that holds
    // unit u is the last that starts at or before it.
    __host__ __device__ long long run_start(int run) const { return units * run / runs; }
    __host__ __device__ int run_of(long long unit) const { return static_cast<int>(((unit + 1) * runs - 1) / units); }
    __host__ __device__ long long slot(int column_block, int run, int row_block) const {
        return (static_cast<long long>(column_block) + run) * row_blocks + row_block;
    }
};

// Where stage 23's kernel runs rather than stage 22's: A of at most 256 rows, or a C that
// leaves some of stage 22's clusters of two (on `sms` SMs) without a stack of 256 x 128 (its
// tiles) to take. Measured in the same process on the H100 (docs/notes): the kernel was
// ahead on every such shape tried (1024 x 1024 x 1024: 1.34x SGEMM against 1.00x), stage 22
// on every shape with a stack for each cluster (2048 x 2048 x 2048: 2.09x against 1.67x).
bool splits_in_registers(const GemmShape& shape, int sms);

}  // namespace sgemm

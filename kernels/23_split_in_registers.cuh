// Stage 23's division of the work (read 23_split_in_registers.cu first): which problems
// it takes, and how its CTAs share them out. Stage 24 shares them out the same way.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// Stream-K over split blocks: kSplitBlock lines (columns of B in stage 23, rows of A in
// stage 24) of the operand that is split in registers, a consumer's m64 block each. The
// split blocks' K tiles in a row (a block's K tiles, then the next block's) are cut into
// equal runs; each run goes to side_blocks CTAs side by side in the grid, one for each
// block of kSideBlock lines of the other operand (the wgmma's N), which read the same
// tiles of the split operand at the same time (once from DRAM). A CTA's sums for each split
// block its run touches go to partial slot (split block + run) side_blocks + side block, a
// tile of C: the runs and the split blocks interleave, so no two pieces share a slot.
struct SplitBlockRuns {
    static constexpr int kSplitBlock = 128, kSideBlock = 64;

    int k_tiles;      // of each split block
    int side_blocks;  // of kSideBlock in the other operand
    long long units;  // split blocks x k_tiles
    int runs;

    // Run r takes the units from run_start(r) up to run_start(r + 1); the run that holds
    // unit u is the last that starts at or before it.
    __host__ __device__ long long run_start(int run) const { return units * run / runs; }
    __host__ __device__ int run_of(long long unit) const { return static_cast<int>(((unit + 1) * runs - 1) / units); }
    __host__ __device__ long long slot(int split_block, int run, int side_block) const {
        return (static_cast<long long>(split_block) + run) * side_blocks + side_block;
    }
};

// Where stage 23's kernel runs rather than stage 22's: A of at most 256 rows, or a C that
// leaves some of stage 22's clusters of two (on `sms` SMs) without a stack of 256 x 128 (its
// tiles) to take. Measured in the same process on the H100 (docs/notes): the kernel was
// ahead on every such shape tried (1024 x 1024 x 1024: 1.34x SGEMM against 1.00x), stage 22
// on every shape with a stack for each cluster (2048 x 2048 x 2048: 2.09x against 1.67x).
bool splits_in_registers(const GemmShape& shape, int sms);

// Where stage 24's kernel runs rather than stage 23's launcher: a C at most 256 columns wide
// and at least 16 times taller than wide, so that A is much the larger operand, with K a
// multiple of 4 (TMA reads A's rows, which must start 16-byte aligned).
bool splits_a_in_registers(const GemmShape& shape);

}  // namespace sgemm

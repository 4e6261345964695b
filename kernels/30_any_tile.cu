// Stage 30 — any tile: one kernel composed of parts, in the tile that fills the GPU.
//
// Builds on stages 20 (20_hopper_tuned.cuh) and 25 (25_few_tokens.cu): read the kernel in
// 30_any_tile.cuh beside stage 20's.
//
// The idea: the tile that fills 132 SMs for a shape is rarely one of a handful. At 640
// tokens x 4096 x 4096, stage 20's 128 x 128 tiles make 160 tiles, 1.2 waves; cuBLAS runs
// 128 tokens by 160 weights, 128 tiles, one wave. Nsight Compute on 25 medium problems
// (results/h200/experiments/cublas_kernels/bf16.md) shows cuBLAS choosing from some 20 tile
// shapes, weights 64-256 by tokens 64-192 in steps of 8 or 16, each making close to one
// wave, split along K where the tiles are fewer than the SMs. Stage 20's tiles keep the
// tokens in wgmma's M (64 or 128 rows) and the weights in its N (64, 128 or 256); stage
// 25 swaps the operands so that the tokens are wgmma's N, any multiple of 8. This kernel
// is both, in any tile: its parts are types the kernel is composed from (30_any_tile.cuh):
//   - the orientation and the operands' tiles: TokensAsRows (stage 20's) or WeightsAsRows
//     (stage 25's: C^T = B^T A^T; B's slabs are wgmma's A, read transposed);
//   - the producer: TMA into a ring as deep as shared memory holds, the operand that a
//     cluster shares multicast (stage 18);
//   - the mainloop: one to three consumer warpgroups of one or two m64 blocks, wgmma of any
//     N that is a multiple of 16 (common/wgmma_widths.cuh); a type the kernel takes, with
//     what the producer loads beside each K tile for it (Bf16Mainloop here: nothing; FP8's
//     promotion and its scales in stage 31);
//   - the epilogue: C in FP32 or bf16, unswapped through shared memory and TMA stores
//     (stage 19's chunks), swapped from registers at C[column][row];
//   - the scheduler: stage 20's persistent, rasterized schedule, stream-K where the plan
//     asks for it; or, where the tiles are fewer than the SMs, stage 25's split of each
//     tile's K over a cluster of 2-8 CTAs, the sums added through distributed shared memory.
// The plan (30_any_tile.hpp: a tile, the grid, stream-K or the split) is not the kernel's:
// the chooser (dispatch/bf16_tiles.cpp) scores every compiled tile's plans by a model and
// gives one, once a launch; `./sgemm 30` runs the kernel in that plan, and the bf16 track
// weighs that plan beside stages 20 and 25.
//
// What changed since stages 20 and 25: one kernel for both orientations, its parts
// written once; any multiple of 16 along wgmma's N; up to three consumers; the plan from
// outside. Left out: stage 25's rows by hand (shapes off 16 bytes: zero-padded copies).
//
// Prediction: on the medium band (160-640 tokens), from stages 20 and 25's 50-90 % of
// cuBLAS's kernel time (the table above) to 90 % or more, as the tile count comes to one
// wave; on the squares, where stage 20's tiles already fill the GPU, stage 20's figure.
//
// Measured by make results on the H100 80GB HBM3: no result at N = 4096 or 8192 yet.
// On the H100 (docs/notes/30_any_tile.md), against cuBLAS in the same process: the squares
// as stage 20 (4096 99.1 %, 8192 104.3 %) but 5000 at 81.3 (stage 20: 86.4); where the
// bf16 track chose stage 20 on draw 14's first 58 problems, stage 30 ran 89.3 % against its
// 81.7 %; where it chose stage 25, 65.7 against 86.5 (few tokens, shapes off 16 bytes).
// The split in the cluster was the fastest plan on 42 of seed 12's 118 problems. The model,
// fitted on seed 12, chose plans 1.076x the fastest timed on seed 13.

// Shapes: K and N multiples of 8 (TMA's rows start 16-byte aligned); others on
// zero-padded copies, timed with the stage (common/padded_launch.cuh). sm_90a.
#include "30_any_tile.hpp"

#include <stdexcept>
#include <string>

#include "30_any_tile.cuh"

namespace sgemm {
namespace any_tile {

template <int Consumers, int MBlocks, int Tokens, int ClusterM = 1>
using Swapped = AnyTileConfig<WeightsAsRows, Consumers, MBlocks, Tokens, ClusterM>;
template <int Consumers, int MBlocks, int Weights, int ClusterM = 1>
using Unswapped = AnyTileConfig<TokensAsRows, Consumers, MBlocks, Weights, ClusterM>;

// Weights as rows: 64, 128, 192 or 256 of them (a consumer warpgroup each, or two of two
// m64 blocks for 256), by tokens in steps of 16 as far as the consumers' registers hold
// the sums (a thread holds blocks x tokens / 2 of them). Tokens as rows: stage 20's tiles,
// and 128 x 192, 192 x 128 and 256 x 128, whose counts make whole waves where stage 20's
// do not (3000 x 3000: 384 tiles of 128 x 192, 2.9 waves of 132).
using Compiled = TileList<Bf16Mainloop,
    Swapped<1, 1, 16>, Swapped<1, 1, 32>, Swapped<1, 1, 48>, Swapped<1, 1, 64>, Swapped<1, 1, 96>,
    Swapped<1, 1, 128>,
    Swapped<2, 1, 32>, Swapped<2, 1, 48>, Swapped<2, 1, 64>, Swapped<2, 1, 80>, Swapped<2, 1, 96>,
    Swapped<2, 1, 112>, Swapped<2, 1, 128>, Swapped<2, 1, 144>, Swapped<2, 1, 160>, Swapped<2, 1, 176>,
    Swapped<2, 1, 192>, Swapped<2, 1, 208>, Swapped<2, 1, 224>, Swapped<2, 1, 256>,
    Swapped<3, 1, 64>, Swapped<3, 1, 96>, Swapped<3, 1, 128>, Swapped<3, 1, 160>, Swapped<3, 1, 192>,
    Swapped<2, 2, 64>, Swapped<2, 2, 96>, Swapped<2, 2, 128>,
    Swapped<2, 1, 128, 2>, Swapped<2, 1, 192, 2>, Swapped<2, 1, 256, 2>, Swapped<2, 2, 128, 2>,
    Unswapped<2, 1, 64>, Unswapped<2, 1, 128>, Unswapped<2, 1, 128, 2>, Unswapped<2, 1, 256, 2>,
    Unswapped<2, 1, 192>, Unswapped<3, 1, 128>, Unswapped<2, 2, 128>>;

}  // namespace any_tile

const std::vector<AnyTile>& any_tiles() { return any_tile::Compiled::tiles(); }

const std::vector<ResidentByCluster>& any_tile_resident_ctas() { return any_tile::Compiled::resident_ctas_by_cluster(); }

namespace {

template <class COut>
void launch_on_plan(const AnyTilePlan& plan, const GemmProblem& problem, const __nv_bfloat16* a,
                    const __nv_bfloat16* b, COut* c, cudaStream_t stream) {
    const bool launched = any_tile::Compiled::visit(plan.tile, [&](auto tile) {
        any_tile::launch_config<typename decltype(tile)::type>(plan, problem, a, b, c, stream);
    });
    if (!launched) throw std::invalid_argument("stage 30: no compiled tile " + std::to_string(plan.tile));
}

}  // namespace

void launch_any_tile_plan(const AnyTilePlan& plan, const GemmProblem& problem, const __nv_bfloat16* a,
                          const __nv_bfloat16* b, float* c, cudaStream_t stream) {
    launch_on_plan(plan, problem, a, b, c, stream);
}

void launch_any_tile_plan_bf16_c(const AnyTilePlan& plan, const GemmProblem& problem, const __nv_bfloat16* a,
                                 const __nv_bfloat16* b, __nv_bfloat16* c, cudaStream_t stream) {
    launch_on_plan(plan, problem, a, b, c, stream);
}

}  // namespace sgemm

// Stage 31 — FP8 on stage 30's parts: the recipe's scales in any tile.
//
// Builds on stages 30 (30_any_tile.cu: the parts, the plans) and 29 (29_fp8_tiles.cu: FP8
// in a tile a model chooses): read 31_fp8_any_tile.cuh beside 30_any_tile.cuh.
//
// The idea: stage 29 runs FP8 in eight tiles of its own kernel, each tile dealt to the SMs in
// turns, one model of its own; stage 30 has the tiles that fill 132 SMs for a shape, in
// either orientation, with stream-K's tail and K split over a cluster, and a fitted model of
// them. FP8 differs from bf16 in three places only, and each is a part here:
//   - the operands: e4m3, both K-major (FP8's wgmma reads no other, so the problem's B is
//     N x K), a K block of 128 values is 128 bytes a row: the ring, its stages, the TMA
//     boxes and the wgmma descriptors are stage 30's (Fp8KMajorTile);
//   - the mainloop (Fp8Mainloop, the part stage 30's kernel takes): each K block's four k32
//     wgmmas sum from zero, and the block's sums are added into FP32 sums times their
//     scales, two blocks taking turns so that the next is on the tensor cores meanwhile
//     (stage 27's promotion; multiply_piece_promoted);
//   - the scales (PromotionScales): A's 1 x 128 and B's 128 x 128 (the recipe) or one a
//     tensor. The producer loads a K block's scales of the tile's tokens into the stage
//     beside A and B (stage 28's tensor map; the mainloop's StageLoads); B's blocks, one or
//     two a tile, are read from global memory.
// The producer, the scheduler (persistent, rasterized, stream-K's tail, the split in a
// cluster), the epilogues (D as stage 30's bf16 C) and the tensor maps' prefetch are stage
// 30's, taken as they are. So are the plans: dispatch/fp8_tiles.cpp asks stage 30's model
// for the shape counted in its K tiles (a K block of 128 e4m3 values moves the bytes and takes
// the tensor-core time of 64 bf16 values), among the tiles compiled here, with two terms of
// FP8's own (a consumer's path through a K block: its wgmmas, then promoting its share of the
// sums; a cost each tile an SM starts) and constants fitted on FP8 plans (seed 18's, on an
// H200: dispatch/fp8_tiles_fit.hpp).
//
// What changed since stage 30: e4m3 operand tiles and both orientations K-major, the
// promoted mainloop and its scales in the ring, D in bf16 with the FP8 problem's alpha and
// beta. Where the sums and two K blocks do not fit a consumer's registers (three tiles of
// values: 128 x 192, and three consumers of 192 x 128), one K block in flight: the consumer
// waits for its block, and the other consumers' wgmmas keep the tensor cores busy while it
// adds its block in (kBlocksInFlight, DeepGEMM's way). A's and B's 1 x 128 scales: both sides'
// scales in the stage (WithWeightScales). Left out: widths wgmma_fp8.cuh does not compile.
//
// Prediction: where stage 29's eight tiles fill the SMs (the large squares), its figure;
// at medium M (160-640 tokens) and a few tokens on wide N, above it by stage 30's margin
// over stage 20 there (it has the tile that makes one wave). Missed in stage 29's own tile:
// its first versions read the tokens' scales from global memory as each K block was issued,
// and took 1.4 times the time of the same loop with the scales left out (8192^3 on an H200,
// docs/notes/31_fp8_any_tile.md); in the stage, 0.1 behind stage 29 still; with each
// tile's scale addresses and K block's descriptors worked out once, 0.06. Beaten: three
// consumers of 64 rows hide the promotion better than two, and ran above stage 29's tiles.
//
// Measured by make results on the H100 80GB HBM3: no result at N = 4096 or 8192 yet.
// On DeepGEMM's shapes with the recipe's scales, against cuBLASLt in the same process (an
// H200, launch by launch; the notes): the three-consumer 192 x 128 tile at M = 4096 1.05-1.13
// of it where 192 rows make the waves (N = 2112, 24576, 32768), 8192^3 1.04; the best plan of
// each of the six shapes at M = 4096 1.04 in geomean (stage 29 0.98); 640 x 4096 x 7168 in
// 128 x 192 1.12 (stage 29 0.59). In A's and B's 1 x 128 scales 8192^3 0.96-0.98 (stage 29
// 0.90). The fp8 track runs it where its model predicts it faster.
//
// Shapes: K a multiple of 16 (TMA's rows of A and B; others refused), any N: off 8, in
// kernels of their own that store D from registers or out of shared memory by the threads
// (TMA's rows of D start 16-byte aligned). Every scaling, promoted. sm_90a.
#include "31_fp8_any_tile.hpp"

#include <stdexcept>
#include <string>

#include "31_fp8_any_tile.cuh"

namespace sgemm {
namespace fp8_any_tile {

template <class Config>
void launch_in(const AnyTilePlan& plan, const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
               __nv_bfloat16* d, cudaStream_t stream) {
    switch (scaling) {
        case Fp8Scaling::tensor:
            return launch_config<Config, Fp8Scaling::tensor>(plan, problem, operands, d, stream);
        case Fp8Scaling::rows_and_blocks:
            return launch_config<Config, Fp8Scaling::rows_and_blocks>(plan, problem, operands, d, stream);
        case Fp8Scaling::rows_and_rows:
            return launch_config<typename Config::WithWeightScales, Fp8Scaling::rows_and_rows>(plan, problem, operands,
                                                                                               d, stream);
    }
    throw std::invalid_argument("stage 31: no such scaling");
}

template <int Consumers, int MBlocks, int Tokens, int ClusterM = 1>
using Swapped = Fp8AnyTileConfig<Fp8WeightsAsRows, Consumers, MBlocks, Tokens, ClusterM>;
template <int Consumers, int MBlocks, int Weights, int ClusterM = 1>
using Unswapped = Fp8AnyTileConfig<Fp8TokensAsRows, Consumers, MBlocks, Weights, ClusterM>;

// Stage 30's tiles whose sums and two K blocks' fit a consumer's registers without spills
// in widths wgmma_fp8.cuh compiles: weights as rows by tokens 16-96, and two m64 blocks of
// 64 (128 tokens spill 56-76 bytes a thread with the recipe's scales: the 16 pairs of the
// tokens' scales a thread loads from L1 as it promotes); tokens as rows, 128 rows by 64 or
// 128 weights (stage 29's largest), and by 192 with one K block in flight a consumer.
using Compiled = any_tile::TileList<Fp8Mainloop<Fp8Scaling::rows_and_blocks>,
    Swapped<1, 1, 16>, Swapped<1, 1, 32>, Swapped<1, 1, 64>,
    Swapped<2, 1, 32>, Swapped<2, 1, 64>, Swapped<2, 1, 96>, Swapped<3, 1, 64>, Swapped<2, 2, 64>,
    Unswapped<2, 1, 64>, Unswapped<2, 1, 128>, Unswapped<2, 1, 128, 2>, Unswapped<2, 1, 192>, Unswapped<3, 1, 128>>;

}  // namespace fp8_any_tile

const std::vector<AnyTile>& fp8_any_tiles() { return fp8_any_tile::Compiled::tiles(); }

const std::vector<ResidentByCluster>& fp8_any_tile_resident_ctas() {
    return fp8_any_tile::Compiled::resident_ctas_by_cluster();
}

void launch_fp8_any_tile_plan(const AnyTilePlan& plan, const GemmProblem& problem, Fp8Scaling scaling,
                              const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream) {
    const bool launched = fp8_any_tile::Compiled::visit(plan.tile, [&](auto tile) {
        fp8_any_tile::launch_in<typename decltype(tile)::type>(plan, problem, scaling, operands, d, stream);
    });
    if (!launched) throw std::invalid_argument("stage 31: no compiled tile " + std::to_string(plan.tile));
}

}  // namespace sgemm

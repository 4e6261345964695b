// Stage 29 — FP8 tiles for 132 SMs.
//
// Builds on stage 28 (28_fp8_block_scaled.cu): the same kernel and promotion, every scaling,
// in a tile chosen for the shape (29_fp8_tiles.cuh adds the D stores narrow tiles need).
//
// The idea: stages 26-28 cut every problem into 128 x 128 tiles in clusters of two, dealt to
// the SMs in turns. That fits the squares, but DeepGEMM's layer shapes show what it leaves:
// at M = 64 or 128 and N = 2112, 17 tiles for 132 SMs, half of each tile's rows empty at M =
// 64; at M = 4096, N = 2112, 544 tiles make 4.1 rounds, the last one 12 % full. The kernel
// takes its tile as template parameters (26_fp8_tensor_scale.cuh's Fp8Config): 128 rows (a
// consumer each 64) or 64 (the consumers split the columns), 16 to 128 columns, clusters of
// one or two; this stage offers eight of them and lets a model choose. Where one D chunk
// buffer a consumer, not two, lets one more stage into 227 KB, a consumer has one.
//
// The model (fp8_tile_cycles, below): a tile's K block costs the longer of its wgmmas
// (block_m x block_n x 128 products at 4096 a cycle: the H100's FP8 rate an SM) and its
// bytes from L2 ((block_m + block_n / cluster) x 128 at 64 bytes a cycle an SM); a tile, its
// K blocks and a fixed 2000 cycles (filling the ring, storing D); a problem, as many rounds
// of tiles as the SMs take it in. Its choice is the fewest cycles. Where a part of a tile is
// narrower than 64 columns, D leaves straight from registers (RegisterDStores).
//
// Prediction: the squares as stage 28 (the model keeps 128 x 128 there); M = 64 and 128 near
// DRAM's rate for B (64 x 16 tiles: 132 of them at N = 2112).
//
// Measured by make results on the H100 80GB HBM3: 1094.8 TFLOPS at N = 4096 (97.3 % of
// cuBLASLt FP8), 1106.7 at 8192 (95.4 %).
// The squares in stage 28's tiles, a sixth stage in (8192: 81.4 -> 84.0 % in the first
// version). The few tokens passed cuBLASLt: on DeepGEMM's six (N, K), the recipe's scales,
// the fp8 track at M = 64 101.0-114.1 %, at M = 128 95.1-112.9 % launch by launch, by CUDA
// graphs 94.4-122.6 % at M = 128 (experiments/fp8_tiles/deepgemm_track*.csv). A 128 x 96 tile the model chose
// for M = 4096, N = 2112 ran at 67.4 % where 128 x 128 ran 82.5: not offered
// (docs/notes/29_fp8_tiles.md).
//
// Shapes: stage 26's. Every scaling, promoted (stage 27's TensorScales, stage 28's blocks).
// sm_90a. The fp8 track (dispatch/fp8.cpp) weighs this stage's tiles beside stage 31's plans.
#include "29_fp8_tiles.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <type_traits>

#include "29_fp8_tiles.cuh"

namespace sgemm {
namespace {

// The tiles the model chooses among.
constexpr Fp8Tile kTiles[] = {
    {128, 128, 2, "128x128 cluster 2"}, {128, 64, 2, "128x64 cluster 2"}, {128, 128, 1, "128x128"},
    {128, 64, 1, "128x64"},             {64, 128, 1, "64x128"},           {64, 64, 1, "64x64"},
    {64, 32, 1, "64x32"},               {64, 16, 1, "64x16"},
};

// The model's constants (per SM and cycle): FP8 products of wgmma, bytes from L2, and what a
// tile costs beside its K blocks.
constexpr double kProductsPerCycle = 4096, kL2BytesPerCycle = 64, kTileCycles = 2000;

// The bytes of scales a stage holds for each Scales (28_fp8_block_scaled.cuh).
template <class Scales, int kBlockM, int kBlockN>
constexpr int kStageScaleBytes = 0;
template <int kBlockM, int kBlockN>
constexpr int kStageScaleBytes<RowAndBlockScales, kBlockM, kBlockN> = kBlockM * 4;
template <int kBlockM, int kBlockN>
constexpr int kStageScaleBytes<RowAndRowScales, kBlockM, kBlockN> = (kBlockM + kBlockN) * 4;

// The stages 227 KB hold (at most eight) beside the D stores' buffers; a stage's scales take
// whole 128 bytes (Fp8Config).
template <class DStore>
constexpr int stages_that_fit(int stage_bytes, int scale_bytes) {
    const int fixed = 2 * std::max(DStore::kBufferBytes, 16) + 2048;
    return std::min(8, (227 * 1024 - fixed) / (stage_bytes + std::max((scale_bytes + 127) / 128 * 128, 16) + 16));
}

// The kernel's configuration for a tile and a Scales: stage 19's chunked D stores where a
// consumer's part is whole 64-column chunks, two buffers a consumer, or one where that lets
// a stage more in; as many stages as fit.
template <int kBlockM, int kBlockN, int kClusterM, class Scales>
struct TileConfig {
    static constexpr int kColumns = kBlockM == 64 ? kBlockN / 2 : kBlockN;
    static constexpr int kScaleBytes = kStageScaleBytes<Scales, kBlockM, kBlockN>;
    static constexpr int kStageBytes = (kBlockM + kBlockN) * kFp8ScaleBlock;
    static constexpr bool kOneBufferFitsMore = stages_that_fit<ChunkedDStores<1>>(kStageBytes, kScaleBytes) >
                                               stages_that_fit<ChunkedDStores<2>>(kStageBytes, kScaleBytes);
    using Chunked = std::conditional_t<kOneBufferFitsMore, ChunkedDStores<1>, ChunkedDStores<2>>;
    using DStore = std::conditional_t<Chunked::template kTakes<kColumns>, Chunked, RegisterDStores>;
    static constexpr int kStages = stages_that_fit<DStore>(kStageBytes, kScaleBytes);
    using Config = Fp8Config<kBlockN, kStages, kClusterM, kScaleBytes, kBlockM, DStore>;
};

template <int kBlockM, int kBlockN, int kClusterM, class Scales>
void launch_tile(const GemmProblem& problem, const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream) {
    using Config = typename TileConfig<kBlockM, kBlockN, kClusterM, Scales>::Config;
    launch_fp8_kernel<Config, PromotedAccumulation<Scales>>(problem, operands, d, 8, stream);
}

template <class Scales>
void launch_in(const Fp8Tile& tile, const GemmProblem& problem, const Fp8Operands& operands, __nv_bfloat16* d,
               cudaStream_t stream) {
    const int index = static_cast<int>(&tile - kTiles);
    switch (index) {
        case 0: return launch_tile<128, 128, 2, Scales>(problem, operands, d, stream);
        case 1: return launch_tile<128, 64, 2, Scales>(problem, operands, d, stream);
        case 2: return launch_tile<128, 128, 1, Scales>(problem, operands, d, stream);
        case 3: return launch_tile<128, 64, 1, Scales>(problem, operands, d, stream);
        case 4: return launch_tile<64, 128, 1, Scales>(problem, operands, d, stream);
        case 5: return launch_tile<64, 64, 1, Scales>(problem, operands, d, stream);
        case 6: return launch_tile<64, 32, 1, Scales>(problem, operands, d, stream);
        case 7: return launch_tile<64, 16, 1, Scales>(problem, operands, d, stream);
    }
    throw std::logic_error("stage 29 was given a tile not of its own");
}

}  // namespace

double fp8_tile_cycles(const GemmShape& shape, const Fp8Tile& tile, int sms) {
    const double k_blocks = std::ceil(shape.k / double(kFp8ScaleBlock));
    const double mma = double(tile.block_m) * tile.block_n * kFp8ScaleBlock / kProductsPerCycle;
    const double bytes = (tile.block_m + double(tile.block_n) / tile.cluster_m) * kFp8ScaleBlock / kL2BytesPerCycle;
    const double stacks = std::ceil(shape.m / double(tile.block_m * tile.cluster_m)) * std::ceil(shape.n / double(tile.block_n));
    const double rounds = std::ceil(stacks / (sms / tile.cluster_m));
    return rounds * (k_blocks * std::max(mma, bytes) + kTileCycles);
}

const Fp8Tile& fp8_tile_for(const GemmShape& shape, int sms) {
    // The first of the fewest cycles: ties go to the larger tiles, listed first.
    return *std::min_element(std::begin(kTiles), std::end(kTiles), [&](const Fp8Tile& a, const Fp8Tile& b) {
        return fp8_tile_cycles(shape, a, sms) < fp8_tile_cycles(shape, b, sms);
    });
}

Fp8TileList fp8_tiles() { return Fp8TileList{kTiles, static_cast<int>(std::size(kTiles))}; }

void launch_fp8_tile(const Fp8Tile& tile, const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                     __nv_bfloat16* d, cudaStream_t stream) {
    switch (scaling) {
        case Fp8Scaling::tensor:
            return launch_in<TensorScales>(tile, problem, operands, d, stream);
        case Fp8Scaling::rows_and_blocks:
            return launch_in<RowAndBlockScales>(tile, problem, operands, d, stream);
        case Fp8Scaling::rows_and_rows:
            return launch_in<RowAndRowScales>(tile, problem, operands, d, stream);
    }
}

void launch_fp8_tiles(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream) {
    launch_fp8_tile(fp8_tile_for(problem.shape, current_sm_count()), problem, scaling, operands, d, stream);
}

}  // namespace sgemm

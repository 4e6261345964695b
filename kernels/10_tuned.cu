// Stage 10 — tuned for the GPU, and any shape.
//
// The idea: stage 9's kernel has the right structure; what is left is choosing its
// numbers for this GPU and making it safe for every shape.
//
// Tuning. The kernel (10_tuned.cuh) is stage 9's as a template over its tile shapes (block,
// K step, warp and thread tiles, blocks an SM for __launch_bounds__). scripts/tune.py times
// candidates (src/tools/tuning_candidates.cu) against cuBLAS and writes all it tried to
// results/<gpu>/tuning_stage10.*; the winner (TunedConfig) is what the launcher runs.
//
// Block rasterization. Consecutive blocks walk down a group of block-rows before moving to
// the next column, so that blocks running at once share strips of A and B in L2 instead of
// streaming all of B through it once per block-row. The group height is tuned too.
//
// Any shape. A shape that is not a multiple of the tile runs the same kernel compiled
// with tests at the edges (EdgeTests in 10_tuned.cuh). Where K and N are multiples of 4, a
// float4 lies all inside the matrix or all outside: loads and stores stay float4s, each
// tested once (3000^3: 79 -> 93 % of cuBLAS); with K whole tiles and blocks inside C, those
// on the edges read rows and columns past C as their first and test only stores: one loop a
// launch (two stalled warps fetching instructions: 2x the time at 65 x 16896 x 2560 on an
// H200). Where K is not, A's values are loaded alone; where N is not, B's, and C is stored a
// row at a time (5238 x 1010 x 20: 34 -> 85 %).
//
// Hiding the barrier. In stage 9 every tile ends with all warps draining at a barrier
// and then waiting on the next tile's first shared-memory loads. Here the fragments are
// double-buffered in registers (step i + 1's slices load while step i's FMAs run) and
// the barrier is moved before the *last* step's FMAs, so those independent FMAs cover
// the wait and the next tile's first loads. B now reaches shared memory by cp.async
// (kernels/common/cp_async.cuh), Stages - 1 tiles ahead, which also frees the
// registers the fragment buffers need; A stays on 128-bit loads through registers.
//
// Few tiles. Where the tiles of C would leave SMs idle (a 1024x1024 C is 64 tiles for 264
// block slots) or fill a last wave by half, K is split: k_parts (10_tuned.cuh) picks the
// number of parts that finishes soonest, counting whole waves and a cost per part; each
// part writes its sums to a workspace and a second kernel, launched while the parts run
// (common/dependent_launch.cuh), adds them up in part order and applies alpha and beta.
//
// Few rows. A 128-row tile on a C of 2 rows computes 64 times the FLOPs asked for. Where M
// is at most 16, 32 or 64, blocks of that many rows by 256 columns run instead (64 rows only
// where that makes 16 blocks or more), bound, as SGEMM is, by reading B once. The fp32 track adds
// blocks for a narrow or small C; it keeps this plan unless sure of a faster, of sums <= 1.56x as long.
// Sums in parts: rounding errors grow with a sum's chain, and on few rows cuBLAS splits K
// finely (16 x 4096 x 4096: 1.9x less error). The 16-row blocks restart every 128 products,
// adding into totals in spare registers; at 255 registers that cost the rest 4-8 % (notes).
//
// What changed since stage 9: the tile is a parameter, the tuner's pick; the barrier's place,
// fragment buffers, cp.async for B; block order; edges; the split of K; few rows; sums in parts.
//
// Prediction: 5–10 % over stage 9, to 90–100 % of cuBLAS.
//
// Measured by make results on the H100 80GB HBM3: 47.5 TFLOPS at N = 4096 (91.9 % of cuBLAS SGEMM),
// 47.8 at 8192 (92.6 %).
// 1.04x stage 9, within the prediction. The winner, 128x128x8 blocks of four
// 64x64 warps whose threads own 8x16 outputs, 3 stages: a thread's six 128-bit shared
// loads now feed 128 FMAs per step, where stage 9's four fed 64. Splitting K took
// 1024^3 from 54 % to 98 % of cuBLAS and the shape suite's M, N >= 1024 from 86.5 to
// 93.3 % in geomean; blocks of few rows, M <= 64 from 47 to 79 %; 75.7 % on seed 5's draw.
//
// Shapes: any M, N, K >= 1. The fp32 track runs this kernel on every shape, and the fp32-tc
// track where splitting FP32 for the tensor cores does not pay (dispatch/).
#include "10_tuned.cuh"

#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>

namespace sgemm {

// Fewer 64-row blocks than this ran slower than the tuned blocks with K split among them
// (49 x 3833 x 1791, 15 blocks: 0.87x; 54 x 45 x 492, one: 0.34x); 20 or more ran faster.
constexpr int kMinRows64Blocks = 16;

namespace {

// The names of Stage10TileConfigs' tiles (10_tuned.cuh), in its order, and the places of the
// few-row ones.
constexpr std::string_view kTileNames[] = {"128x128", "64x256", "32x256", "16x256", "128x64", "128x32", "64x64"};
constexpr int kRows64TileId = 1, kRows32TileId = 2, kRows16TileId = 3;
static_assert(std::size(kTileNames) == std::tuple_size_v<Stage10TileConfigs>, "a name for each tile");
static_assert(std::is_same_v<std::tuple_element_t<kTunedTileId, Stage10TileConfigs>, TunedConfig> &&
                  std::is_same_v<std::tuple_element_t<kRows64TileId, Stage10TileConfigs>, Rows64Config> &&
                  std::is_same_v<std::tuple_element_t<kRows32TileId, Stage10TileConfigs>, Rows32Config> &&
                  std::is_same_v<std::tuple_element_t<kRows16TileId, Stage10TileConfigs>, Rows16Config>,
              "the few-row tiles' places");
using TileIds = std::make_index_sequence<std::tuple_size_v<Stage10TileConfigs>>;

template <class Config>
Stage10Tile tile_of(int id) {
    return Stage10Tile{id, Config::kBlockM, Config::kBlockN, Config::kBlockK, Config::kMinBlocksPerSm, kTileNames[id]};
}

template <std::size_t... kIds>
std::vector<Stage10Tile> tiles_of(std::index_sequence<kIds...>) {
    return {tile_of<std::tuple_element_t<kIds, Stage10TileConfigs>>(static_cast<int>(kIds))...};
}

}  // namespace

const std::vector<Stage10Tile>& stage10_tiles() {
    static const std::vector<Stage10Tile> tiles = tiles_of(TileIds{});
    return tiles;
}

int stage10_tile_slots(const Stage10Tile& tile) {
    int slots = 0;
    with_stage10_tile(tile.id, [&](auto config) { slots = tile_config_slots<decltype(config)>(); });
    return slots;
}

Stage10Choice tuned_choice(const GemmShape& shape, const Stage10Slots& slots) {
    const auto tile = [&] {
        if (shape.m <= Rows16Config::kBlockM) return kRows16TileId;
        if (shape.m <= Rows32Config::kBlockM) return kRows32TileId;
        if (shape.m <= Rows64Config::kBlockM && ceil_div(shape.n, Rows64Config::kBlockN) >= kMinRows64Blocks)
            return kRows64TileId;
        return kTunedTileId;
    }();
    const Stage10Tile& chosen = stage10_tiles()[tile];
    const int tiles = ceil_div(shape.m, chosen.block_m) * ceil_div(shape.n, chosen.block_n);
    return Stage10Choice{chosen, k_parts(tiles, ceil_div(shape.k, chosen.block_k), slots(chosen))};
}

void launch_tuned(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const Stage10Choice choice = tuned_choice(problem.shape, stage10_tile_slots);
    launch_tuned_tile(choice.tile, choice.parts, problem, a, b, c, stream);
}

void launch_tuned_tile(const Stage10Tile& tile, int parts, const GemmProblem& problem, const float* a, const float* b,
                       float* c, cudaStream_t stream) {
    with_stage10_tile(tile.id, [&](auto config) {
        launch_tile_config_in_parts<decltype(config)>(problem, a, b, c, kTunedGroupRows, stream, parts);
    });
}

}  // namespace sgemm

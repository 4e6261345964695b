// Adding a stage: write kernels/<NN>_<name>.cu with its launcher, declare the launcher in
// kernels/<NN>_<name>.hpp, include that below, and add one line to the table. A test checks
// that the table and the files in kernels/ agree. The tracks are the dispatch layer's
// (dispatch/).
#include "driver/stage_registry.hpp"

#include <algorithm>

#include "01_naive.hpp"
#include "02_global_coalescing.hpp"
#include "03_shared_memory_tiling.hpp"
#include "04_1d_blocktiling.hpp"
#include "05_2d_blocktiling.hpp"
#include "06_vectorized.hpp"
#include "07_bank_conflict_free.hpp"
#include "08_warptiling.hpp"
#include "09_double_buffering.hpp"
#include "10_tuned.hpp"
#include "11_wmma_naive.hpp"
#include "12_wmma_tiled.hpp"
#include "13_mma_ldmatrix.hpp"
#include "14_multistage.hpp"
#include "15_tma_wgmma.hpp"
#include "16_two_warpgroups.hpp"
#include "17_warp_specialized.hpp"
#include "18_clusters.hpp"
#include "19_persistent.hpp"
#include "20_hopper_tuned.hpp"
#include "21_split_bf16.hpp"
#include "22_split_fp16.hpp"
#include "23_split_in_registers.hpp"
#include "24_a_in_registers.hpp"
#include "25_few_tokens.hpp"
#include "26_fp8_tensor_scale.hpp"
#include "27_fp8_promoted.hpp"
#include "28_fp8_block_scaled.hpp"
#include "29_fp8_tiles.hpp"
#include "dispatch/bf16.hpp"
#include "dispatch/fp32.hpp"
#include "dispatch/fp32_tc.hpp"
#include "dispatch/fp8.hpp"

namespace sgemm {

namespace {

constexpr ShapeRule kAnyShape{};
// TMA reads rows that start 16-byte aligned: bf16 rows of K (A) and N (B) values; the
// FP32 stages' kernels take any K, and N a multiple of 8 (their parts' rows and C's), and
// stage 24's reads A's FP32 rows of K values. Other shapes run on padded copies of the
// operands (kernels/common/padded_launch.cuh).
constexpr ShapeRule kTmaRows{1, 8, 8, true};
constexpr ShapeRule kFp32TmaRows{1, 8, 1, true};
constexpr ShapeRule kFp32TmaRowsOfA{1, 8, 4, true};
// The FP8 stages' rows of K (A and B) and of N (D) start 16-byte aligned as they are;
// cuBLASLt asks the same of 8-bit operands, and other shapes are refused.
constexpr ShapeRule kFp8Rows{1, 8, 16, false};
constexpr bool kSm90a = true;

// The tracks' choices on the GPU at hand.
KernelChoice fp32_here(const GemmShape& shape) { return choose_fp32_kernel(shape, sm_count_here()); }
KernelChoice bf16_here(const GemmShape& shape) { return choose_bf16_kernel(shape, bf16_gpu_here()); }
KernelChoice fp32_tc_here(const GemmShape& shape) { return choose_fp32_tc_kernel(shape, sm_count_here()); }
// The FP8 track's choice for its default scaling (an FP8 run asks choose_fp8_kernel with its own).
KernelChoice fp8_here(const GemmShape& shape) { return choose_fp8_kernel(shape, Fp8Scaling::rows_and_blocks); }

// clang-format off
constexpr Stage kStages[] = {
    {0, "cublas",               Precision::fp32, 0, kAnyShape,     "cuBLAS SGEMM: the reference every stage is timed against", nullptr},
    {1, "naive",                Precision::fp32, 0, kAnyShape,     "one thread per output, warps walk down columns (uncoalesced)", launch_naive},
    {2, "global_coalescing",    Precision::fp32, 0, kAnyShape,     "threads of a warp take consecutive columns: coalesced loads", launch_global_coalescing},
    {3, "shared_memory_tiling", Precision::fp32, 0, kAnyShape,     "32x32 tiles of A and B staged in shared memory", launch_shared_memory_tiling},
    {4, "1d_blocktiling",       Precision::fp32, 0, {64, 64, 8},   "each thread computes 8 outputs of a column from registers", launch_1d_blocktiling},
    {5, "2d_blocktiling",       Precision::fp32, 0, {128, 128, 8}, "each thread computes an 8x8 tile: outer products in registers", launch_2d_blocktiling},
    {6, "vectorized",           Precision::fp32, 0, {128, 128, 8}, "128-bit loads and stores; A transposed in shared memory", launch_vectorized},
    {7, "bank_conflict_free",   Precision::fp32, 0, {128, 128, 8}, "thread tile split into quads 64 apart, padded A tile: no bank conflicts", launch_bank_conflict_free},
    {8, "warptiling",           Precision::fp32, 0, {128, 128, 8}, "block tile -> 32x64 warp tiles -> 8x8 thread tiles", launch_warptiling},
    {9, "double_buffering",     Precision::fp32, 0, {128, 128, 8}, "next tile's global loads overlap this tile's math; two shared buffers", launch_double_buffering},
    {10, "tuned",               Precision::fp32, 80, kAnyShape,     "tile shapes chosen by the tuner, rasterized block order, any shape", launch_tuned},
    {11, "wmma_naive",          Precision::bf16, 80, kAnyShape,    "tensor cores via wmma: one warp per 16x16 tile, straight from global", nullptr, launch_wmma_naive},
    {12, "wmma_tiled",          Precision::bf16, 80, {128, 128, 32}, "wmma with shared-memory block tiles and 4x2 fragments per warp", nullptr, launch_wmma_tiled},
    {13, "mma_ldmatrix",        Precision::bf16, 80, {128, 128, 32}, "mma.sync m16n8k16 fed by ldmatrix from XOR-swizzled shared memory", nullptr, launch_mma_ldmatrix},
    {14, "multistage",          Precision::bf16, 80, kAnyShape,    "cp.async pipeline several tiles deep, rasterized, float2 epilogue, any shape", nullptr, launch_multistage},
    {15, "tma_wgmma",           Precision::bf16, 90, kTmaRows,     "TMA copies into an mbarrier ring, wgmma from shared memory, one warpgroup", nullptr, launch_tma_wgmma, kSm90a},
    {16, "two_warpgroups",      Precision::bf16, 90, kTmaRows,     "two warpgroups, 128x256 tiles, m64n256k16: more math per byte", nullptr, launch_two_warpgroups, kSm90a},
    {17, "warp_specialized",    Precision::bf16, 90, kTmaRows,     "a producer warpgroup, two consumers, full/empty barriers, setmaxnreg", nullptr, launch_warp_specialized, kSm90a},
    {18, "clusters",            Precision::bf16, 90, kTmaRows,     "clusters of two CTAs share B's tile through TMA multicast", nullptr, launch_clusters, kSm90a},
    {19, "persistent",          Precision::bf16, 90, kTmaRows,     "one CTA per SM loops over the tiles; loads run ahead through epilogues", nullptr, launch_persistent, kSm90a, launch_persistent_bf16_c},
    {20, "hopper_tuned",        Precision::bf16, 90, kTmaRows,     "tiles chosen by shape, pipeline depth, cluster and raster order by the tuner; stream-K", nullptr, launch_hopper_tuned, kSm90a, launch_hopper_tuned_bf16_c},
    {21, "split_bf16",          Precision::fp32, 90, kFp32TmaRows, "FP32 on tensor cores: A and B split into three bf16 parts, six products", launch_split_bf16, nullptr, kSm90a},
    {22, "split_fp16",          Precision::fp32, 90, kFp32TmaRows, "FP32 on tensor cores: rows and columns scaled, two fp16 parts, sums in registers", launch_split_fp16, nullptr, kSm90a},
    {23, "split_in_registers",  Precision::fp32, 90, kFp32TmaRows, "FP32 on tensor cores: B read once as FP32 and split in registers", launch_split_in_registers, nullptr, kSm90a},
    {24, "a_in_registers",      Precision::fp32, 90, kFp32TmaRowsOfA, "FP32 on tensor cores: A read once as FP32 and split in registers", launch_a_in_registers, nullptr, kSm90a},
    {25, "few_tokens",          Precision::bf16, 90, kAnyShape,    "few tokens: A and B swapped so the tokens are wgmma's N, K split over a cluster; rows off 16 bytes loaded by hand", nullptr, launch_few_tokens, kSm90a, launch_few_tokens_bf16_c},
    {26, "fp8_tensor_scale",    Precision::fp8, 90, kFp8Rows,      "FP8: e4m3 on wgmma k32, one scale a tensor, sums kept in the MMA over all of K", nullptr, nullptr, kSm90a, nullptr, nullptr, launch_fp8_tensor_scale, Fp8Accumulation::in_mma, kTensorScale},
    {27, "fp8_promoted",        Precision::fp8, 90, kFp8Rows,      "FP8: each 128 of K summed by the MMA from zero, then added into FP32 registers", nullptr, nullptr, kSm90a, nullptr, nullptr, launch_fp8_promoted, Fp8Accumulation::promoted, kTensorScale},
    {28, "fp8_block_scaled",    Precision::fp8, 90, kFp8Rows,      "FP8, DeepSeek-V3's recipe: A's 1x128 and B's 128x128 (or 1x128) scales applied as the sums are promoted", nullptr, nullptr, kSm90a, nullptr, nullptr, launch_fp8_block_scaled, Fp8Accumulation::promoted, kBlockScales},
    {29, "fp8_tiles",           Precision::fp8, 90, kFp8Rows,      "FP8, every scaling, promoted, in the tile a model chooses for 132 SMs: 64 or 128 rows, 16-128 columns, clusters of 1 or 2", nullptr, nullptr, kSm90a, nullptr, nullptr, launch_fp8_tiles, Fp8Accumulation::promoted, kTensorScale | kBlockScales},
};

constexpr Stage kTracks[] = {
    {kTrackNumber, "fp32",    Precision::fp32, 80, kAnyShape, "FP32 on CUDA cores: stage 10's kernel, its tile and split of K by a model", launch_fp32_track, nullptr, false, nullptr, fp32_here},
    {kTrackNumber, "bf16",    Precision::bf16, 80, kAnyShape, "bf16 in, FP32 sums: the kernel a cost model predicts fastest of stages 20's (padded off the multiples of 8), 25's and 14's", nullptr, launch_bf16_track, false, launch_bf16_track_bf16_c, bf16_here},
    {kTrackNumber, "fp32-tc", Precision::fp32, 90, kAnyShape, "FP32 on tensor cores, SGEMM's accuracy: stage 24's, 23's or 22's kernels, or stage 10's where the split does not pay", launch_fp32_tc_track, nullptr, kSm90a, nullptr, fp32_tc_here},
    {kTrackNumber, "fp8",     Precision::fp8, 90, kFp8Rows, "FP8 with FP32 promotion, any of cuBLASLt's Hopper scalings: stage 29's kernel in the tile its model chooses", nullptr, nullptr, kSm90a, nullptr, fp8_here, launch_fp8_track, Fp8Accumulation::promoted, kTensorScale | kBlockScales},
};
// clang-format on

}  // namespace

std::span<const Stage> all_stages() { return kStages; }

std::span<const Stage> all_tracks() { return kTracks; }

const Stage* find_track(std::string_view name) {
    const auto tracks = all_tracks();
    const auto it = std::find_if(tracks.begin(), tracks.end(), [name](const Stage& track) { return track.name == name; });
    return it == tracks.end() ? nullptr : &*it;
}

const Stage* find_stage(int number) {
    const auto stages = all_stages();
    const auto it = std::find_if(stages.begin(), stages.end(),
                                 [number](const Stage& stage) { return stage.number == number; });
    return it == stages.end() ? nullptr : &*it;
}

}  // namespace sgemm

// The registry: stage 0 (cuBLAS), the numbered stages in reading order, and the tracks. Each
// row is made by the factory of its kind (driver/stage.hpp), which takes the launchers that
// kind runs.
//
// Adding a stage: write kernels/<NN>_<name>.cu with its launcher, declare the launcher in
// kernels/<NN>_<name>.hpp, include that below, and add a row to kStages by the stage's
// precision: fp32_stage; bf16_stage, given a second launcher where the stage also writes
// bf16 C; or fp8_stage, given where its sums go and the scalings it takes. A test checks that
// kStages and the files in kernels/ agree.
//
// Adding a track: write its launcher and its choice of kernel in dispatch/ (and list the file
// in CMakeLists.txt), include its header below, write the function that asks the choice for
// the GPU at hand beside fp32_here, and add a row to kTracks: fp32_track, bf16_track or
// fp8_track, as the stages of its precision.
//
// cuBLAS is stage 0 alone (cublas_reference): the driver calls it itself.
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
#include "30_any_tile.hpp"
#include "31_fp8_any_tile.hpp"
#include "32_one_launch.hpp"
#include "dispatch/bf16.hpp"
#include "dispatch/bf16_tiles.hpp"
#include "dispatch/fp32.hpp"
#include "dispatch/fp32_tc.hpp"
#include "dispatch/fp8.hpp"
#include "dispatch/fp8_tiles.hpp"

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
// cuBLASLt asks the same of 8-bit operands' K, and the stages refuse other shapes. The fp8
// track takes them on zero-padded copies (kernels/common/padded_launch.cuh).
constexpr ShapeRule kFp8Rows{1, 8, 16, false};
// Stage 31 stores D at any N (off 8, not through TMA: 30_any_tile.cuh's kCAtAnyN).
constexpr ShapeRule kFp8RowsOfK{1, 1, 16, false};
constexpr ShapeRule kFp8RowsPadded{1, 8, 16, true};

// The tracks' choices on the GPU at hand.
KernelChoice fp32_here(const GemmShape& shape) {
    return choose_fp32_kernel(shape, sm_count_here(), stage10_tile_slots);
}
KernelChoice bf16_here(const GemmShape& shape) { return choose_bf16_kernel(shape, bf16_gpu_here()); }
KernelChoice fp32_tc_here(const GemmShape& shape) { return choose_fp32_tc_kernel(shape, sm_count_here()); }
// The FP8 track's choice for its default scaling (an FP8 run asks choose_fp8_kernel with its own).
KernelChoice fp8_here(const GemmShape& shape) { return choose_fp8_kernel(shape, Fp8Scaling::rows_and_blocks); }

// A row: number and name (a track's name alone), what it needs of the GPU, the shapes it
// takes, its launchers (then, for FP8, where its sums go and the scalings it takes; for a
// track, its choice of kernel), and its summary.
// clang-format off
constexpr Stage kStages[] = {
    cublas_reference("cuBLAS SGEMM: the reference every stage is timed against"),
    fp32_stage(1,  "naive",                kAnyGpu, kAnyShape,       launch_naive,
               "one thread per output, warps walk down columns (uncoalesced)"),
    fp32_stage(2,  "global_coalescing",    kAnyGpu, kAnyShape,       launch_global_coalescing,
               "threads of a warp take consecutive columns: coalesced loads"),
    fp32_stage(3,  "shared_memory_tiling", kAnyGpu, kAnyShape,       launch_shared_memory_tiling,
               "32x32 tiles of A and B staged in shared memory"),
    fp32_stage(4,  "1d_blocktiling",       kAnyGpu, {64, 64, 8},     launch_1d_blocktiling,
               "each thread computes 8 outputs of a column from registers"),
    fp32_stage(5,  "2d_blocktiling",       kAnyGpu, {128, 128, 8},   launch_2d_blocktiling,
               "each thread computes an 8x8 tile: outer products in registers"),
    fp32_stage(6,  "vectorized",           kAnyGpu, {128, 128, 8},   launch_vectorized,
               "128-bit loads and stores; A transposed in shared memory"),
    fp32_stage(7,  "bank_conflict_free",   kAnyGpu, {128, 128, 8},   launch_bank_conflict_free,
               "thread tile split into quads 64 apart, padded A tile: no bank conflicts"),
    fp32_stage(8,  "warptiling",           kAnyGpu, {128, 128, 8},   launch_warptiling,
               "block tile -> 32x64 warp tiles -> 8x8 thread tiles"),
    fp32_stage(9,  "double_buffering",     kAnyGpu, {128, 128, 8},   launch_double_buffering,
               "next tile's global loads overlap this tile's math; two shared buffers"),
    fp32_stage(10, "tuned",                kSm80,   kAnyShape,       launch_tuned,
               "tile shapes chosen by the tuner, rasterized block order, any shape"),
    bf16_stage(11, "wmma_naive",           kSm80,   kAnyShape,       launch_wmma_naive,
               "tensor cores via wmma: one warp per 16x16 tile, straight from global"),
    bf16_stage(12, "wmma_tiled",           kSm80,   {128, 128, 32},  launch_wmma_tiled,
               "wmma with shared-memory block tiles and 4x2 fragments per warp"),
    bf16_stage(13, "mma_ldmatrix",         kSm80,   {128, 128, 32},  launch_mma_ldmatrix,
               "mma.sync m16n8k16 fed by ldmatrix from XOR-swizzled shared memory"),
    bf16_stage(14, "multistage",           kSm80,   kAnyShape,       launch_multistage,
               "cp.async pipeline several tiles deep, rasterized, float2 epilogue, any shape"),
    bf16_stage(15, "tma_wgmma",            kSm90a,  kTmaRows,        launch_tma_wgmma,
               "TMA copies into an mbarrier ring, wgmma from shared memory, one warpgroup"),
    bf16_stage(16, "two_warpgroups",       kSm90a,  kTmaRows,        launch_two_warpgroups,
               "two warpgroups, 128x256 tiles, m64n256k16: more math per byte"),
    bf16_stage(17, "warp_specialized",     kSm90a,  kTmaRows,        launch_warp_specialized,
               "a producer warpgroup, two consumers, full/empty barriers, setmaxnreg"),
    bf16_stage(18, "clusters",             kSm90a,  kTmaRows,        launch_clusters,
               "clusters of two CTAs share B's tile through TMA multicast"),
    bf16_stage(19, "persistent",           kSm90a,  kTmaRows,        launch_persistent, launch_persistent_bf16_c,
               "one CTA per SM loops over the tiles; loads run ahead through epilogues"),
    bf16_stage(20, "hopper_tuned",         kSm90a,  kTmaRows,        launch_hopper_tuned, launch_hopper_tuned_bf16_c,
               "tiles chosen by shape, pipeline depth, cluster and raster order by the tuner; stream-K"),
    fp32_stage(21, "split_bf16",           kSm90a,  kFp32TmaRows,    launch_split_bf16,
               "FP32 on tensor cores: A and B split into three bf16 parts, six products"),
    fp32_stage(22, "split_fp16",           kSm90a,  kFp32TmaRows,    launch_split_fp16,
               "FP32 on tensor cores: rows and columns scaled, two fp16 parts, sums in registers"),
    fp32_stage(23, "split_in_registers",   kSm90a,  kFp32TmaRows,    launch_split_in_registers,
               "FP32 on tensor cores: B read once as FP32 and split in registers"),
    fp32_stage(24, "a_in_registers",       kSm90a,  kFp32TmaRowsOfA, launch_a_in_registers,
               "FP32 on tensor cores: A read once as FP32 and split in registers"),
    bf16_stage(25, "few_tokens",           kSm90a,  kAnyShape,       launch_few_tokens, launch_few_tokens_bf16_c,
               "few tokens: A and B swapped so the tokens are wgmma's N, K split over a cluster; "
               "rows off 16 bytes loaded by hand"),
    fp8_stage(26,  "fp8_tensor_scale",     kSm90a,  kFp8Rows,        launch_fp8_tensor_scale,
              Fp8Accumulation::in_mma, kTensorScale,
              "FP8: e4m3 on wgmma k32, one scale a tensor, sums kept in the MMA over all of K"),
    fp8_stage(27,  "fp8_promoted",         kSm90a,  kFp8Rows,        launch_fp8_promoted,
              Fp8Accumulation::promoted, kTensorScale,
              "FP8: each 128 of K summed by the MMA from zero, then added into FP32 registers"),
    fp8_stage(28,  "fp8_block_scaled",     kSm90a,  kFp8Rows,        launch_fp8_block_scaled,
              Fp8Accumulation::promoted, kBlockScales,
              "FP8, DeepSeek-V3's recipe: "
              "A's 1x128 and B's 128x128 (or 1x128) scales applied as the sums are promoted"),
    fp8_stage(29,  "fp8_tiles",            kSm90a,  kFp8Rows,        launch_fp8_tiles,
              Fp8Accumulation::promoted, kTensorScale | kBlockScales,
              "FP8, every scaling, promoted, in the tile a model chooses for 132 SMs: "
              "64 or 128 rows, 16-128 columns, clusters of 1 or 2"),
    bf16_stage(30, "any_tile",             kSm90a,  kTmaRows,        launch_any_tile, launch_any_tile_bf16_c,
               "one kernel composed of parts (operands, producer, mainloop, epilogue, scheduler) "
               "in any tile: tokens in wgmma's N or M, a plan chosen by a model"),
    fp8_stage(31,  "fp8_any_tile",         kSm90a,  kFp8RowsOfK,     launch_fp8_any_tile,
              Fp8Accumulation::promoted, kTensorScale | kBlockScales,
              "FP8 on stage 30's parts, every scaling, promoted, in its tiles, "
              "the plan by stage 30's model in K blocks"),
    fp32_stage(32, "one_launch",           kSm90a,  kAnyShape,       launch_one_launch,
               "FP32 on tensor cores in one launch for small problems: both operands split into tf32 "
               "in registers, the check inline, K split over a cluster"),
};

constexpr Stage kTracks[] = {
    fp32_track("fp32",    kSm80,  kAnyShape, launch_fp32_track, fp32_here,
               "FP32 on CUDA cores: stage 10's kernel, its tile and split of K by a model"),
    bf16_track("bf16",    kSm80,  kAnyShape, launch_bf16_track, launch_bf16_track_bf16_c, bf16_here,
               "bf16 in, FP32 sums: the kernel a cost model predicts fastest of "
               "stages 20's (padded off the multiples of 8), 25's and 14's"),
    fp32_track("fp32-tc", kSm90a, kAnyShape, launch_fp32_tc_track, fp32_tc_here,
               "FP32 on tensor cores, SGEMM's accuracy: stage 24's, 23's or 22's kernels, "
               "or stage 10's where the split does not pay"),
    fp8_track("fp8",      kSm90a, kFp8RowsPadded, launch_fp8_track,
              Fp8Accumulation::promoted, kTensorScale | kBlockScales, fp8_here,
              "FP8 with FP32 promotion, any of cuBLASLt's Hopper scalings: "
              "stage 29's kernel in one of its tiles or stage 31's in a plan, whichever a model predicts faster"),
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

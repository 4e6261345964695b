#include <fmt/format.h>

#include "10_tuned.cuh"
#include "14_multistage.cuh"
#include "20_hopper_tuned.cuh"
#include "gpu/cuda_check.hpp"
#include "tools/tuning_candidates.hpp"

namespace sgemm {
namespace {

// Registers per thread of a kernel, as compiled for this GPU.
template <class Kernel>
int registers_of(Kernel kernel) {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    return attributes.numRegs;
}

template <class Config, int GroupRows>
void launch_candidate(const GemmProblem& problem, const float* a, const float* b, float* c,
                      cudaStream_t stream) {
    launch_tuned_kernel<Config, EdgeTests::kNone>(problem, a, b, c, GroupRows, stream);
}

template <class Config, int GroupRows>
TuningCandidate candidate() {
    using T = Config;
    return TuningCandidate{fmt::format("TileConfig<{}, {}, {}, {}, {}, {}, {}, {}, {}>", T::kBlockM,
                                       T::kBlockN, T::kBlockK, T::kWarpM, T::kWarpN, T::kThreadM,
                                       T::kThreadN, T::kStages, T::kMinBlocksPerSm),
                           GroupRows, T::kThreads, T::kSharedBytes,
                           registers_of(tuned_kernel<Config, EdgeTests::kNone, false>), launch_candidate<Config, GroupRows>,
                           nullptr, GemmShape{T::kBlockM, T::kBlockN, T::kBlockK}};
}

template <class Config, int GroupRows>
void launch_bf16_candidate(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                           float* c, cudaStream_t stream) {
    launch_multistage_kernel<Config, Edges::kWholeTiles>(problem, a, b, c, GroupRows, stream);
}

template <class Config, int GroupRows>
TuningCandidate bf16_candidate() {
    using T = Config;
    return TuningCandidate{fmt::format("Bf16TileConfig<{}, {}, {}, {}, {}, {}, {}>", T::kBlockM, T::kBlockN,
                                       T::kBlockK, T::kWarpM, T::kWarpN, T::kStages, T::kMinBlocksPerSm),
                           GroupRows, T::kThreads, T::kSharedBytes,
                           registers_of(multistage_kernel<Config, Edges::kWholeTiles, false>), nullptr,
                           launch_bf16_candidate<Config, GroupRows>, GemmShape{T::kBlockM, T::kBlockN, T::kBlockK}};
}

template <class Config, int GroupRows>
void launch_hopper_candidate(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                             cudaStream_t stream) {
    launch_hopper_tuned_kernel<Config>(problem, a, b, c, GroupRows, stream);
}

template <class Config, int GroupRows>
TuningCandidate hopper_candidate() {
    using T = Config;
    return TuningCandidate{fmt::format("WarpSpecializedConfig<{}, {}, {}, {}>", T::kBlockM, T::kBlockN, T::kStages,
                                       T::kClusterM),
                           GroupRows, T::kThreads, T::kSharedBytes, registers_of(hopper_tuned_kernel<Config, false>),
                           nullptr, launch_hopper_candidate<Config, GroupRows>, GemmShape{1, 8, 8}};
}

// Stage 20 (20_hopper_tuned.cuh: stage 19's kernel, the leftover tiles shared out by K
// where that pays): 128x256 tiles (each consumer an m64n256 block) in clusters of one and
// two CTAs; 3-4 stages; raster groups of 4-16 tile rows. Then the smaller tiles that stage
// 20 chooses among by shape (tune.py --shapes): 128x128, 128x64, and 64-row tiles whose
// consumers take half the columns each. (Tried before and dropped, results/<gpu>/
// tuning_stage20.md: 256x128 tiles and C stored from registers, and no stream-K.)
std::vector<TuningCandidate> stage20_candidates() {
    using Wide = WarpSpecializedConfig<128, 256, 4, 2>;
    return {
        hopper_candidate<Wide, 4>(),
        hopper_candidate<Wide, 8>(),
        hopper_candidate<Wide, 16>(),
        hopper_candidate<WarpSpecializedConfig<128, 256, 3, 2>, 8>(),
        hopper_candidate<WarpSpecializedConfig<128, 256, 4, 1>, 16>(),
        hopper_candidate<WarpSpecializedConfig<128, 128, 5, 2>, 8>(),
        hopper_candidate<WarpSpecializedConfig<128, 128, 5, 1>, 8>(),
        hopper_candidate<WarpSpecializedConfig<128, 64, 8, 1>, 8>(),
        hopper_candidate<WarpSpecializedConfig<64, 256, 4, 2>, 8>(),
        hopper_candidate<WarpSpecializedConfig<64, 256, 4, 1>, 8>(),
        hopper_candidate<WarpSpecializedConfig<64, 128, 8, 2>, 8>(),
        hopper_candidate<WarpSpecializedConfig<64, 128, 8, 1>, 8>(),
    };
}

// Stage 14: 128x128 blocks, two per SM, against 128x256 and 256x128 blocks of eight
// warps, one per SM (a quarter less L2 traffic per FLOP); 32- and 64-deep K steps; 3-6
// stages; raster groups of 4-16 block rows; 64x64 warp tiles. Then blocks of 32x32 warp
// tiles, two or three per SM, for problems too small to fill the GPU with large blocks.
std::vector<TuningCandidate> stage14_candidates() {
    using Wide = Bf16TileConfig<128, 256, 64, 64, 64, 3, 1>;
    return {
        bf16_candidate<Wide, 4>(),
        bf16_candidate<Wide, 8>(),
        bf16_candidate<Wide, 16>(),
        bf16_candidate<Bf16TileConfig<128, 256, 64, 64, 64, 4, 1>, 8>(),
        bf16_candidate<Bf16TileConfig<128, 256, 32, 64, 64, 6, 1>, 8>(),
        bf16_candidate<Bf16TileConfig<256, 128, 64, 64, 64, 3, 1>, 8>(),
        bf16_candidate<Bf16TileConfig<256, 128, 32, 64, 64, 6, 1>, 8>(),
        bf16_candidate<Bf16TileConfig<128, 128, 64, 64, 64, 3, 2>, 8>(),
        bf16_candidate<Bf16TileConfig<128, 128, 32, 64, 64, 4, 2>, 8>(),
        bf16_candidate<Bf16TileConfig<128, 64, 64, 32, 32, 4, 2>, 8>(),
        bf16_candidate<Bf16TileConfig<64, 128, 64, 32, 32, 4, 2>, 8>(),
        bf16_candidate<Bf16TileConfig<64, 64, 64, 32, 32, 4, 3>, 8>(),
    };
}

// Stage 10's search space: around stage 9's shape (128x128x8, 8 warps, 8x8 per thread) with
// both warp arrangements, 2-4 pipeline stages and several raster group heights; then
// larger thread tiles, a deeper K step, smaller blocks, and no register cap.
std::vector<TuningCandidate> stage10_candidates() {
    using Wide = TileConfig<128, 128, 8, 64, 32, 8, 8, 3, 2>;
    return {
        candidate<TileConfig<128, 128, 8, 64, 32, 8, 8, 2, 2>, 8>(),
        candidate<Wide, 1>(),
        candidate<Wide, 4>(),
        candidate<Wide, 8>(),
        candidate<Wide, 16>(),
        candidate<TileConfig<128, 128, 8, 64, 32, 8, 8, 4, 2>, 8>(),
        candidate<TileConfig<128, 128, 8, 32, 64, 8, 8, 3, 2>, 8>(),
        candidate<TileConfig<128, 128, 8, 64, 32, 8, 8, 3, 1>, 8>(),
        candidate<TileConfig<128, 128, 16, 64, 32, 8, 8, 2, 2>, 8>(),
        candidate<TileConfig<128, 128, 16, 64, 32, 8, 8, 3, 2>, 8>(),
        candidate<TileConfig<128, 128, 8, 64, 64, 8, 16, 3, 2>, 8>(),
        candidate<TileConfig<128, 256, 8, 64, 64, 8, 16, 3, 1>, 8>(),
        candidate<TileConfig<64, 128, 8, 32, 64, 8, 8, 3, 4>, 8>(),
        candidate<TileConfig<128, 64, 8, 64, 32, 8, 8, 3, 4>, 8>(),
    };
}

}  // namespace

std::vector<TuningCandidate> tuning_candidates(int stage) {
    if (stage == 10) return stage10_candidates();
    if (stage == 14) return stage14_candidates();
    if (stage == 20) return stage20_candidates();
    return {};
}

}  // namespace sgemm

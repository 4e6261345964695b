#include <fmt/format.h>

#include "10_tuned.cuh"
#include "cuda_check.hpp"
#include "tuning_candidates.hpp"

namespace sgemm {
namespace {

template <class Config, int GroupRows>
void launch_candidate(const GemmProblem& problem, const float* a, const float* b, float* c,
                      cudaStream_t stream) {
    launch_tuned_kernel<Config, false>(problem, a, b, c, GroupRows, stream);
}

template <class Config, int GroupRows>
TuningCandidate candidate() {
    using T = Config;
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, tuned_kernel<Config, false>));
    return TuningCandidate{fmt::format("TileConfig<{}, {}, {}, {}, {}, {}, {}, {}, {}>", T::kBlockM,
                                       T::kBlockN, T::kBlockK, T::kWarpM, T::kWarpN, T::kThreadM,
                                       T::kThreadN, T::kStages, T::kMinBlocksPerSm),
                           GroupRows, T::kThreads, T::kSharedBytes, attributes.numRegs,
                           launch_candidate<Config, GroupRows>};
}

}  // namespace

// The search space: around stage 9's shape (128x128x8, 8 warps, 8x8 per thread) with
// both warp arrangements, 2-4 pipeline stages and several raster group heights; then
// larger thread tiles, a deeper K step, smaller blocks, and no register cap.
std::vector<TuningCandidate> tuning_candidates() {
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

}  // namespace sgemm

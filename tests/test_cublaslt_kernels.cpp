// sgemm_survey sorts cuBLASLt's kernels into two families by their names alone.
#include <gtest/gtest.h>

#include "tools/cublaslt_kernels.hpp"

namespace sgemm {
namespace {

TEST(NamedForHopperOrLater, HopperAndLaterNamesAreRecognised) {
    EXPECT_TRUE(named_for_hopper_or_later("nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT"));
    EXPECT_TRUE(named_for_hopper_or_later("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1"));
    EXPECT_TRUE(named_for_hopper_or_later("sm100_xmma_gemm_bf16bf16_bf16f32_f32_nn_n"));
}

TEST(NamedForHopperOrLater, OlderKernelsAreNot) {
    EXPECT_FALSE(named_for_hopper_or_later(
        "_ZN7cutlass7Kernel2I58cutlass_80_tensorop_s16816gemm_bf16_256x128_32x6_nn_align8EEvNT_6ParamsE"));
    EXPECT_FALSE(named_for_hopper_or_later("sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x32_stage5"));
    EXPECT_FALSE(named_for_hopper_or_later(""));
}

TEST(NamedForHopperOrLater, AnyKernelOfALaunchCounts) {
    EXPECT_TRUE(named_for_hopper_or_later("splitKreduce_kernel + nvjet_sm90_tss_128x128_64x6_2x1_v_bz_NNT"));
}

}  // namespace
}  // namespace sgemm

// Hopper's warpgroup MMA on 8-bit floats (sm_90a): wgmma with e4m3 A and B, FP32
// accumulators, the FP8 track's (stages 26 on) instruction. The protocol (fence, commit,
// wait, the accumulators' layout) is common/wgmma.cuh's; what differs for 8-bit inputs:
//   - one instruction takes k32, 32 values of K (32 bytes, as bf16's k16);
//   - both operands K-major (A stored M x K, B stored N x K): the ISA offers no transpose
//     for 8-bit types, so B comes as the transposed problem's operand (fp8_problem.hpp);
//   - the tensor cores add the products in an accumulator of about 14 bits (DeepSeek-V3's
//     report, 3.3.2), which is why the track promotes partial sums into FP32 (stage 27).
// The instruction:
//   wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 d, a-desc, b-desc, scale-d, 1, 1
// with the descriptors of common/wgmma.cuh (a 128-byte swizzled row holds 128 values of K
// here, so the k32 step j of a tile starts 32 j bytes into its rows, as bf16's k16 step).
#pragma once

#include <cstdint>

#include "common/wgmma.cuh"

namespace sgemm {

template <int N>
struct WgmmaE4m3;

// WgmmaE4m3<N>::mma(d, a, b, accumulate): d (+)= A * B for one m64nNk32 step, d the
// warpgroup's 64 x N tile (N / 2 registers a thread, laid out as common/wgmma.cuh says).
// REGISTERS lists d's operands %0 .. %(N/2 - 1) and the arguments after ACCUMULATE bind d to
// them (wgmma.cuh's SGEMM_WGMMA_REGISTERS_n and SGEMM_WGMMA_Dn); A, B and ACCUMULATE number
// the operands after them.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SGEMM_WGMMA_E4M3(N, REGISTERS, A, B, ACCUMULATE, ...)                                          \
    template <>                                                                                       \
    struct WgmmaE4m3<N> {                                                                             \
        __device__ __forceinline__ static void mma(float (&d)[N / 2], std::uint64_t a, std::uint64_t b, \
                                                   bool accumulate) {                                 \
            asm volatile("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, " ACCUMULATE ", 0;\n"     \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32.e4m3.e4m3 {" REGISTERS "}, " A   \
                         ", " B ", accumulate, 1, 1;\n}\n"                                             \
                         : __VA_ARGS__                                                                \
                         : "l"(a), "l"(b), "r"(int{accumulate}));                                     \
        }                                                                                             \
    };
#else
#define SGEMM_WGMMA_E4M3(N, REGISTERS, A, B, ACCUMULATE, ...)                                          \
    template <>                                                                                       \
    struct WgmmaE4m3<N> {                                                                             \
        __device__ __forceinline__ static void mma(float (&)[N / 2], std::uint64_t, std::uint64_t, bool) {} \
    };
#endif

SGEMM_WGMMA_E4M3(8, SGEMM_WGMMA_REGISTERS_4, "%4", "%5", "%6", SGEMM_WGMMA_D4(0))
SGEMM_WGMMA_E4M3(16, SGEMM_WGMMA_REGISTERS_8, "%8", "%9", "%10", SGEMM_WGMMA_D8(0))
SGEMM_WGMMA_E4M3(32, SGEMM_WGMMA_REGISTERS_16, "%16", "%17", "%18", SGEMM_WGMMA_D8(0), SGEMM_WGMMA_D8(8))
SGEMM_WGMMA_E4M3(64, SGEMM_WGMMA_REGISTERS_32, "%32", "%33", "%34", SGEMM_WGMMA_D32(0))
SGEMM_WGMMA_E4M3(96, SGEMM_WGMMA_REGISTERS_48, "%48", "%49", "%50", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D8(32),
                 SGEMM_WGMMA_D8(40))
SGEMM_WGMMA_E4M3(128, SGEMM_WGMMA_REGISTERS_64, "%64", "%65", "%66", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32))
SGEMM_WGMMA_E4M3(144, SGEMM_WGMMA_REGISTERS_72, "%72", "%73", "%74", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32),
                 SGEMM_WGMMA_D8(64))
SGEMM_WGMMA_E4M3(160, SGEMM_WGMMA_REGISTERS_80, "%80", "%81", "%82", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32),
                 SGEMM_WGMMA_D8(64), SGEMM_WGMMA_D8(72))
SGEMM_WGMMA_E4M3(192, SGEMM_WGMMA_REGISTERS_96, "%96", "%97", "%98", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32),
                 SGEMM_WGMMA_D32(64))
SGEMM_WGMMA_E4M3(256, SGEMM_WGMMA_REGISTERS_128, "%128", "%129", "%130", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32),
                 SGEMM_WGMMA_D32(64), SGEMM_WGMMA_D32(96))

#undef SGEMM_WGMMA_E4M3

template <int N>
__device__ __forceinline__ void wgmma_m64k32_e4m3(float (&d)[N / 2], std::uint64_t a_descriptor,
                                                  std::uint64_t b_descriptor, bool accumulate = true) {
    WgmmaE4m3<N>::mma(d, a_descriptor, b_descriptor, accumulate);
}

}  // namespace sgemm

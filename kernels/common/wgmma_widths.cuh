// The widths of wgmma's N that common/wgmma.cuh leaves out: every multiple of 16 up to 256
// (wgmma.cuh has 8, 16, 32, 64, 128 and 256), for the kernel that takes any tile
// (chapter 30), whose tokens may be any multiple of 16 in wgmma's N. The same instruction
// as wgmma.cuh's Wgmma<N>, m64nNk16 with bf16 or f16 inputs and FP32 sums, specialized for
// these N; the register lists and their bindings are wgmma.cuh's (SGEMM_WGMMA_REGISTERS_n,
// SGEMM_WGMMA_Dn). Kept apart from wgmma.cuh so that adding widths leaves the sources of
// the stages that include it (and so their measured rows) as they are.
#pragma once

#include "common/wgmma.cuh"

namespace sgemm {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SGEMM_WGMMA_WIDTH_ASM(N, TYPE, REGISTERS, A, B, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B)              \
    "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, " ACCUMULATE ", 0;\n"                          \
    "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" REGISTERS "}, " A ", " B      \
    ", accumulate, 1, 1, " TRANSPOSE_A ", " TRANSPOSE_B ";\n}\n"
// REGISTERS: the N/2 accumulators' operands; A, B, ACCUMULATE, TRANSPOSE_B, TRANSPOSE_A:
// the numbers of the operands after them; then d's bindings.
#define SGEMM_WGMMA_WIDTH(N, REGISTERS, A, B, ACCUMULATE, TRANSPOSE_B, TRANSPOSE_A, ...)                    \
    template <>                                                                                        \
    struct Wgmma<N> {                                                                                  \
        template <class Input, bool kBMnMajor, bool kAMnMajor>                                         \
        __device__ __forceinline__ static void mma(float (&d)[N / 2], std::uint64_t a, std::uint64_t b, \
                                                   bool accumulate) {                                  \
            if constexpr (kIsF16<Input>)                                                               \
                asm volatile(SGEMM_WGMMA_WIDTH_ASM(N, "f16", REGISTERS, A, B, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B) \
                             : __VA_ARGS__                                                             \
                             : "l"(a), "l"(b), "r"(int{accumulate}), "n"(kBMnMajor ? 1 : 0), "n"(kAMnMajor ? 1 : 0)); \
            else                                                                                       \
                asm volatile(SGEMM_WGMMA_WIDTH_ASM(N, "bf16", REGISTERS, A, B, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B) \
                             : __VA_ARGS__                                                             \
                             : "l"(a), "l"(b), "r"(int{accumulate}), "n"(kBMnMajor ? 1 : 0), "n"(kAMnMajor ? 1 : 0)); \
        }                                                                                              \
    };
#else
#define SGEMM_WGMMA_WIDTH(N, ...)                                                                       \
    template <>                                                                                        \
    struct Wgmma<N> {                                                                                  \
        template <class Input, bool kBMnMajor, bool kAMnMajor>                                         \
        __device__ __forceinline__ static void mma(float (&)[N / 2], std::uint64_t, std::uint64_t, bool) {} \
    };
#endif

SGEMM_WGMMA_WIDTH(48, SGEMM_WGMMA_REGISTERS_24, "%24", "%25", "%26", "%27", "%28",
                  SGEMM_WGMMA_D8(0), SGEMM_WGMMA_D8(8), SGEMM_WGMMA_D8(16))
SGEMM_WGMMA_WIDTH(80, SGEMM_WGMMA_REGISTERS_40, "%40", "%41", "%42", "%43", "%44",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D8(32))
SGEMM_WGMMA_WIDTH(96, SGEMM_WGMMA_REGISTERS_48, "%48", "%49", "%50", "%51", "%52",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D8(32), SGEMM_WGMMA_D8(40))
SGEMM_WGMMA_WIDTH(112, SGEMM_WGMMA_REGISTERS_56, "%56", "%57", "%58", "%59", "%60",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D8(32), SGEMM_WGMMA_D8(40), SGEMM_WGMMA_D8(48))
SGEMM_WGMMA_WIDTH(144, SGEMM_WGMMA_REGISTERS_72, "%72", "%73", "%74", "%75", "%76",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D8(64))
SGEMM_WGMMA_WIDTH(160, SGEMM_WGMMA_REGISTERS_80, "%80", "%81", "%82", "%83", "%84",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D8(64), SGEMM_WGMMA_D8(72))
SGEMM_WGMMA_WIDTH(176, SGEMM_WGMMA_REGISTERS_88, "%88", "%89", "%90", "%91", "%92",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D8(64), SGEMM_WGMMA_D8(72), SGEMM_WGMMA_D8(80))
SGEMM_WGMMA_WIDTH(192, SGEMM_WGMMA_REGISTERS_96, "%96", "%97", "%98", "%99", "%100",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D32(64))
SGEMM_WGMMA_WIDTH(208, SGEMM_WGMMA_REGISTERS_104, "%104", "%105", "%106", "%107", "%108",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D32(64), SGEMM_WGMMA_D8(96))
SGEMM_WGMMA_WIDTH(224, SGEMM_WGMMA_REGISTERS_112, "%112", "%113", "%114", "%115", "%116",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D32(64), SGEMM_WGMMA_D8(96), SGEMM_WGMMA_D8(104))
SGEMM_WGMMA_WIDTH(240, SGEMM_WGMMA_REGISTERS_120, "%120", "%121", "%122", "%123", "%124",
                  SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D32(64), SGEMM_WGMMA_D8(96), SGEMM_WGMMA_D8(104), SGEMM_WGMMA_D8(112))

#undef SGEMM_WGMMA_WIDTH
#undef SGEMM_WGMMA_WIDTH_ASM

}  // namespace sgemm

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

#define SGEMM_D8(i)                                                                              \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])

// WgmmaE4m3<N>::mma(d, a, b, accumulate): d (+)= A * B for one m64nNk32 step, d the
// warpgroup's 64 x N tile (N / 2 registers a thread, laid out as common/wgmma.cuh says).
// REGISTERS lists d's operands %0 .. %(N/2 - 1); A, B and ACCUMULATE number the operands
// after them.
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

SGEMM_WGMMA_E4M3(8,
    "%0, %1, %2, %3",
    "%4", "%5", "%6",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]))

SGEMM_WGMMA_E4M3(16,
    "%0, %1, %2, %3, %4, %5, %6, %7",
    "%8", "%9", "%10",
    SGEMM_D8(0))

SGEMM_WGMMA_E4M3(32,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15",
    "%16", "%17", "%18",
    SGEMM_D8(0), SGEMM_D8(8))

SGEMM_WGMMA_E4M3(64,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31",
    "%32", "%33", "%34",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24))

SGEMM_WGMMA_E4M3(96,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47",
    "%48", "%49", "%50",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24), SGEMM_D8(32), SGEMM_D8(40))

SGEMM_WGMMA_E4M3(128,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63",
    "%64", "%65", "%66",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24), SGEMM_D8(32), SGEMM_D8(40), SGEMM_D8(48), SGEMM_D8(56))

SGEMM_WGMMA_E4M3(144,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
    "%64, %65, %66, %67, %68, %69, %70, %71",
    "%72", "%73", "%74",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24), SGEMM_D8(32), SGEMM_D8(40), SGEMM_D8(48), SGEMM_D8(56), SGEMM_D8(64))

SGEMM_WGMMA_E4M3(160,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79",
    "%80", "%81", "%82",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24), SGEMM_D8(32), SGEMM_D8(40), SGEMM_D8(48), SGEMM_D8(56), SGEMM_D8(64), SGEMM_D8(72))

SGEMM_WGMMA_E4M3(192,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95",
    "%96", "%97", "%98",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24), SGEMM_D8(32), SGEMM_D8(40), SGEMM_D8(48), SGEMM_D8(56), SGEMM_D8(64), SGEMM_D8(72), SGEMM_D8(80), SGEMM_D8(88))

SGEMM_WGMMA_E4M3(256,
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127",
    "%128", "%129", "%130",
    SGEMM_D8(0), SGEMM_D8(8), SGEMM_D8(16), SGEMM_D8(24), SGEMM_D8(32), SGEMM_D8(40), SGEMM_D8(48), SGEMM_D8(56), SGEMM_D8(64), SGEMM_D8(72), SGEMM_D8(80), SGEMM_D8(88), SGEMM_D8(96), SGEMM_D8(104), SGEMM_D8(112), SGEMM_D8(120))

#undef SGEMM_WGMMA_E4M3
#undef SGEMM_D8

template <int N>
__device__ __forceinline__ void wgmma_m64k32_e4m3(float (&d)[N / 2], std::uint64_t a_descriptor,
                                                  std::uint64_t b_descriptor, bool accumulate = true) {
    WgmmaE4m3<N>::mma(d, a_descriptor, b_descriptor, accumulate);
}

}  // namespace sgemm

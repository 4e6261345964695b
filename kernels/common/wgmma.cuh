// Hopper's warpgroup MMA (wgmma, sm_90a only) as PTX. A warpgroup (four consecutive
// warps, 128 threads) multiplies a 64xK tile of A by a KxN tile of B into a 64xN FP32
// tile that lives in its registers; A and B are read straight from shared memory,
// described by 64-bit matrix descriptors, so no thread loads an operand. The
// instruction is asynchronous, and the PTX ISA ("Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate") asks for this protocol, which the functions below spell out:
//   wgmma_fence()           before the first wgmma, and after any other instruction
//                           wrote the accumulators (wgmmas of one shape that chain on
//                           the same accumulators are ordered without it)
//   wgmma_m64k16<N>()       issue one; it returns before the hardware is done
//   wgmma_commit_group()    close the wgmmas issued since the last commit into a group
//   wgmma_wait_group<N>()   wait until at most N groups are still running
//   wgmma_fence_accumulators() then keep the compiler from reading them any earlier
// Shared memory written by ordinary stores must pass fence_shared_for_wgmma() (and a
// barrier) before a wgmma reads it: wgmma reads through the async proxy.
//
// wgmma is in sm_90a's instruction set but not in sm_90's, whose code must also run on
// later GPUs: everything here compiles to nothing unless nvcc targets sm_90a
// (__CUDA_ARCH_FEAT_SM90_ALL). Callers check that at run time (wgmma_compiled_in() in
// src/measuring/ceilings.hpp) before they trust a result.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace sgemm {

// How a tile's rows are swizzled in shared memory; the values are the descriptor's
// encoding (bits 62-63).
enum class WgmmaSwizzle : std::uint64_t { bytes128 = 1 };

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
//   bits  0-13  encode(start address of the tile in the shared window), 16-byte aligned
//   bits 16-29  encode(leading dimension byte offset)
//   bits 32-45  encode(stride dimension byte offset)
//   bits 49-51  base offset, 0 when the swizzle pattern starts on its own boundary
//               (1024 bytes for the 128-byte swizzle, 512 for 64, 256 for 32); this
//               function writes 0, so a swizzled tile must be aligned that way
//   bits 62-63  the swizzle
// with encode(x) = (x & 0x3FFFF) >> 4: addresses and offsets count 16-byte units.
//
// A tile is made of core matrices: 8 rows of 16 bytes (8 bf16 values of K). For a
// K-major operand (K contiguous: A as M x K, B as N x K, mma's "row.col") the ISA's
// canonical layouts give the offsets their meaning:
//   no swizzle: 8 rows of a core matrix 16 bytes apart (128 contiguous bytes);
//               leading offset = from one core matrix to the next along K,
//               stride offset  = from one group of 8 rows to the next along M or N
//   128-byte swizzle: rows of 64 values (128 bytes), 8 rows = one 1024-byte pattern
//               in which chunk c of row r sits at chunk c ^ (r % 8) (as in
//               bf16_tiles.cuh); stride offset = 1024 (the next 8 rows), the leading
//               offset is unused (the ISA says "assumed 1": pass 16), and the k16 step
//               j of a 64-wide tile starts 32 * j bytes further in (the hardware
//               applies the swizzle to the address it computes, hence the alignment)
__device__ __forceinline__ std::uint64_t wgmma_descriptor(const void* tile, unsigned leading_byte_offset,
                                                          unsigned stride_byte_offset, WgmmaSwizzle swizzle) {
    const auto encode = [](unsigned long long x) -> std::uint64_t { return (x & 0x3FFFF) >> 4; };
    return encode(__cvta_generic_to_shared(tile)) | encode(leading_byte_offset) << 16 |
           encode(stride_byte_offset) << 32 | static_cast<std::uint64_t>(swizzle) << 62;
}

__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int kMaxPendingGroups>
__device__ __forceinline__ void wgmma_wait_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kMaxPendingGroups) : "memory");
#endif
}

// Orders this thread's earlier ordinary (generic-proxy) shared-memory writes before
// later wgmma reads of them; a __syncthreads() must follow for other threads' writes.
__device__ __forceinline__ void fence_shared_for_wgmma() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// The accumulators are written by the tensor cores behind the compiler's back: an empty
// asm that "modifies" each one, placed after wgmma_wait_group, keeps the compiler from
// moving reads of them (or writes to them) across the wait.
template <int kCount>
__device__ __forceinline__ void wgmma_fence_accumulators(float (&d)[kCount]) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d += A * B for one m64nNk16 step: A 64x16, K-major (stored 64 x 16, kAMnMajor = false)
// or MN-major (stored 16 x 64, kAMnMajor = true); B 16xN, K-major (stored N x 16,
// kBMnMajor = false) or MN-major (stored 16 x N, row-major, kBMnMajor = true: wgmma
// transposes 16-bit operands as it reads them); both of the 16-bit type Input,
// __nv_bfloat16 (.bf16) or __half (.f16). d is the warpgroup's 64xN FP32 tile, N/2
// registers a thread: thread t of warp w holds rows 16w + t/4 and 16w + t/4 + 8, the
// column pairs 8i + 2(t%4) + {0,1}, as d[4i..4i+1] and d[4i+2..4i+3] (the m16n8 C layout
// of mma.cuh, once per 8 columns). With accumulate false the instruction overwrites d
// (d = A * B) instead of adding to it. The instruction is
//   wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} d, a-desc, b-desc,
//       scale-d, 1, 1, tA, tB
// with scale-d = accumulate, no negation, A or B transposed (tA, tB = 1) when MN-major.
template <int N>
struct Wgmma;

// Where accumulator d[4 j + 2 half + p] of thread `thread` (0..127) of the warpgroup lies
// in its 64 x N tile (the layout above): row 16 w + t / 4 + 8 half, column 8 j + 2 (t % 4)
// + p, for warp w = thread / 32 and lane t = thread % 32.
struct AccumulatorPosition {
    int row, column;
};

__device__ __forceinline__ AccumulatorPosition wgmma_accumulator_position(int thread, int j, int half) {
    const int warp = thread / 32, lane = thread % 32;
    return AccumulatorPosition{16 * warp + lane / 4 + 8 * half, 8 * j + 2 * (lane % 4)};
}

// The operand lists of an instruction with N / 2 accumulators a thread, shared with
// wgmma_fp8.cuh: SGEMM_WGMMA_REGISTERS_n is the string "%0, %1, ..., %(n - 1)" of the
// asm template, SGEMM_WGMMA_Dn(i) binds d[i .. i + n - 1] to those operands, in order.
#define SGEMM_WGMMA_REGISTERS_4 "%0, %1, %2, %3"
#define SGEMM_WGMMA_REGISTERS_8 SGEMM_WGMMA_REGISTERS_4 ", %4, %5, %6, %7"
#define SGEMM_WGMMA_REGISTERS_16 SGEMM_WGMMA_REGISTERS_8 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define SGEMM_WGMMA_REGISTERS_24 SGEMM_WGMMA_REGISTERS_16 ", %16, %17, %18, %19, %20, %21, %22, %23"
#define SGEMM_WGMMA_REGISTERS_32 SGEMM_WGMMA_REGISTERS_24 ", %24, %25, %26, %27, %28, %29, %30, %31"
#define SGEMM_WGMMA_REGISTERS_40 SGEMM_WGMMA_REGISTERS_32 ", %32, %33, %34, %35, %36, %37, %38, %39"
#define SGEMM_WGMMA_REGISTERS_48 SGEMM_WGMMA_REGISTERS_40 ", %40, %41, %42, %43, %44, %45, %46, %47"
#define SGEMM_WGMMA_REGISTERS_56 SGEMM_WGMMA_REGISTERS_48 ", %48, %49, %50, %51, %52, %53, %54, %55"
#define SGEMM_WGMMA_REGISTERS_64 SGEMM_WGMMA_REGISTERS_56 ", %56, %57, %58, %59, %60, %61, %62, %63"
#define SGEMM_WGMMA_REGISTERS_72 SGEMM_WGMMA_REGISTERS_64 ", %64, %65, %66, %67, %68, %69, %70, %71"
#define SGEMM_WGMMA_REGISTERS_80 SGEMM_WGMMA_REGISTERS_72 ", %72, %73, %74, %75, %76, %77, %78, %79"
#define SGEMM_WGMMA_REGISTERS_88 SGEMM_WGMMA_REGISTERS_80 ", %80, %81, %82, %83, %84, %85, %86, %87"
#define SGEMM_WGMMA_REGISTERS_96 SGEMM_WGMMA_REGISTERS_88 ", %88, %89, %90, %91, %92, %93, %94, %95"
#define SGEMM_WGMMA_REGISTERS_104 SGEMM_WGMMA_REGISTERS_96 ", %96, %97, %98, %99, %100, %101, %102, %103"
#define SGEMM_WGMMA_REGISTERS_112 SGEMM_WGMMA_REGISTERS_104 ", %104, %105, %106, %107, %108, %109, %110, %111"
#define SGEMM_WGMMA_REGISTERS_120 SGEMM_WGMMA_REGISTERS_112 ", %112, %113, %114, %115, %116, %117, %118, %119"
#define SGEMM_WGMMA_REGISTERS_128 SGEMM_WGMMA_REGISTERS_120 ", %120, %121, %122, %123, %124, %125, %126, %127"
#define SGEMM_WGMMA_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SGEMM_WGMMA_D8(i)                                                                              \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define SGEMM_WGMMA_D32(i) \
    SGEMM_WGMMA_D8(i), SGEMM_WGMMA_D8(i + 8), SGEMM_WGMMA_D8(i + 16), SGEMM_WGMMA_D8(i + 24)

// The instruction for N columns (REGISTERS: "%0, ..., %(N/2 - 1)"), input type TYPE.
#define SGEMM_WGMMA_ASM(N, TYPE, REGISTERS, A, B, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B)                    \
    "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, " ACCUMULATE ", 0;\n"                          \
    "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" REGISTERS "}, " A ", " B      \
    ", accumulate, 1, 1, " TRANSPOSE_A ", " TRANSPOSE_B ";\n}\n"

template <class Input>
constexpr bool kIsF16 = std::is_same_v<Input, __half>;

// The issuing code exists only where nvcc targets sm_90a (see the top of this file).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SGEMM_ON_SM90A(...) __VA_ARGS__
#else
#define SGEMM_ON_SM90A(...)
#endif

// Wgmma<N>: one instruction for .f16 and for .bf16 inputs. REGISTERS lists the N/2
// accumulators' operands %0 .. %(N/2 - 1), the outputs (...) bind them to d, and A, B,
// ACCUMULATE, TRANSPOSE_B and TRANSPOSE_A number the operands that follow (the
// descriptors, scale-d, tB, tA).
#define SGEMM_WGMMA_SPECIALIZATION(N, REGISTERS, A, B, ACCUMULATE, TRANSPOSE_B, TRANSPOSE_A, ...)           \
    template <>                                                                                        \
    struct Wgmma<N> {                                                                                  \
        template <class Input, bool kBMnMajor, bool kAMnMajor>                                         \
        __device__ __forceinline__ static void mma(float (&d)[N / 2], std::uint64_t a, std::uint64_t b, \
                                                   bool accumulate) {                                  \
            SGEMM_ON_SM90A(                                                                            \
                if constexpr (kIsF16<Input>) asm volatile(                                             \
                    SGEMM_WGMMA_ASM(N, "f16", REGISTERS, A, B, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B)   \
                    : __VA_ARGS__                                                                      \
                    : "l"(a), "l"(b), "r"(int{accumulate}), "n"(kBMnMajor ? 1 : 0), "n"(kAMnMajor ? 1 : 0)); \
                else asm volatile(                                                                     \
                    SGEMM_WGMMA_ASM(N, "bf16", REGISTERS, A, B, ACCUMULATE, TRANSPOSE_A, TRANSPOSE_B)  \
                    : __VA_ARGS__                                                                      \
                    : "l"(a), "l"(b), "r"(int{accumulate}), "n"(kBMnMajor ? 1 : 0), "n"(kAMnMajor ? 1 : 0));) \
        }                                                                                              \
    };

SGEMM_WGMMA_SPECIALIZATION(8,
    SGEMM_WGMMA_REGISTERS_4,
    "%4", "%5", "%6", "%7", "%8", SGEMM_WGMMA_D4(0))

SGEMM_WGMMA_SPECIALIZATION(16,
    SGEMM_WGMMA_REGISTERS_8,
    "%8", "%9", "%10", "%11", "%12", SGEMM_WGMMA_D8(0))

SGEMM_WGMMA_SPECIALIZATION(32,
    SGEMM_WGMMA_REGISTERS_16,
    "%16", "%17", "%18", "%19", "%20", SGEMM_WGMMA_D8(0), SGEMM_WGMMA_D8(8))

SGEMM_WGMMA_SPECIALIZATION(64,
    SGEMM_WGMMA_REGISTERS_32,
    "%32", "%33", "%34", "%35", "%36", SGEMM_WGMMA_D32(0))

SGEMM_WGMMA_SPECIALIZATION(128,
    SGEMM_WGMMA_REGISTERS_64,
    "%64", "%65", "%66", "%67", "%68", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32))

SGEMM_WGMMA_SPECIALIZATION(256,
    SGEMM_WGMMA_REGISTERS_128,
    "%128", "%129", "%130", "%131", "%132", SGEMM_WGMMA_D32(0), SGEMM_WGMMA_D32(32), SGEMM_WGMMA_D32(64),
    SGEMM_WGMMA_D32(96))

#undef SGEMM_WGMMA_SPECIALIZATION
#undef SGEMM_ON_SM90A
#undef SGEMM_WGMMA_ASM

template <int N, bool kBMnMajor, class Input = __nv_bfloat16, bool kAMnMajor = false>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], std::uint64_t a_descriptor, std::uint64_t b_descriptor,
                                             bool accumulate = true) {
    Wgmma<N>::template mma<Input, kBMnMajor, kAMnMajor>(d, a_descriptor, b_descriptor, accumulate);
}

// The same step with A in registers (the "RS" form, stage 23), for fp16 inputs and
// N = 64: each thread holds its share of the 64x16 A tile as four registers of two __half
// (the lower half the lower column), in mma.cuh's m16n8k16 A layout once per warp, warp w
// taking rows 16w .. 16w + 15: register 0 holds row t/4, columns 2(t%4) + {0,1} of thread
// t's warp rows; register 1 the row 8 further; registers 2 and 3 the same 8 columns on.
// The registers must keep their values until the wgmma is done (wgmma_wait_group): ptxas
// sees the instruction, and keeps them. B is K-major (stored N x 16).
//   wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 d, {a0, a1, a2, a3}, b-desc,
//       scale-d, 1, 1, 0
__device__ __forceinline__ void wgmma_m64n64k16_f16_a_in_registers(float (&d)[32], const unsigned (&a)[4],
                                                                   std::uint64_t b_descriptor, bool accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, accumulate, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_descriptor), "r"(int{accumulate}));
#endif
}

// setmaxnreg.dec/inc.sync.aligned.u32 (sm_90a): the warpgroup that runs it gives back
// registers to, or takes them from, the SM's pool, so that a producer warpgroup that
// only issues copies can leave its registers to the warpgroups that hold accumulators.
// Every warp of the warpgroup must run it; it takes effect only in a kernel compiled with
// a register limit (__launch_bounds__(threads, 1)).
template <int kRegisters>
__device__ __forceinline__ void warpgroup_release_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}

template <int kRegisters>
__device__ __forceinline__ void warpgroup_claim_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}

}  // namespace sgemm

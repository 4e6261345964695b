// Hopper's warpgroup MMA (wgmma, sm_90a only) as PTX. A warpgroup (four consecutive
// warps, 128 threads) multiplies a 64xK tile of A by a KxN tile of B into a 64xN FP32
// tile that lives in its registers; A and B are read straight from shared memory,
// described by 64-bit matrix descriptors, so no thread loads an operand. The
// instruction is asynchronous, and the PTX ISA ("Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate") asks for this protocol, which the functions below spell out:
//   wgmma_fence()           before the first wgmma, and after any other instruction
//                           wrote the accumulators (wgmmas of one shape that chain on
//                           the same accumulators are ordered without it)
//   wgmma_m64n256k16_bf16() issue one; it returns before the hardware is done
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

#include <cstdint>

namespace sgemm {

// How a tile's rows are swizzled in shared memory; the values are the descriptor's
// encoding (bits 62-63).
enum class WgmmaSwizzle : std::uint64_t { none = 0, bytes128 = 1, bytes64 = 2, bytes32 = 3 };

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

// d += A * B: A 64x16 bf16, B 16x256 bf16 (stored 256 x 16, K-major), both in shared
// memory; d is the warpgroup's 64x256 FP32 tile, 128 registers a thread (thread t of
// warp w holds rows 16w + t/4 and 16w + t/4 + 8, the column pairs 8i + 2(t%4) + {0,1};
// d[4i..4i+3] for column block i: the m16n8 C layout of mma.cuh, once per block).
// scale-d = 1 (accumulate), no negation, both operands K-major (trans = 0).
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], std::uint64_t a_descriptor,
                                                      std::uint64_t b_descriptor) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n"
        ".reg .pred accumulate;\n"
        "setp.ne.b32 accumulate, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, accumulate, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a_descriptor), "l"(b_descriptor));
#endif
}

}  // namespace sgemm

// Synchronization beyond __syncthreads: a barrier for some of a block's warps (bar.sync
// with an id), and a flag that one CTA raises for another (st.release / ld.acquire at GPU
// scope).
#pragma once

namespace sgemm {

// bar.sync id, threads: a barrier for `threads` threads (whole warps) only, such as one
// warpgroup; ids 1-15 (__syncthreads uses 0).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// st.release.gpu: `value` becomes visible to the GPU only after every memory access this
// thread made before it.
__device__ __forceinline__ void store_release(int* flag, int value) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

// ld.acquire.gpu: what this thread reads after it is at least as new as what the writer
// of the value read had written before its release.
__device__ __forceinline__ int load_acquire(const int* flag) {
    int value;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
    return value;
}

}  // namespace sgemm

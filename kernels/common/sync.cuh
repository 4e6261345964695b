// Synchronization beyond __syncthreads: a barrier for some of a block's warps (bar.sync
// and bar.arrive with an id), and a count that CTAs add to and another reads (red.release / ld.acquire at
// GPU scope).
#pragma once

namespace sgemm {

// bar.sync id, threads: a barrier for `threads` threads (whole warps) only, such as one
// warpgroup; ids 1-15 (__syncthreads uses 0).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// bar.arrive id, threads: counts this warp's arrival at the barrier without waiting for it;
// the barrier completes when `threads` threads have arrived or synced (a producer's signal to
// warps that bar.sync on it).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// red.release.gpu.add: adds `value` to a count, visible to the GPU only after every memory
// access this thread made before it.
__device__ __forceinline__ void add_release(int* count, int value) {
    asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(count), "r"(value) : "memory");
}

// ld.acquire.gpu: what this thread reads after it is at least as new as what the writer
// of the value read had written before its release.
__device__ __forceinline__ int load_acquire(const int* count) {
    int value;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(count) : "memory");
    return value;
}

}  // namespace sgemm

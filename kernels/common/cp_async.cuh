// cp.async (sm_80+): copies from global to shared memory without passing through
// registers, asynchronously. Copies are grouped (commit), and a thread waits until at
// most N of its groups are still in flight (wait<N>); a barrier then makes every
// thread's completed copies visible to the block.
#pragma once

namespace sgemm {

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
    return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// 16 bytes, both addresses 16-byte aligned; bypasses L1 (.cg).
__device__ __forceinline__ void cp_async_16(void* shared, const void* global) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(shared)), "l"(global));
#endif
}

// The first `bytes` (0-16) of a 16-byte aligned chunk to a shared-memory address (as from
// shared_address), the rest of the 16 zeros: only those bytes are used (none where bytes =
// 0; the address must still be a valid one, and compute-sanitizer checks all 16 bytes).
__device__ __forceinline__ void cp_async_16_partial(unsigned shared, const void* global, int bytes) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global), "r"(bytes));
#endif
}

// 16 bytes, or 16 zero bytes when !valid: then nothing is read, so a loop can run its
// copies without a branch.
__device__ __forceinline__ void cp_async_16_or_zero(unsigned shared, const void* global, bool valid) {
    cp_async_16_partial(shared, global, valid ? 16 : 0);
}

// 4 bytes, or 4 zero bytes when !valid (the source is then not read, but must still be
// a valid address); any float can be placed anywhere, so a copy can also transpose.
__device__ __forceinline__ void cp_async_4_or_zero(void* shared, const void* global, bool valid) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(shared)),
                 "l"(global), "r"(valid ? 4 : 0));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int kMaxPendingGroups>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kMaxPendingGroups));
#endif
}

}  // namespace sgemm

// Programmatic dependent launch (sm_90): a kernel launched as dependent on the one before it
// in the stream (cudaLaunchAttributeProgrammaticStreamSerialization) may be launched while
// that one still runs, once each of its blocks has said so (griddepcontrol.launch_dependents)
// or ended; before it reads what that kernel wrote it waits (griddepcontrol.wait) until that
// kernel has finished and its writes are visible. So the second kernel's launch is paid while
// the first one's last blocks run, not after them. Before sm_90 the instructions are left out
// and the launch is an ordinary one, ordered after the kernel before it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace sgemm {

// griddepcontrol.launch_dependents: this block no longer holds back the next kernel's launch.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// griddepcontrol.wait: until the kernel this one was launched after has finished and its
// writes are visible (at once where it was launched as an ordinary one).
__device__ __forceinline__ void wait_for_prior_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// kernel<<<grid, block, shared_bytes, stream>>>(args...), as dependent on the kernel before it
// where the GPU can launch it so (compute capability 9.0 and later): the kernel must call
// wait_for_prior_kernel() before it reads what that kernel wrote.
template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                             cudaStream_t stream, Args&&... args) {
    int device = 0, major = 0;
    const bool dependent = cudaGetDevice(&device) == cudaSuccess &&
                           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                           major >= 9;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = dependent ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace sgemm

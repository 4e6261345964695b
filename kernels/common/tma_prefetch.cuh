// prefetch.tensormap: a tensor map (a kernel parameter, __grid_constant__) brought into the
// cache the copy engine reads descriptors from, before the first TMA that names it, so that
// the first load of a short kernel does not wait on the descriptor's fetch too. (Kept apart
// from tma.cuh, which every Hopper stage includes.)
#pragma once

#include <cuda.h>

namespace sgemm {

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
#if __CUDA_ARCH__ >= 900
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
#endif
}

}  // namespace sgemm

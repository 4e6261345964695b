// Thread-block clusters (sm_90): CTAs launched together on neighbouring SMs of one GPC,
// which can read, write and signal each other's shared memory (mbarrier_arrive_in_cta,
// tma_load_2d_multicast). A cluster is asked for at launch (launch_with_cluster).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "common/launch.cuh"

namespace sgemm {

// %cluster_ctarank: this CTA's rank in its cluster, 0 .. cluster size - 1.
__device__ __forceinline__ unsigned cluster_cta_rank() {
    unsigned rank = 0;
#if __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
    return rank;
}

// barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every thread of every
// CTA of the cluster meets here; shared-memory writes before it (barrier inits
// included) are visible to the whole cluster after it.
__device__ __forceinline__ void cluster_sync() {
#if __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

// mapa.shared::cluster.u32: the address in the cluster's shared window of what lies at
// `local` (this CTA's shared memory) in the shared memory of CTA `cta_rank`.
__device__ __forceinline__ unsigned cluster_shared_address(const void* local, unsigned cta_rank) {
    unsigned address = 0;
#if __CUDA_ARCH__ >= 900
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(address)
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(local))), "r"(cta_rank));
#endif
    return address;
}

// ld.shared::cluster.v4.f32: four floats from another CTA's shared memory (distributed
// shared memory), at an address from cluster_shared_address, 16-byte aligned.
__device__ __forceinline__ float4 load_float4_from_cluster(unsigned address) {
    float4 value{};
#if __CUDA_ARCH__ >= 900
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(value.x), "=f"(value.y), "=f"(value.z), "=f"(value.w)
                 : "r"(address)
                 : "memory");
#endif
    return value;
}

// A launch of `blocks` CTAs in clusters of `cluster_size` along x (blocks a multiple of
// it), with `shared_bytes` of dynamic shared memory; `cluster` must outlive it.
inline cudaLaunchConfig_t cluster_launch_config(cudaLaunchAttribute& cluster, int blocks, int threads,
                                                int cluster_size, std::size_t shared_bytes, cudaStream_t stream) {
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = cluster_size;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return config;
}

template <class... KernelArgs, class... Args>
void launch_with_cluster(void (*kernel)(KernelArgs...), int blocks, int threads, int cluster_size,
                         std::size_t shared_bytes, cudaStream_t stream, Args&&... args) {
    cudaLaunchAttribute cluster{};
    const cudaLaunchConfig_t config = cluster_launch_config(cluster, blocks, threads, cluster_size, shared_bytes, stream);
    cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

// How many clusters of `cluster_size` CTAs of `kernel` the GPU runs at once (0 if it
// cannot say).
template <class Kernel>
int max_active_clusters(Kernel kernel, int threads, int cluster_size, std::size_t shared_bytes) {
    cudaLaunchAttribute cluster{};
    const cudaLaunchConfig_t config = cluster_launch_config(cluster, cluster_size, threads, cluster_size, shared_bytes, nullptr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return clusters;
}

}  // namespace sgemm

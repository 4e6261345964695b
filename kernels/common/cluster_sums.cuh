// The sums a cluster's CTAs hold at the same place of their shared memory, added in rank
// order (the same sums whichever CTA adds them): the split of K over a cluster's last step.
// (Kept apart from cluster.cuh, which every cluster stage includes; stage 25 keeps its own
// loop, written in its chapter.)
#pragma once

#include <cuda_runtime.h>

#include "common/cluster.cuh"

namespace sgemm {

// ld.shared::cluster.v4.f32 from CTAs 0 .. ctas - 1: the four floats at `local` (16-byte
// aligned) of each, added.
__device__ __forceinline__ float4 sum_float4_over_cluster(const float* local, int ctas) {
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int cta = 0; cta < ctas; ++cta) {
        const float4 part = load_float4_from_cluster(cluster_shared_address(local, cta));
        sum.x += part.x;
        sum.y += part.y;
        sum.z += part.z;
        sum.w += part.w;
    }
    return sum;
}

}  // namespace sgemm

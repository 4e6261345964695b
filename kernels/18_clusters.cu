// Stage 18 — clusters: two CTAs share B's tile through TMA multicast.
//
// The idea: vertically adjacent tiles need the same 64x256 slice of B for every K tile,
// and each CTA of stage 17 fetches it from L2 on its own. A thread-block cluster
// (common/cluster.cuh) launches two CTAs together on neighbouring SMs, which can write
// each other's shared memory: each CTA's producer loads half of B's slabs with
// multicast (common/tma.cuh), and the copy engine writes them into both CTAs' rings. L2
// serves 32 KB per CTA and K tile instead of 48.
//
// What changed since stage 17 (a template argument, ClusterM = 2, and the code it turns on
// in 17_warp_specialized.cuh): the cluster takes a "stack" of two tiles; a stage is free
// only when the consumers of both CTAs are done with it, so each consumer arrives on the
// empty barrier of every CTA of the cluster (mapa + a remote mbarrier arrive); barrier
// inits are fenced for the cluster and the CTAs meet (barrier.cluster) before they start
// and before they leave, so that neither writes into a CTA that has gone.
//
// Prediction: if L2 still limits, 3-5 % over stage 17.
//
// Measured on the H100 (make results): 617.2 TFLOPS at N = 4096, 90.4 % of cuBLAS BF16
// (90.9 % in turns), 63.6 % of the wgmma ceiling; 678.2 at 8192, 96.0 % (95.2 % in
// turns); 695.4 at 16384, 99.1 %: 3-4 points below stage 17, not above it. With the same
// cluster and each CTA loading all of B itself, 91.2 % at 4096, as with multicast: L2 is
// not what limits this kernel (its tiles are 128x256 against stage 14's 128x128 blocks,
// and the C stores cost more). What the cluster costs is, most likely, that its two CTAs
// start, share stages and end together, so the slower sets the pace of both (not
// measured). It pays off with stage 19, whose CTAs stay on their SMs.
//
// A first version arrived on the other CTA's barrier with the .release.cluster form, which
// orders all of the thread's earlier memory accesses at cluster scope: 42.8 % of cuBLAS,
// half of this. wgmma_wait_group already orders what the arrive hands over.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "17_warp_specialized.cuh"

namespace sgemm {

void launch_clusters(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                     cudaStream_t stream) {
    launch_warp_specialized_kernel<WarpSpecializedConfig<128, 256, 4, 2, CStores::kFromRegisters, Schedule::kOneTilePerCta>>(
        problem, a, b, c, 16, stream);
}

}  // namespace sgemm

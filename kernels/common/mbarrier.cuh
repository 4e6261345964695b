// mbarrier (sm_80+; the transaction count and cluster forms sm_90): a 64-bit barrier
// object in shared memory that counts arrivals, and on Hopper also bytes. A phase
// completes when the expected number of threads have arrived and every byte announced
// with expect_tx has landed; waiters name the phase by its parity (0, 1, 0, ...). The
// TMA copies of tma.cuh complete on one: the copy engine counts its bytes against it.
#pragma once

#include <cstdint>

#include "cp_async.cuh"

namespace sgemm {

// mbarrier.init.shared::cta.b64: `arrivals` threads (or arrive calls) complete a phase.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* barrier, unsigned arrivals) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals));
#endif
}

// fence.mbarrier_init.release.cluster: makes this thread's mbarrier_init visible to the
// copy engine and to the other CTAs of the cluster (a barrier must follow).
__device__ __forceinline__ void fence_mbarrier_init() {
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// The barrier pairs of a ring of `stages` stages, by thread 0 of the CTA: full[s] completes
// with one arrival (the producer's, announcing the stage's bytes) once the bytes have
// landed; empty[s] with `consumer_arrivals`, one from each consumer that reads stage s (in
// every CTA of a cluster that multicasts into it). A CTA or cluster barrier must follow.
__device__ __forceinline__ void init_ring_barriers(std::uint64_t* full, std::uint64_t* empty, int stages,
                                                   unsigned consumer_arrivals) {
    if (threadIdx.x == 0) {
        for (int stage = 0; stage < stages; ++stage) {
            mbarrier_init(&full[stage], 1);
            mbarrier_init(&empty[stage], consumer_arrivals);
        }
        fence_mbarrier_init();
    }
}

// mbarrier.arrive.expect_tx.shared::cta.b64: arrive, and announce `bytes` more bytes
// that must land before the phase completes.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* barrier, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)),
                 "r"(bytes)
                 : "memory");
#endif
}

// mbarrier.arrive.shared::cta.b64: one arrival on this CTA's barrier.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* barrier) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
#endif
}

// mapa + mbarrier.arrive.shared::cluster.b64: one arrival on the barrier at the same
// place in the shared memory of CTA `cta_rank` of this cluster (this CTA included). Its
// ordering is the default, release at CTA scope: enough where what it hands over was read
// by wgmma and finished by wgmma_wait_group. The .release.cluster form orders every
// earlier memory access of the thread at cluster scope, and halved stage 18's speed.
__device__ __forceinline__ void mbarrier_arrive_in_cta(std::uint64_t* barrier, unsigned cta_rank) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(shared_address(barrier)),
        "r"(cta_rank)
        : "memory");
#endif
}

// The same by the threads where `arrive` holds, as one predicated instruction (@p mbarrier.arrive):
// no branch, so that ptxas, which serializes wgmmas where a branch follows reads of their
// accumulators (warning C7514), keeps them asynchronous.
__device__ __forceinline__ void mbarrier_arrive_in_cta_if(std::uint64_t* barrier, unsigned cta_rank, bool arrive) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n.reg .b32 remote;\n.reg .pred arrive;\n"
        "setp.ne.b32 arrive, %2, 0;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "@arrive mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(shared_address(barrier)),
        "r"(cta_rank), "r"(int{arrive})
        : "memory");
#endif
}

// mbarrier.try_wait.parity.shared::cta.b64 in a loop: returns once the phase of parity
// `phase` has completed. A fresh barrier is in phase 0, and the phase "before" it,
// parity 1, counts as completed: a producer waiting for free buffers starts at parity 1.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* barrier, unsigned phase) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n.reg .pred done;\n"
        "wait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait;\n}\n" ::"r"(shared_address(barrier)),
        "r"(phase)
        : "memory");
#endif
}

}  // namespace sgemm

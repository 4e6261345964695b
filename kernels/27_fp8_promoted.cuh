// Stage 27's KLoop (read 27_fp8_promoted.cu first): each K block's four wgmmas start from
// zero, and their sums are added, scaled, into FP32 registers of the consumer's own. How a K
// block's sums are scaled is the loop's Scales: one factor for the whole tile here
// (TensorScales); stage 28's blocks define theirs.
#pragma once

#include "26_fp8_tensor_scale.cuh"

namespace sgemm {

// A Scales policy says what the producer loads into each stage for it (scale_maps,
// kStageScaleBytes, load_stage_scales, kReleasingWarps: as a KLoop's) and gives, for a
// consumer's 64 rows of a tile, each K block's factors:
//   Factors<Config>(operands, shape, tile, part): where the scales of the consumer's part of
//     the tile are (`part` from the tile's corner);
//   load(stage_scales, kb): this thread's factors of K block kb (or where they lie in the
//     stage), read as the block's wgmmas are issued (its stage is full), used once they are
//     done;
//   promote(sums, block, factors): sums += block times its factors (before the stage is freed);
//   finish(sums): what is left to apply once the tile is done.
struct TensorScales : NoStageScales {
    template <class Config>
    struct Factors {
        struct OfBlock {};
        float scale;
        __device__ Factors(const Fp8Operands& operands, const GemmShape&, TileOrigin, TileOrigin)
            : scale(*operands.a_scales * *operands.b_scales) {}
        __device__ OfBlock load(const float*, int) const { return {}; }
        __device__ void promote(float (&sums)[Config::kColumnsPerConsumer / 2], const float (&block)[Config::kColumnsPerConsumer / 2],
                                OfBlock) const {
#pragma unroll
            for (int i = 0; i < Config::kColumnsPerConsumer / 2; ++i) sums[i] += block[i];
        }
        __device__ void finish(float (&sums)[Config::kColumnsPerConsumer / 2]) const {
#pragma unroll
            for (int i = 0; i < Config::kColumnsPerConsumer / 2; ++i) sums[i] *= scale;
        }
    };
};

// Promotion: a K block's 128 products summed by the MMA alone, then added into FP32. Two sets
// of block registers take turns (even and odd K blocks), so that a consumer's next K block is
// on the tensor cores while it adds the last one in.
template <class Scales>
struct PromotedAccumulation {
    static constexpr int kReleasingWarps = Scales::kReleasingWarps;
    template <class Config>
    static Fp8ScaleMaps scale_maps(const GemmShape& shape, const Fp8Operands& operands) {
        return Scales::template scale_maps<Config>(shape, operands);
    }
    template <class Config>
    static constexpr int kStageScaleBytes = Scales::template kStageScaleBytes<Config>;
    template <class Config>
    __device__ static void load_stage_scales(void* stage_scales, const Fp8ScaleMaps& maps, TileOrigin tile, int kb,
                                             std::uint64_t* full) {
        Scales::template load_stage_scales<Config>(stage_scales, maps, tile, kb, full);
    }

    template <class Config>
    struct Consumer {
        static constexpr int kColumns = Config::kColumnsPerConsumer, kValues = kColumns / 2;
        float even[kValues], odd[kValues];
        float totals[kValues];
        const Fp8Operands operands;
        const GemmShape shape;

        __device__ Consumer(const Fp8Operands& operands_, const GemmShape& shape_)
            : operands(operands_), shape(shape_) {}

        template <class Ring>
        __device__ void run_tile(const Ring& ring, typename Ring::Slot& slot, int k_blocks, TileOrigin tile,
                                 TileOrigin part) {
            using Factors = typename Scales::template Factors<Config>;
            using OfBlock = typename Factors::OfBlock;
            using Slot = typename Ring::Slot;
            const Factors factors(operands, shape, tile, part);
#pragma unroll
            for (int i = 0; i < kValues; ++i) totals[i] = 0.0f;
            // The next K block onto the tensor cores, into `block`; its factors and its place
            // in the ring to `factors_of` and `slot_of`.
            const auto issue = [&](float(&block)[kValues], int kb, OfBlock& factors_of, Slot& slot_of) {
                ring.wait(slot);
                factors_of = factors.load(ring.scales(slot), kb);
                multiply_fp8_k_block<kColumns>(block, ring.a(slot), ring.b(slot), part, true);
                slot_of = slot;
                slot = slot.next();
            };
            // Its sums, once wgmma_wait_group has seen them done, into the totals; then its stage
            // is free.
            const auto add = [&](float(&block)[kValues], const OfBlock& factors_of, Slot slot_of) {
                wgmma_fence_accumulators(block);
                factors.promote(totals, block, factors_of);
                ring.release(slot_of);
            };
            // Every wait leaves the block just issued running. (In this shape ptxas keeps the
            // wgmmas asynchronous; a loop with the wait's count chosen at run time had them
            // serialized, warning C7514.)
            if (k_blocks > 0) {
                int kb = 0;
                OfBlock factors_even, factors_odd;
                Slot slot_even, slot_odd;
                issue(even, 0, factors_even, slot_even);
                for (; kb + 2 < k_blocks; kb += 2) {
                    issue(odd, kb + 1, factors_odd, slot_odd);
                    wgmma_wait_group<1>();
                    add(even, factors_even, slot_even);
                    issue(even, kb + 2, factors_even, slot_even);
                    wgmma_wait_group<1>();
                    add(odd, factors_odd, slot_odd);
                }
                if (kb + 1 < k_blocks) {
                    issue(odd, kb + 1, factors_odd, slot_odd);
                    wgmma_wait_group<1>();
                    add(even, factors_even, slot_even);
                    wgmma_wait_group<0>();
                    add(odd, factors_odd, slot_odd);
                } else {
                    wgmma_wait_group<0>();
                    add(even, factors_even, slot_even);
                }
            }
            factors.finish(totals);
        }
        __device__ float* sums() { return totals; }
    };
};

}  // namespace sgemm

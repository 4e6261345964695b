// Stage 27's KLoop (read 27_fp8_promoted.cu first): each K block's four wgmmas start from
// zero, and their sums are added, scaled, into FP32 registers of the consumer's own. How a K
// block's sums are scaled is the loop's Scales: one factor for the whole tile here
// (TensorScales); stage 28's blocks define theirs.
#pragma once

#include "26_fp8_tensor_scale.cuh"

namespace sgemm {

// A Scales policy says what the producer copies into each stage for it
// (stage_scale_bytes, copy_stage_scales: as a KLoop's) and gives, for a consumer's 64 rows of a
// tile, each K block's factors:
//   Factors<Config>(operands, shape, tile, part): where the scales of the consumer's part of
//     the tile are (`part` from the tile's corner);
//   load(stage_scales, kb): this thread's factors of K block kb (or where they lie in the
//     stage), asked for as the block's wgmmas are issued, used once they are done;
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
    template <class Config>
    __device__ static int stage_scale_bytes(const GemmShape& shape, TileOrigin tile) {
        return Scales::template stage_scale_bytes<Config>(shape, tile);
    }
    template <class Config>
    __device__ static void copy_stage_scales(void* stage_scales, const Fp8Operands& operands, const GemmShape& shape,
                                             TileOrigin tile, int kb, std::uint64_t* full) {
        Scales::template copy_stage_scales<Config>(stage_scales, operands, shape, tile, kb, full);
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
        __device__ void run_tile(const Ring& ring, int& passed, int k_blocks, TileOrigin tile, TileOrigin part) {
            using Factors = typename Scales::template Factors<Config>;
            using OfBlock = typename Factors::OfBlock;
            const Factors factors(operands, shape, tile, part);
#pragma unroll
            for (int i = 0; i < kValues; ++i) totals[i] = 0.0f;
            // K block kb (counted from the tile's first) onto the tensor cores, into `block`.
            const auto issue = [&](float(&block)[kValues], int kb) {
                ring.wait(passed + kb);
                const OfBlock block_factors = factors.load(ring.scales(passed + kb), kb);
                multiply_fp8_k_block<kColumns>(block, ring.a(passed + kb), ring.b(passed + kb), part, true);
                return block_factors;
            };
            // Its sums, once wgmma_wait_group has seen them done, into the totals; then its stage
            // is free.
            const auto add = [&](float(&block)[kValues], int kb, const OfBlock& block_factors) {
                wgmma_fence_accumulators(block);
                factors.promote(totals, block, block_factors);
                ring.release(passed + kb);
            };
            // Every wait leaves the block just issued running. (In this shape ptxas keeps the
            // wgmmas asynchronous; a loop with the wait's count chosen at run time had them
            // serialized, warning C7514.)
            if (k_blocks > 0) {
                int kb = 0;
                OfBlock factors_even = issue(even, 0), factors_odd;
                for (; kb + 2 < k_blocks; kb += 2) {
                    factors_odd = issue(odd, kb + 1);
                    wgmma_wait_group<1>();
                    add(even, kb, factors_even);
                    factors_even = issue(even, kb + 2);
                    wgmma_wait_group<1>();
                    add(odd, kb + 1, factors_odd);
                }
                if (kb + 1 < k_blocks) {
                    factors_odd = issue(odd, kb + 1);
                    wgmma_wait_group<1>();
                    add(even, kb, factors_even);
                    wgmma_wait_group<0>();
                    add(odd, kb + 1, factors_odd);
                } else {
                    wgmma_wait_group<0>();
                    add(even, kb, factors_even);
                }
                passed += k_blocks;
            }
            factors.finish(totals);
        }
        __device__ float* sums() { return totals; }
    };
};

}  // namespace sgemm

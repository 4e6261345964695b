// Stage 28's Scales (read 28_fp8_block_scaled.cu first) for stage 27's promotion: the
// factors of each K block, a row's scale of A times a column's scale of B, applied as the
// block's sums are added into FP32. Where the scales lie: common/fp8_problem.hpp.
#pragma once

#include "27_fp8_promoted.cuh"

namespace sgemm {

// A 1 x 128 layout of scales ([K / 128][rows or columns padded to 4], fp8_problem.hpp) as a
// tensor map: a K block's scales of a tile's kBox rows (or columns) are one row of a box,
// which TMA loads into the stage as it loads A and B (beyond the matrix, zeros). (Copied
// without a tensor map, cp.async.bulk, A's scales cost 9 points of cuBLASLt at 4096:
// docs/notes/27_fp8_promoted.md.)
template <int kBox>
CUtensorMap row_scales_map(const float* scales, int k, int rows) {
    return make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, scales, ceil_div(k, kFp8ScaleBlock), ceil_div(rows, 4) * 4,
                           1, kBox, CU_TENSOR_MAP_SWIZZLE_NONE);
}

// A's 1 x 128 scales of the tile's rows for K block kb, loaded into the stage's first kBytes,
// and this thread's two rows of a consumer's 64 (wgmma's layout: 16 w + t / 4 and 8 further):
// A's part of every Scales here. A stage's scales of B follow A's, at kBytes.
template <class Config>
struct RowScalesOfA {
    static constexpr int kBytes = Config::kBlockM * 4;
    static CUtensorMap map(const GemmShape& shape, const Fp8Operands& operands) {
        return row_scales_map<Config::kBlockM>(operands.a_scales, shape.k, shape.m);
    }
    __device__ static void load(float* stage_scales, const CUtensorMap* map, TileOrigin tile, int kb,
                                std::uint64_t* full) {
        tma_load_2d(stage_scales, map, tile.row, kb, full);
    }

    int row[2];  // in the tile
    __device__ explicit RowScalesOfA(TileOrigin part) {
#pragma unroll
        for (int half = 0; half < 2; ++half)
            row[half] = part.row + wgmma_accumulator_position(threadIdx.x % 128, 0, half).row;
    }
};

// The recipe: A 1 x 128, B 128 x 128. A tile's columns lie in at most two of B's blocks
// (kBlockN <= 128, or a tile that straddles a 128-column boundary): each thread loads both
// blocks' scales from global memory as it issues the K block (they are used once its wgmmas are
// done), and takes, for each of its 8-column groups, the one of its side.
struct RowAndBlockScales {
    static constexpr int kReleasingWarps = 1;
    template <class Config>
    static Fp8ScaleMaps scale_maps(const GemmShape& shape, const Fp8Operands& operands) {
        return {RowScalesOfA<Config>::map(shape, operands), {}};
    }
    template <class Config>
    static constexpr int kStageScaleBytes = RowScalesOfA<Config>::kBytes;
    template <class Config>
    __device__ static void load_stage_scales(void* stage_scales, const Fp8ScaleMaps& maps, TileOrigin tile, int kb,
                                             std::uint64_t* full) {
        RowScalesOfA<Config>::load(static_cast<float*>(stage_scales), &maps.a, tile, kb, full);
    }

    template <class Config>
    struct Factors {
        static_assert(Config::kScaleBytes >= RowScalesOfA<Config>::kBytes, "a stage holds A's scales");
        struct OfBlock {
            float a[2], b[2];  // the thread's two rows' scales of A; B's of the part's one or two blocks
        };
        RowScalesOfA<Config> a;
        const float* b_scales;
        int b_blocks_padded;
        int b_block[2];
        int first_in_second;  // the consumer's first column in its second block of B, from its first

        __device__ Factors(const Fp8Operands& operands, const GemmShape& shape, TileOrigin tile, TileOrigin part)
            : a(part), b_scales(operands.b_scales), b_blocks_padded(ceil_div(ceil_div(shape.k, kFp8ScaleBlock), 4) * 4) {
            const int first_column = tile.col + part.col, last_block = (shape.n - 1) / kFp8ScaleBlock;
            b_block[0] = first_column / kFp8ScaleBlock;
            b_block[1] = min(b_block[0] + 1, last_block);
            first_in_second = (b_block[0] + 1) * kFp8ScaleBlock - first_column;
            static_assert(Config::kColumnsPerConsumer <= kFp8ScaleBlock + 8, "a part straddles at most two of B's blocks");
        }
        // Read as the block is issued, a K block before they are used: the loads' latency
        // passes under the wgmmas (read at promotion, A's stalled it on every K block).
        __device__ OfBlock load(const float* stage_scales, int kb) const {
            OfBlock factors{{stage_scales[a.row[0]], stage_scales[a.row[1]]}, {}};
#pragma unroll
            for (int side = 0; side < 2; ++side)
                factors.b[side] = __ldg(b_scales + static_cast<std::size_t>(b_block[side]) * b_blocks_padded + kb);
            return factors;
        }
        __device__ void promote(float (&sums)[Config::kColumnsPerConsumer / 2], const float (&block)[Config::kColumnsPerConsumer / 2],
                                const OfBlock& factors) const {
            const float top_first = factors.a[0] * factors.b[0], top_second = factors.a[0] * factors.b[1];
            const float bottom_first = factors.a[1] * factors.b[0], bottom_second = factors.a[1] * factors.b[1];
            // Each 8-column group lies on one side of the boundary (N and the tiles are
            // multiples of 8). Selects, not an array indexed by the side: that went to local
            // memory.
#pragma unroll
            for (int j = 0; j < Config::kColumnsPerConsumer / 8; ++j) {
                const bool second = 8 * j >= first_in_second;
                const float top = second ? top_second : top_first, bottom = second ? bottom_second : bottom_first;
                sums[4 * j + 0] = fmaf(block[4 * j + 0], top, sums[4 * j + 0]);
                sums[4 * j + 1] = fmaf(block[4 * j + 1], top, sums[4 * j + 1]);
                sums[4 * j + 2] = fmaf(block[4 * j + 2], bottom, sums[4 * j + 2]);
                sums[4 * j + 3] = fmaf(block[4 * j + 3], bottom, sums[4 * j + 3]);
            }
        }
        __device__ void finish(float (&)[Config::kColumnsPerConsumer / 2]) const {}
    };
};

// A and B 1 x 128: a factor for each of the thread's rows times each of its columns. B's scales
// of the tile's columns come with the stage too, after A's; each thread reads its columns' as
// pairs when it promotes.
struct RowAndRowScales {
    // Each warp frees the stage once it has promoted: the warpgroup's first thread alone freed
    // it while the other warps might still read their columns' scales there, and under
    // compute-sanitizer, which spreads the warps apart, the next K block's overwrote them (a
    // barrier of the warpgroup before its first thread frees it cost stage 29 up to 2.4 points).
    static constexpr int kReleasingWarps = 4;
    template <class Config>
    static constexpr int kBytes = RowScalesOfA<Config>::kBytes + Config::kBlockN * 4;
    template <class Config>
    static Fp8ScaleMaps scale_maps(const GemmShape& shape, const Fp8Operands& operands) {
        return {RowScalesOfA<Config>::map(shape, operands),
                row_scales_map<Config::kBlockN>(operands.b_scales, shape.k, shape.n)};
    }
    template <class Config>
    static constexpr int kStageScaleBytes = kBytes<Config>;
    template <class Config>
    __device__ static void load_stage_scales(void* stage_scales, const Fp8ScaleMaps& maps, TileOrigin tile, int kb,
                                             std::uint64_t* full) {
        float* const scales = static_cast<float*>(stage_scales);
        RowScalesOfA<Config>::load(scales, &maps.a, tile, kb, full);
        tma_load_2d(scales + Config::kBlockM, &maps.b, tile.col, kb, full);
    }

    template <class Config>
    struct Factors {
        static_assert(Config::kScaleBytes >= kBytes<Config>, "a stage holds A's and B's scales");
        static constexpr int kPairs = Config::kColumnsPerConsumer / 8;
        struct OfBlock {
            const float* stage;
            float a[2];  // the thread's two rows' scales of A, read as the block is issued
        };
        RowScalesOfA<Config> a;
        int first_column;  // this thread's first column in the tile

        __device__ Factors(const Fp8Operands&, const GemmShape&, TileOrigin, TileOrigin part)
            : a(part), first_column(part.col + wgmma_accumulator_position(threadIdx.x % 128, 0, 0).column) {}
        __device__ OfBlock load(const float* stage_scales, int) const {
            return {stage_scales, {stage_scales[a.row[0]], stage_scales[a.row[1]]}};
        }
        __device__ void promote(float (&sums)[Config::kColumnsPerConsumer / 2], const float (&block)[Config::kColumnsPerConsumer / 2],
                                const OfBlock& factors) const {
            const float (&a_scale)[2] = factors.a;
            const float* const b_scale = factors.stage + Config::kBlockM + first_column;
#pragma unroll
            for (int j = 0; j < kPairs; ++j) {
                const float2 b = *reinterpret_cast<const float2*>(b_scale + 8 * j);
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    float& even = sums[4 * j + 2 * half];
                    float& odd = sums[4 * j + 2 * half + 1];
                    even = fmaf(block[4 * j + 2 * half], a_scale[half] * b.x, even);
                    odd = fmaf(block[4 * j + 2 * half + 1], a_scale[half] * b.y, odd);
                }
            }
        }
        __device__ void finish(float (&)[Config::kColumnsPerConsumer / 2]) const {}
    };
};

}  // namespace sgemm

// The split in registers of stages 23 and 24 (read 23_split_in_registers.cu first): a
// consumer's fragment of one K tile of the operand that wgmma takes from registers (B^T in
// stage 23, A in stage 24), each row scaled by its own power of two, which the four threads
// that hold the row's 64 values find together, and split into fp16 hi and lo parts.
#pragma once

#include <cuda_fp16.h>

#include <type_traits>

#include "common/fp32_split.cuh"

namespace sgemm {
// For the kernels' sm_90a bodies (other targets compile them empty).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A consumer's fragment of one K tile of the operand X in registers (B^T in stage 23, A in
// 24): four k16 steps of the m16n8k16 A layout, the thread's two rows (h = 0, 1) and four
// values of K each, as values[step][p + 2 h + 4 q] = X(row h, k = 16 step + 2 (t % 4) + p + 8 q).
using TileFragment = float[4][8];

// Each row's scaling for one K tile: what the quad of threads that holds its 64 values
// finds together. leave: the row goes to the fallback (its values are split as zeros).
struct RowScaling {
    float scale[2];    // 2^e, or 0 where the row is left
    float unscale[2];  // 2^-e, or 0
    bool leave[2];
};

__device__ __forceinline__ RowScaling tile_row_scaling(const TileFragment& values) {
    RowScaling out;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        // Magnitudes as bits: NaN above Inf above every finite value; smallest nonzero as
        // bits - 1, so that zero (-1: the largest unsigned) never wins the minimum.
        // Pairwise, a tree of depth 4 rather than a chain of 16 dependent steps: with two
        // warps a scheduler, the chain's latency would show.
        unsigned largest_of[16], smallest_of[16];
#pragma unroll
        for (int step = 0; step < 4; ++step)
#pragma unroll
            for (int q = 0; q < 2; ++q)
#pragma unroll
                for (int p = 0; p < 2; ++p) {
                    const unsigned bits = __float_as_uint(values[step][p + 2 * h + 4 * q]) & 0x7fffffffu;
                    largest_of[4 * step + 2 * q + p] = bits;
                    smallest_of[4 * step + 2 * q + p] = bits - 1;
                }
        const auto fold = [&](auto width) {  // entry i takes in entry i + width
#pragma unroll
            for (int i = 0; i < decltype(width)::value; ++i) {
                largest_of[i] = max(largest_of[i], largest_of[i + decltype(width)::value]);
                smallest_of[i] = min(smallest_of[i], smallest_of[i + decltype(width)::value]);
            }
        };
        fold(std::integral_constant<int, 8>{});
        fold(std::integral_constant<int, 4>{});
        fold(std::integral_constant<int, 2>{});
        fold(std::integral_constant<int, 1>{});
        unsigned largest = largest_of[0], smallest_less_one = smallest_of[0];
#pragma unroll
        for (int offset = 1; offset < 4; offset *= 2) {
            largest = max(largest, __shfl_xor_sync(0xffffffffu, largest, offset));
            smallest_less_one = min(smallest_less_one, __shfl_xor_sync(0xffffffffu, smallest_less_one, offset));
        }
        const bool non_finite = largest > 0x7f7fffffu;
        // scaling_exponent for a normal largest: 15 - (its frexp exponent, biased - 126).
        const int exponent = largest == 0 ? 0 : 141 - static_cast<int>(largest >> 23);
        const bool has_nonzero = smallest_less_one != ~0u;
        const bool too_wide = has_nonzero && __uint_as_float(smallest_less_one + 1) <
                                                 __uint_as_float(largest) * 0x1p-28f;
        out.leave[h] = non_finite || too_wide || exponent < -63 || exponent > 63;
        out.scale[h] = out.leave[h] ? 0.0f : power_of_two(exponent);
        out.unscale[h] = out.leave[h] ? 0.0f : power_of_two(-exponent);
    }
    return out;
}

// The fragment scaled and split into fp16 parts, as wgmma's A registers of each k16 step
// (stage 22's split: x = hi + 2^-11 lo).
struct SplitFragment {
    unsigned hi[4][4];
    unsigned lo[4][4];
};

__device__ __forceinline__ SplitFragment split_fragment(const TileFragment& values, const RowScaling& scaling) {
    SplitFragment out;
#pragma unroll
    for (int step = 0; step < 4; ++step)
#pragma unroll
        for (int r = 0; r < 4; ++r) {  // register r holds the pair p = 0, 1 of h = r % 2, q = r / 2
            const int h = r % 2;
            float x[2];
#pragma unroll
            for (int p = 0; p < 2; ++p)
                x[p] = scaling.leave[h] ? 0.0f : values[step][2 * r + p] * scaling.scale[h];
            const __half2 hi = __floats2half2_rn(x[0], x[1]);
            const float2 hi_values = __half22float2(hi);
            const __half2 lo = __floats2half2_rn((x[0] - hi_values.x) * kF16LoScale, (x[1] - hi_values.y) * kF16LoScale);
            out.hi[step][r] = *reinterpret_cast<const unsigned*>(&hi);
            out.lo[step][r] = *reinterpret_cast<const unsigned*>(&lo);
        }
    return out;
}

// Keeps the compiler from reusing a fragment's registers before this point: wgmma reads
// them after it has been issued, until wgmma_wait_group.
__device__ __forceinline__ void keep_registers(SplitFragment& parts) {
#pragma unroll
    for (int step = 0; step < 4; ++step)
#pragma unroll
        for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(parts.hi[step][r]), "+r"(parts.lo[step][r])::"memory");
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace sgemm

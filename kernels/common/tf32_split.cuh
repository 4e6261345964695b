// FP32 values as sums of two tf32 values, for mma.sync's tf32 operands (stage 32).
//
// x = big + small + r: big is x rounded to nearest tf32 (ties away from zero: half a unit of
// tf32's last bit added to the bits, the 13 below it cleared: IADD3 and LOP3), small = x - big
// (exact) rounded the same way. Both are FP32 bit patterns with the low 13 bits zero, as
// mma.sync reads its tf32 operands. big carries 11 significant bits, small the next 11:
// |small| <= 2^-11 |x| and |r| <= 2^-22 |x|, so the product small.small, which stage 32 drops,
// is within 2^-22 of x y too. tf32 keeps FP32's exponent, so there is no scaling (stage 22's
// fp16 parts need one a row and a column), and the bounds hold for every |x| from 2^-103
// (below, small falls among the subnormals and loses bits) to 2^114. The parts of NaN, Inf
// and values outside that range mean nothing (a NaN's bits may carry into the sign): stage
// 32's check keeps those values away from the split.
#pragma once

#include "common/float_bits.hpp"

namespace sgemm {

struct Tf32Parts {
    unsigned big, small;
};

inline constexpr unsigned kTf32Bits = ~0x1FFFu;

__host__ __device__ inline unsigned tf32_rounded_bits(unsigned bits) { return (bits + 0x1000u) & kTf32Bits; }

__host__ __device__ inline Tf32Parts split_into_tf32_parts(float x) {
    const unsigned big = tf32_rounded_bits(bits_of_float(x));
    const float rest = x - float_of_bits(big);  // exact
    return Tf32Parts{big, tf32_rounded_bits(bits_of_float(rest))};
}

}  // namespace sgemm

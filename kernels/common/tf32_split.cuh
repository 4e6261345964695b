// FP32 values as sums of two tf32 values, for mma.sync's tf32 operands (stage 32).
//
// x = big + small + r: big is x rounded to 11 significant bits by Veltkamp's split
// (s = x (2^13 + 1), big = s - (s - x): three FP32 instructions), small = x - big (exact)
// rounded to nearest tf32, ties away from zero (half a unit added, the low 13 bits cleared:
// IADD3 and LOP3). Both are FP32 bit patterns with the low 13 bits zero, as mma.sync reads
// its tf32 operands. big carries 11 significant bits, small the next 11: |small| <= 2^-11 |x|
// and |r| <= 2^-22 |x|, so the product small.small, which the kernel drops, is within 2^-22
// of x y too. tf32 keeps FP32's exponent, so there is no scaling (stage 22's fp16 parts need
// one a row and a column), and the bounds hold for every |x| from 2^-103 (below, small falls
// among the subnormals and loses bits) to 2^114 (near 2^115, x (2^13 + 1) overflows). Inf,
// NaN and values that large make big NaN, so that every product with them is NaN: the
// kernel's check sees it.
#pragma once

#include <cstring>

namespace sgemm {

struct Tf32Parts {
    unsigned big, small;
};

__host__ __device__ inline float float_of_bits(unsigned bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

__host__ __device__ inline unsigned bits_of_float(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    unsigned bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
#endif
}

inline constexpr unsigned kTf32Bits = ~0x1FFFu;
inline constexpr float kVeltkampSplitter = 8193.0f;  // 2^13 + 1: 24 - 13 = 11 bits stay in big

__host__ __device__ inline Tf32Parts split_into_tf32_parts(float x) {
#if defined(__CUDA_ARCH__)
    const float scaled = __fmul_rn(x, kVeltkampSplitter);
    const float big = __fsub_rn(scaled, __fsub_rn(scaled, x));
#else
    const float scaled = x * kVeltkampSplitter;
    const float big = scaled - (scaled - x);
#endif
    const float rest = x - big;  // exact; finite wherever big is
    return Tf32Parts{bits_of_float(big), (bits_of_float(rest) + 0x1000u) & kTf32Bits};
}

}  // namespace sgemm

// The last step of every stage: C = alpha * acc + beta * C.
//
// BLAS semantics: when beta == 0 the old C is never read. That is not an
// optimization: C may hold garbage (the driver fills it with NaN), and
// 0 * NaN is NaN.
#pragma once

namespace sgemm {

__device__ __forceinline__ float scale_and_accumulate(float acc, float alpha, float beta,
                                                      const float& c_old) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * c_old;
}

}  // namespace sgemm

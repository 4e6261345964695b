// Filling device buffers: random inputs, NaN poison, and the float -> double copies
// the float64 reference is computed from.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace sgemm {

// Uniform in [-1, 1), a pure function of (seed, index): the same seed gives the same
// matrix on any GPU. Values are multiples of 2^-23, exact in float, bf16-friendly.
void fill_uniform(float* data, std::size_t count, std::uint64_t seed, cudaStream_t stream);

void fill_nan(float* data, std::size_t count, cudaStream_t stream);

// rounded[i] = data[i] rounded to bf16 (to nearest, ties to even), and data[i] set to
// that same value, so that the float copy is exactly what a bf16 stage multiplies.
void round_to_bf16(float* data, __nv_bfloat16* rounded, std::size_t count, cudaStream_t stream);

// out[i] = in[i], or |in[i]| when `absolute`; exact (every float is a double).
void widen_to_double(const float* in, double* out, std::size_t count, bool absolute,
                     cudaStream_t stream);

}  // namespace sgemm

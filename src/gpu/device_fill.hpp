// Filling device buffers: NaN poison, bf16 rounding, the float -> double copies the
// float64 reference is computed from (the random inputs: verification/input_data.hpp),
// and BLAS's scaling of C by beta.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace sgemm {

// Grid-stride fills: kFillThreads a block, fill_blocks(count) blocks (at most 4096).
constexpr int kFillThreads = 256;
int fill_blocks(std::size_t count);

void fill_nan(float* data, std::size_t count, cudaStream_t stream);
void fill_nan(__nv_bfloat16* data, std::size_t count, cudaStream_t stream);

// rounded[i] = data[i] rounded to bf16 (to nearest, ties to even), and data[i] set to
// that same value, so that the float copy is exactly what a bf16 stage multiplies.
void round_to_bf16(float* data, __nv_bfloat16* rounded, std::size_t count, cudaStream_t stream);

// out[i] = in[i], or |in[i]| when `absolute`; exact (every float is a double).
void widen_to_double(const float* in, double* out, std::size_t count, bool absolute,
                     cudaStream_t stream);

// data[i] = factor * data[i], as BLAS scales C by beta: where factor == 0, zeros, and data
// is not read (it may hold NaN).
void scale_by(float* data, std::size_t count, float factor, cudaStream_t stream);
void scale_by(double* data, std::size_t count, double factor, cudaStream_t stream);
// bf16 data, scaled in FP32 and rounded to nearest.
void scale_by(__nv_bfloat16* data, std::size_t count, float factor, cudaStream_t stream);

}  // namespace sgemm

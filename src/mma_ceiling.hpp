// The throughput ceiling of mma.sync m16n8k16 (bf16 in, FP32 accumulate) on this GPU,
// measured: every warp of a full grid runs independent mma.sync instructions on
// registers, with no memory traffic. The bf16 stages report their fraction of it.
#pragma once

#include <cuda_runtime.h>

namespace sgemm {

// TFLOPS; needs sm_80 or newer.
double measure_mma_bf16_tflops(int sm_count, cudaStream_t stream);

}  // namespace sgemm

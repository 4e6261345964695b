// The one problem every stage solves, and the signature every stage's launcher has.
//
//   C = alpha * A * B + beta * C      row-major: A is M x K, B is K x N, C is M x N
//
// As in BLAS, beta == 0 means C is not read at all: the driver poisons C with NaN
// before a run, so a stage that reads C anyway produces NaN and fails verification.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace sgemm {

struct GemmShape {
    int m = 0;
    int n = 0;
    int k = 0;
};

struct GemmProblem {
    GemmShape shape;
    float alpha = 1.0f;
    float beta = 0.0f;
};

// Every fp32 stage exposes one of these; it only enqueues work on `stream`.
using Fp32Launcher = void (*)(const GemmProblem& problem, const float* a, const float* b,
                              float* c, cudaStream_t stream);

// The bf16 stages take A and B already rounded to bf16 (the driver does it once,
// untimed); they accumulate in FP32 and read and write FP32 C.
using Bf16Launcher = void (*)(const GemmProblem& problem, const __nv_bfloat16* a,
                              const __nv_bfloat16* b, float* c, cudaStream_t stream);

// The same writing C in bf16, rounded to nearest (and reading it so where beta != 0): the
// problem a transformer layer runs (sgemm --c-type bf16; stages 19 and 20).
using Bf16OutputLauncher = void (*)(const GemmProblem& problem, const __nv_bfloat16* a,
                                    const __nv_bfloat16* b, __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm

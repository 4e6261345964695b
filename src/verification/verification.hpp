// One checked run of a stage: the stage and cuBLAS each compute C once from the same
// inputs, and both are compared against a float64 reference (cuBLAS DGEMM on the
// same inputs, widened exactly), within the budget of error_budget.hpp.
#pragma once

#include <functional>

#include "driver/stage.hpp"
#include "gpu/cublas_gemm.hpp"
#include "verification/error_budget.hpp"
#include "verification/gemm_inputs.hpp"

namespace sgemm {

// Enqueues C = alpha A B + beta C on the run's stream, from the run's inputs; C is of the
// inputs' c_output() type (float or __nv_bfloat16).
using GemmLaunch = std::function<void(void* c)>;

struct Verification {
    VerificationReport stage;             // the stage against float64
    VerificationReport cublas;            // cuBLAS against float64: the bar is met by the reference too
    double difference_from_cublas = 0.0;  // ||C_stage - C_cublas|| / ||C_cublas||
};

// launch_cublas is cuBLAS at the stage's precision; `cublas` computes the float64 reference.
Verification verify_against_references(const GemmProblem& problem, Precision precision,
                                       const GemmInputs& inputs, const GemmLaunch& launch_stage,
                                       const GemmLaunch& launch_cublas, const Cublas& cublas,
                                       cudaStream_t stream);

}  // namespace sgemm

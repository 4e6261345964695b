// The inputs of one FP8 run on the device (kernels/common/fp8_problem.hpp): A (M x K) and B
// drawn as the FP32 problem's are (input_data.hpp: A M x K, B K x N, from the seed as `data`
// says), B transposed to N x K as a layer stores its weight, each quantized to e4m3 in the
// scaling's blocks as the recipe does (fp8_operands.hpp, on the host), and the initial C:
// NaN where beta = 0 (poison), else drawn and rounded to bf16. The e4m3 values and the
// scales go to the device in the layouts the stages and cuBLASLt read (cublaslt_scales); the
// host keeps the quantized operands for the float64 reference.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "kernels/common/fp8_problem.hpp"
#include "verification/fp8_operands.hpp"
#include "verification/input_data.hpp"

namespace sgemm {

// A copy of the operands on the device (the graph timing method's further operand sets).
struct Fp8OperandsCopy {
    DeviceBuffer<std::uint8_t> a_values, b_values;
    DeviceBuffer<float> a_scales, b_scales;
    Fp8Operands operands() const {
        return Fp8Operands{a_values.data(), b_values.data(), a_scales.data(), b_scales.data()};
    }
};

class Fp8Inputs {
public:
    Fp8Inputs(const GemmProblem& problem, Fp8Scaling scaling, std::uint64_t seed, InputData data,
              cudaStream_t stream);

    Fp8Scaling scaling() const { return scaling_; }
    // Whether these are the inputs of `problem` (its shape, and C drawn or not) in `scaling`
    // from `seed` and `data`.
    bool made_for(const GemmProblem& problem, Fp8Scaling scaling, std::uint64_t seed, InputData data) const;
    const Fp8Operand& a() const { return a_; }
    const Fp8Operand& b() const { return b_; }
    Fp8Operands operands() const;
    Fp8OperandsCopy copy_operands(cudaStream_t stream) const;
    // The bytes one launch reads and writes at the least: A, B, their scales, D (and C).
    std::size_t operand_bytes() const;
    // C's initial values as bf16 widened, row-major; empty where beta = 0.
    const std::vector<float>& c_initial() const { return c_initial_; }
    // FP32 values of A and of B (N x K) before quantization: what the quantization error is
    // measured against.
    const std::vector<float>& a_fp32() const { return a_fp32_; }
    const std::vector<float>& b_fp32() const { return b_fp32_; }

    // D (M x N bf16) to the state every launch starts from: row-major as the stages write it,
    // or column-major as cuBLASLt does (columns cublaslt_d_rows(M) long).
    void reset_output(__nv_bfloat16* d, cudaStream_t stream) const;
    void reset_output_column_major(__nv_bfloat16* d, cudaStream_t stream) const;

private:
    GemmShape shape_;
    Fp8Scaling scaling_;
    std::uint64_t seed_;
    InputData data_;
    std::vector<float> a_fp32_, b_fp32_;
    Fp8Operand a_, b_;
    std::vector<float> c_initial_;
    DeviceBuffer<std::uint8_t> a_values_, b_values_;
    DeviceBuffer<float> a_scales_, b_scales_;
    DeviceBuffer<__nv_bfloat16> c_rows_, c_columns_;  // C's initial values, both orders (beta != 0)
};

}  // namespace sgemm

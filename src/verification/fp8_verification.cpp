#include "verification/fp8_verification.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu/device_fill.hpp"
#include "verification/host_parallel.hpp"

namespace sgemm {
namespace {

// D after one launch, as floats in row-major order.
std::vector<float> run_once(const GemmShape& shape, const Fp8Launch& launch, bool column_major,
                            const Fp8Inputs& inputs, cudaStream_t stream) {
    const std::size_t column_rows = cublaslt_d_rows(shape.m);
    DeviceBuffer<__nv_bfloat16> d((column_major ? column_rows : shape.m) * static_cast<std::size_t>(shape.n));
    if (column_major) inputs.reset_output_column_major(d.data(), stream);
    else inputs.reset_output(d.data(), stream);
    launch(d.data());
    CUDA_CHECK(cudaGetLastError());
    std::vector<__nv_bfloat16> host(d.size());
    CUDA_CHECK(cudaMemcpyAsync(host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> values(static_cast<std::size_t>(shape.m) * shape.n);
    host_chunks(static_cast<std::size_t>(shape.m), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row)
            for (std::size_t column = 0; column < static_cast<std::size_t>(shape.n); ++column)
                values[row * shape.n + column] =
                    __bfloat162float(host[column_major ? column * column_rows + row : row * shape.n + column]);
    });
    return values;
}

// Float64 values on the device.
DeviceBuffer<double> on_device(const std::vector<double>& values, cudaStream_t stream) {
    DeviceBuffer<double> device(values.size());
    CUDA_CHECK(cudaMemcpyAsync(device.data(), values.data(), device.bytes(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return device;
}

// alpha A B^T + beta C0 in float64, or with `absolute` its magnitude |alpha| |A| |B^T| + |beta|
// |C0|. BLAS's rules: alpha = 0 reads neither A nor B, beta = 0 does not read C0.
std::vector<double> float64_d(const GemmProblem& problem, const Fp8Inputs& inputs, bool absolute, const Cublas& cublas,
                              cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    const double alpha = absolute ? std::abs(double{problem.alpha}) : problem.alpha;
    const double beta = inputs.c_initial().empty() ? 0.0 : absolute ? std::abs(double{problem.beta}) : problem.beta;
    std::vector<double> c(static_cast<std::size_t>(shape.m) * shape.n, 0.0);
    for (std::size_t i = 0; i < inputs.c_initial().size(); ++i)
        c[i] = absolute ? std::abs(double{inputs.c_initial()[i]}) : inputs.c_initial()[i];
    if (alpha == 0.0) {
        for (double& value : c) value *= beta;
        return c;
    }
    DeviceBuffer<double> d(c.size());
    CUDA_CHECK(cudaMemcpyAsync(d.data(), c.data(), d.bytes(), cudaMemcpyHostToDevice, stream));
    const DeviceBuffer<double> a = on_device(as_float64(inputs.a(), absolute, false), stream);
    const DeviceBuffer<double> b = on_device(as_float64(inputs.b(), absolute, true), stream);  // K x N
    cublas.dgemm(shape, alpha, a.data(), b.data(), beta, d.data());
    CUDA_CHECK(cudaMemcpyAsync(c.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return c;
}

// The same from the FP32 values before quantization (A M x K, B N x K).
std::vector<double> float64_d_of_fp32(const GemmProblem& problem, const Fp8Inputs& inputs, bool absolute,
                                      const Cublas& cublas, cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    const double alpha = absolute ? std::abs(double{problem.alpha}) : problem.alpha;
    const double beta = inputs.c_initial().empty() ? 0.0 : absolute ? std::abs(double{problem.beta}) : problem.beta;
    std::vector<double> c(static_cast<std::size_t>(shape.m) * shape.n, 0.0);
    for (std::size_t i = 0; i < inputs.c_initial().size(); ++i)
        c[i] = absolute ? std::abs(double{inputs.c_initial()[i]}) : inputs.c_initial()[i];
    DeviceBuffer<double> d(c.size());
    CUDA_CHECK(cudaMemcpyAsync(d.data(), c.data(), d.bytes(), cudaMemcpyHostToDevice, stream));
    const DeviceBuffer<double> a = on_device(as_float64(inputs.a_fp32(), shape.m, shape.k, absolute, false), stream);
    const DeviceBuffer<double> b =
        on_device(as_float64(inputs.b_fp32(), shape.n, shape.k, absolute, true), stream);  // K x N
    cublas.dgemm(shape, alpha, a.data(), b.data(), beta, d.data());
    CUDA_CHECK(cudaMemcpyAsync(c.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return c;
}

// How far past cuBLASLt's worst error a stage with no bound of its own may go (verify_fp8).
constexpr double kUnboundedOverCublaslt = 4.0;

}  // namespace

QuantizationError fp8_quantization_error(const GemmProblem& problem, const Fp8Inputs& inputs, const Cublas& cublas,
                                         cudaStream_t stream) {
    const std::vector<double> quantized = float64_d(problem, inputs, false, cublas, stream);
    const std::vector<double> exact = float64_d_of_fp32(problem, inputs, false, cublas, stream);
    const std::vector<double> magnitude = float64_d_of_fp32(problem, inputs, true, cublas, stream);
    QuantizationError error;
    double error_squares = 0.0, exact_squares = 0.0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
        if (!std::isfinite(quantized[i]) || !std::isfinite(exact[i])) continue;
        const double difference = std::abs(quantized[i] - exact[i]);
        error_squares += difference * difference;
        exact_squares += exact[i] * exact[i];
        if (magnitude[i] > 0.0) error.worst_over_magnitude = std::max(error.worst_over_magnitude, difference / magnitude[i]);
    }
    error.normwise = exact_squares > 0.0 ? std::sqrt(error_squares / exact_squares) : std::sqrt(error_squares);
    return error;
}

Verification verify_fp8(const GemmProblem& problem, const Fp8Inputs& inputs, const ErrorBudget& budget,
                        const Fp8Launch& launch_stage, const Fp8Launch& launch_cublaslt, const Cublas& cublas,
                        cudaStream_t stream) {
    const std::vector<float> stage_d = run_once(problem.shape, launch_stage, false, inputs, stream);
    const std::vector<float> cublaslt_d = run_once(problem.shape, launch_cublaslt, true, inputs, stream);
    const std::vector<double> reference = float64_d(problem, inputs, false, cublas, stream);
    const std::vector<double> magnitude = float64_d(problem, inputs, true, cublas, stream);
    VerificationReport cublaslt = check_against_reference(cublaslt_d, reference, magnitude, budget);
    // Where the budget has no bound (sums kept in the MMA over K >= 8190), the stage is held to
    // cuBLASLt's worst error in the same mode on the same operands, four times over: the same
    // accumulator in another order of K. A K block dropped or added moves an element by about
    // 128/K of its magnitude W (1.6 % at K = 8192), several times the 13-bit accumulator's
    // error there, so the bound can fail where gamma's allows any finite value.
    ErrorBudget held = budget;
    if (!budget.bounded()) held.measured_factor = kUnboundedOverCublaslt * cublaslt.worst_error_over_magnitude;
    return Verification{
        check_against_reference(stage_d, reference, magnitude, held),
        std::move(cublaslt),
        normwise_relative_difference(stage_d, cublaslt_d),
    };
}

}  // namespace sgemm

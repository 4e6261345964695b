#include "verification/verification.hpp"

#include <cmath>
#include <vector>

#include "gpu/device_fill.hpp"

namespace sgemm {
namespace {

template <class T>
std::vector<T> copy_to_host(const DeviceBuffer<T>& buffer, cudaStream_t stream) {
    std::vector<T> host(buffer.size());
    CUDA_CHECK(cudaMemcpyAsync(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost,
                               stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
}

// C as floats (bf16 C widened, exactly).
std::vector<float> run_once(const GemmShape& shape, const GemmInputs& inputs,
                            const GemmLaunch& launch, cudaStream_t stream) {
    DeviceBuffer<float> c(element_count_c(shape));  // room for either type
    inputs.reset_output(c.data(), stream);
    launch(c.data());
    CUDA_CHECK(cudaGetLastError());
    if (inputs.c_output() == COutput::fp32) return copy_to_host(c, stream);
    std::vector<__nv_bfloat16> halves(c.size());
    CUDA_CHECK(cudaMemcpyAsync(halves.data(), c.data(), halves.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost,
                               stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> values(halves.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = __bfloat162float(halves[i]);
    return values;
}

struct Reference {
    std::vector<double> value;      // alpha A B + beta C0
    std::vector<double> magnitude;  // |alpha| |A| |B| + |beta| |C0|
};

// Both in float64: `absolute` selects |A| |B| |C0| with |alpha| and |beta|. BLAS's rules:
// alpha = 0 reads neither A nor B (R = beta C0), beta = 0 does not read C0.
std::vector<double> float64_gemm(const GemmProblem& problem, const GemmInputs& inputs,
                                 bool absolute, const Cublas& cublas, cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    DeviceBuffer<double> c(element_count_c(shape));
    double alpha = problem.alpha;
    double beta = problem.beta;
    if (absolute) {
        alpha = std::abs(alpha);
        beta = std::abs(beta);
    }
    if (inputs.c_initial() != nullptr) widen_to_double(inputs.c_initial(), c.data(), c.size(), absolute, stream);
    else beta = 0.0;  // C0 is not read
    if (alpha == 0.0) {
        scale_by(c.data(), c.size(), beta, stream);
        return copy_to_host(c, stream);
    }
    DeviceBuffer<double> a(element_count_a(shape));
    DeviceBuffer<double> b(element_count_b(shape));
    widen_to_double(inputs.a(), a.data(), a.size(), absolute, stream);
    widen_to_double(inputs.b(), b.data(), b.size(), absolute, stream);
    cublas.dgemm(shape, alpha, a.data(), b.data(), beta, c.data());
    return copy_to_host(c, stream);
}

}  // namespace

Verification verify_against_references(const GemmProblem& problem, Precision precision,
                                       const GemmInputs& inputs, const GemmLaunch& launch_stage,
                                       const GemmLaunch& launch_cublas, const Cublas& cublas,
                                       cudaStream_t stream) {
    const std::vector<float> stage_c = run_once(problem.shape, inputs, launch_stage, stream);
    const std::vector<float> cublas_c = run_once(problem.shape, inputs, launch_cublas, stream);
    const std::vector<double> reference = float64_gemm(problem, inputs, false, cublas, stream);
    const std::vector<double> magnitude = float64_gemm(problem, inputs, true, cublas, stream);

    const ErrorBudget budget{accumulator_unit_roundoff(precision), problem.shape.k,
                             inputs.c_output() == COutput::bf16 ? kBf16UnitRoundoff : 0.0};
    return Verification{
        check_against_reference(stage_c, reference, magnitude, budget),
        check_against_reference(cublas_c, reference, magnitude, budget),
        normwise_relative_difference(stage_c, cublas_c),
    };
}

}  // namespace sgemm

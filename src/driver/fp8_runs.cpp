// StageRunner's FP8 runs (stage_runner.hpp): the FP8 problem's inputs, its check against
// float64 and cuBLASLt, and its timing against cuBLASLt at the same scaling, as run_with
// does for the other precisions.
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "dispatch/fp8.hpp"
#include "driver/stage_runner.hpp"
#include "gpu/cublaslt_fp8.hpp"
#include "gpu/cuda_check.hpp"
#include "verification/fp8_verification.hpp"

namespace sgemm {
namespace {

// What a stage is held to: promoted sums, or all of K in the MMA's accumulator (as cuBLASLt's
// fast accumulation), D rounded to bf16.
ErrorBudget fp8_budget_of(const Stage& stage, int k) {
    return stage.fp8_accumulation == Fp8Accumulation::promoted ? fp8_error_budget(k) : fp8_unpromoted_error_budget(k);
}

// One operand set: the operands (the run's own, or a copy), and cuBLASLt planned for them.
// cuBLASLt takes 8-bit rows of K a multiple of 16 values only, and B's 1 x 128 scales at N a
// multiple of 8 only (CublasLtFp8::columns_for): off them, it multiplies copies of A and B
// padded with zeros to K rounded up to 16 and B's rows to its columns, B's scales laid out
// for them (made here, once, untimed: the sums are the same, the scales keep their blocks).
struct Fp8Set {
    Fp8Operands operands;
    DeviceBuffer<std::uint8_t> cublaslt_a, cublaslt_b;  // the padded copies, where needed
    DeviceBuffer<float> cublaslt_b_scales;
    const std::uint8_t* b_for_cublaslt;
    std::unique_ptr<CublasLtFp8> cublaslt;
    DeviceBuffer<__nv_bfloat16> stage_d, cublaslt_d;
};

// `rows` rows of `row_values` values (`source_pitch` apart) into zeroed rows `padded_pitch` apart,
// `padded_rows` of them.
template <class T>
DeviceBuffer<T> rows_padded(const T* source, int rows, int row_values, int source_pitch, int padded_rows,
                            int padded_pitch) {
    DeviceBuffer<T> padded(static_cast<std::size_t>(padded_rows) * padded_pitch);
    CUDA_CHECK(cudaDeviceSynchronize());  // the operands are written on the caller's stream
    CUDA_CHECK(cudaMemset(padded.data(), 0, padded.bytes()));
    CUDA_CHECK(cudaMemcpy2D(padded.data(), sizeof(T) * padded_pitch, source, sizeof(T) * source_pitch,
                            sizeof(T) * row_values, rows, cudaMemcpyDeviceToDevice));
    return padded;
}

Fp8Set make_set(const GemmProblem& problem, const Stage& stage, Fp8Scaling scaling, const Fp8Operands& operands) {
    const GemmShape& s = problem.shape;
    const std::size_t count = static_cast<std::size_t>(s.m) * s.n, cublaslt_count = static_cast<std::size_t>(cublaslt_d_rows(s.m)) * s.n;
    const int cublaslt_k = (s.k + 15) / 16 * 16, cublaslt_n = CublasLtFp8::columns_for(s.n, scaling);
    Fp8Set set{operands, {}, {}, {}, operands.b, nullptr, DeviceBuffer<__nv_bfloat16>(count),
               DeviceBuffer<__nv_bfloat16>(cublaslt_count)};
    const std::uint8_t* a = operands.a;
    const float* b_scales = operands.b_scales;
    if (cublaslt_k != s.k) {
        set.cublaslt_a = rows_padded(operands.a, s.m, s.k, s.k, s.m, cublaslt_k);
        a = set.cublaslt_a.data();
    }
    if (cublaslt_k != s.k || cublaslt_n != s.n) {
        set.cublaslt_b = rows_padded(operands.b, s.n, s.k, s.k, cublaslt_n, cublaslt_k);
        set.b_for_cublaslt = set.cublaslt_b.data();
    }
    if (cublaslt_n != s.n) {  // B's 1 x 128 scales: [K block][rows rounded up to 4], to cublaslt_n rows
        const int k_blocks = (s.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock, stride = cublaslt_scales_stride(s.n);
        set.cublaslt_b_scales = rows_padded(operands.b_scales, k_blocks, stride, stride, k_blocks, cublaslt_n);
        b_scales = set.cublaslt_b_scales.data();
    }
    set.cublaslt = std::make_unique<CublasLtFp8>(s.m, s.n, cublaslt_k, scaling, a, operands.a_scales, b_scales,
                                                 stage.fp8_accumulation == Fp8Accumulation::promoted);
    return set;
}

// Whose kernel runs the problem: the stage's, or the one the fp8 track chooses for the scaling.
KernelChoice fp8_kernel_choice(const Stage& stage, const GemmShape& shape, Fp8Scaling scaling) {
    if (stage.is_track()) return choose_fp8_kernel(shape, scaling);
    return KernelChoice{stage.number};
}

}  // namespace

StageResult StageRunner::run_fp8(const Stage& stage, const Fp8Gemm& gemm, const RunSettings& settings,
                                 const Fp8Inputs* given) const {
    const GemmProblem& problem = settings.problem;
    const cudaStream_t stream = stream_.get();
    const Fp8Scaling scaling = settings.fp8_scaling.value_or(stage.default_fp8_scaling());
    if (given && !given->made_for(problem, scaling, settings.seed, settings.data))
        throw std::invalid_argument("FP8 inputs made for another problem, scaling, seed or data");
    std::optional<Fp8Inputs> made;
    if (!given) made.emplace(problem, scaling, settings.seed, settings.data, stream);
    const Fp8Inputs& inputs = given ? *given : *made;

    StageResult result{&stage, problem, settings.seed, settings.data, std::nullopt, {}, ceiling(stage, problem.shape),
                       COutput::bf16, fp8_kernel_choice(stage, problem.shape, scaling), scaling};

    const int copies = settings.timing.method == TimingMethod::graph
                           ? graph_copies_for(inputs.operand_bytes(), device_.l2_bytes)
                           : 1;
    std::vector<Fp8OperandsCopy> more_operands;
    for (int copy = 1; copy < copies; ++copy) more_operands.push_back(inputs.copy_operands(stream));
    std::vector<Fp8Set> sets;
    for (int copy = 0; copy < copies; ++copy)
        sets.push_back(make_set(problem, stage, scaling,
                                copy == 0 ? inputs.operands() : more_operands[copy - 1].operands()));
    const auto launch_stage = [&](const Fp8Set& set, __nv_bfloat16* d) {
        if (gemm) gemm(problem, scaling, set.operands, d, stream);
        else launch_fp8_stage(stage, problem, scaling, set.operands, d, stream);
    };
    const auto launch_cublaslt = [&](const Fp8Set& set, __nv_bfloat16* d) {
        set.cublaslt->run(set.b_for_cublaslt, d, problem.alpha, problem.beta, stream);
    };

    if (settings.verify)
        result.verification = verify_fp8(
            problem, inputs, fp8_budget_of(stage, problem.shape.k),
            [&](__nv_bfloat16* d) { launch_stage(sets[0], d); }, [&](__nv_bfloat16* d) { launch_cublaslt(sets[0], d); },
            cublas_, stream);

    for (Fp8Set& set : sets) {
        inputs.reset_output(set.stage_d.data(), stream);
        inputs.reset_output_column_major(set.cublaslt_d.data(), stream);
    }
    const bool restore_d = problem.beta != 0.0f;
    result.timing = time_interleaved(
        TimedKernels{[&](int copy) { launch_stage(sets[copy], sets[copy].stage_d.data()); },
                     [&](int copy) { launch_cublaslt(sets[copy], sets[copy].cublaslt_d.data()); }, copies},
        [&] {
            if (!restore_d) return;
            inputs.reset_output(sets[0].stage_d.data(), stream);
            inputs.reset_output_column_major(sets[0].cublaslt_d.data(), stream);
        },
        settings.timing, device_.l2_bytes, stream, &clock_);
    return result;
}

void StageRunner::profile_fp8_once(const Stage& stage, const RunSettings& settings, bool cublaslt) const {
    const cudaStream_t stream = stream_.get();
    const Fp8Scaling scaling = settings.fp8_scaling.value_or(stage.default_fp8_scaling());
    const Fp8Inputs inputs(settings.problem, scaling, settings.seed, settings.data, stream);
    const Fp8Set set = make_set(settings.problem, stage, scaling, inputs.operands());
    profile_launch(
        [&] {
            if (cublaslt) inputs.reset_output_column_major(set.cublaslt_d.data(), stream);
            else inputs.reset_output(set.stage_d.data(), stream);
        },
        [&] {
            if (cublaslt)
                set.cublaslt->run(set.b_for_cublaslt, set.cublaslt_d.data(), settings.problem.alpha,
                                  settings.problem.beta, stream);
            else
                launch_fp8_stage(stage, settings.problem, scaling, set.operands, set.stage_d.data(), stream);
        });
}

}  // namespace sgemm

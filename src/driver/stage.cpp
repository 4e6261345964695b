#include "driver/stage.hpp"

#include <fmt/format.h>

#include <limits>

#include "gpu/device_fill.hpp"
#include "verification/fp8_operands.hpp"
#include "kernels/common/padded_launch.cuh"

namespace sgemm {

std::string_view to_string(Precision precision) {
    switch (precision) {
        case Precision::fp32:
            return "fp32";
        case Precision::bf16:
            return "bf16";
        case Precision::fp8:
            return "fp8";
    }
    return "?";
}

std::string_view to_string(COutput output) {
    switch (output) {
        case COutput::fp32:
            return "fp32";
        case COutput::bf16:
            return "bf16";
    }
    return "?";
}

double accumulator_unit_roundoff(Precision precision) {
    switch (precision) {
        case Precision::fp32:
            return std::numeric_limits<float>::epsilon() / 2;  // 2^-24, round to nearest
        case Precision::bf16:
            // Tensor cores add into their FP32 accumulators with truncation, not
            // rounding to nearest (Fasi et al., "Numerical behavior of NVIDIA tensor
            // cores", 2021): twice the unit roundoff.
            return std::numeric_limits<float>::epsilon();  // 2^-23
        case Precision::fp8:
            // FP32 where the sums are promoted (fp8_error_budget has the whole budget).
            return std::numeric_limits<float>::epsilon();  // 2^-23
    }
    return 0.0;
}

namespace {

// BLAS's rule for alpha = 0: C = beta C, A and B not read. Whether it applied.
template <class COut>
bool scaled_by_beta_alone(const GemmProblem& problem, COut* c, cudaStream_t stream) {
    if (problem.alpha != 0.0f) return false;
    scale_by(c, static_cast<std::size_t>(problem.shape.m) * static_cast<std::size_t>(problem.shape.n), problem.beta,
             stream);
    return true;
}

}  // namespace

void launch_stage(const Stage& stage, const GemmProblem& problem, const StageOperands& operands, float* c,
                  cudaStream_t stream) {
    if (scaled_by_beta_alone(problem, c, stream)) return;
    const ShapeRule& rule = stage.shape_rule;
    if (!rule.accepts(problem.shape)) {
        const GemmShape multiples{rule.m_multiple, rule.n_multiple, rule.k_multiple};
        if (stage.launch_bf16 != nullptr)
            return launch_padded(problem, operands.a_bf16, operands.b_bf16, c, stream, multiples, stage.launch_bf16);
        return launch_padded(problem, operands.a, operands.b, c, stream, multiples, stage.launch);
    }
    if (stage.launch_bf16 != nullptr) stage.launch_bf16(problem, operands.a_bf16, operands.b_bf16, c, stream);
    else stage.launch(problem, operands.a, operands.b, c, stream);
}

void launch_stage(const Stage& stage, const GemmProblem& problem, const StageOperands& operands, __nv_bfloat16* c,
                  cudaStream_t stream) {
    if (scaled_by_beta_alone(problem, c, stream)) return;
    stage.launch_bf16_c(problem, operands.a_bf16, operands.b_bf16, c, stream);
}

void launch_fp8_stage(const Stage& stage, const GemmProblem& problem, Fp8Scaling scaling,
                      const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream) {
    if (scaled_by_beta_alone(problem, d, stream)) return;
    stage.launch_fp8(problem, scaling, operands, d, stream);
}

std::optional<std::string> fp8_scaling_refusal(const Stage& stage, Fp8Scaling scaling) {
    if (stage.precision != Precision::fp8 || stage.takes(scaling)) return std::nullopt;
    return fmt::format("{} takes {}; got --scaling {}", describe(stage),
                       stage.takes(Fp8Scaling::tensor) ? "one scale a tensor (--scaling tensor)"
                                                       : "the scales of blocks (--scaling 1x128-128x128 or 1x128-1x128)",
                       to_string(scaling));
}

std::string describe(const Stage& stage) {
    if (stage.is_track()) return fmt::format("track {}", stage.name);
    return fmt::format("stage {} ({})", stage.number, stage.name);
}

std::string label(const Stage& stage) {
    return stage.is_track() ? std::string(stage.name) : std::to_string(stage.number);
}

KernelChoice kernel_choice(const Stage& stage, const GemmShape& shape) {
    if (stage.is_track()) return stage.choose(shape);
    return KernelChoice{stage.number, !stage.shape_rule.accepts(shape)};
}

std::string kernel_label(const KernelChoice& choice) {
    return choice.padded ? fmt::format("{} padded", choice.stage) : std::to_string(choice.stage);
}

bool ShapeRule::accepts(const GemmShape& shape) const {
    return shape.m % m_multiple == 0 && shape.n % n_multiple == 0 && shape.k % k_multiple == 0;
}

std::string ShapeRule::describe() const {
    std::string text;
    const auto add = [&](char dim, int multiple) {
        if (multiple > 1) text += fmt::format("{}{}%{}", text.empty() ? "" : " ", dim, multiple);
    };
    add('M', m_multiple);
    add('N', n_multiple);
    add('K', k_multiple);
    if (text.empty()) return "any";
    return padded ? "any (" + text + " padded)" : text;
}

std::optional<std::string> shape_refusal(const Stage& stage, const GemmShape& shape) {
    if (stage.shape_rule.runs(shape)) return std::nullopt;
    std::string needs;
    const auto add = [&](char dim, int multiple) {
        if (multiple > 1) needs += fmt::format("{}{} a multiple of {}", needs.empty() ? "" : ", ", dim, multiple);
    };
    add('M', stage.shape_rule.m_multiple);
    add('N', stage.shape_rule.n_multiple);
    add('K', stage.shape_rule.k_multiple);
    return fmt::format("{} needs {}; got M={} N={} K={}", describe(stage), needs, shape.m, shape.n, shape.k);
}

std::optional<std::string> c_output_refusal(const Stage& stage, COutput output, const GemmShape& shape) {
    if (output == COutput::fp32) return std::nullopt;
    if (stage.precision == Precision::fp8) return std::nullopt;  // the FP8 problem's D is bf16 already
    if (stage.launch_bf16_c == nullptr)
        return fmt::format("{} writes FP32 C only; --c-type bf16 is for stages 19, 20, 25 and 30 and the bf16 track",
                           describe(stage));
    if (shape.n % 8 != 0 || shape.k % 8 != 0)
        return fmt::format("{} writes bf16 C where N and K are multiples of 8; got M={} N={} K={}",
                           describe(stage), shape.m, shape.n, shape.k);
    return std::nullopt;
}

std::optional<std::string> architecture_refusal(const Stage& stage, int device_cc, const BuildTarget& build) {
    if (stage.needs_sm90a && device_cc != 90)
        return fmt::format("{} runs only on Hopper (sm_90a: wgmma, setmaxnreg); this GPU is sm_{}",
                           describe(stage), device_cc);
    if (device_cc < stage.min_compute_capability)
        return fmt::format("{} needs sm_{} or newer; this GPU is sm_{}", describe(stage),
                           stage.min_compute_capability, device_cc);
    if (build.compute_capability < stage.min_compute_capability)
        return fmt::format("{} needs sm_{} code; this binary was built for sm_{} (rebuild with make ARCH=...)",
                           describe(stage), stage.min_compute_capability, build.compute_capability);
    if (stage.needs_sm90a && !build.sm90a)
        return fmt::format("{} needs sm_90a code; this binary was built for sm_{} (rebuild with make ARCH=90a)",
                           describe(stage), build.compute_capability);
    return std::nullopt;
}

}  // namespace sgemm

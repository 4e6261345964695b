// A stage: one numbered kernel of the worklog, with what the driver must know to run
// it or to refuse it with a clear reason. Or a track: the dispatch layer's entry point for a
// precision (dispatch/), which chooses a stage's kernel for each shape; the driver runs,
// checks and times it as it does a stage.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dispatch/kernel_choice.hpp"
#include "gpu/build_target.hpp"
#include "kernels/common/fp8_problem.hpp"
#include "kernels/common/gemm_problem.hpp"

namespace sgemm {

// fp32: FP32 inputs and arithmetic. bf16: inputs rounded to bf16, products accumulated
// in FP32 (on tensor cores), FP32 C. fp8: the FP8 problem (kernels/common/fp8_problem.hpp):
// inputs quantized to e4m3 with scales, bf16 D, against cuBLASLt.
enum class Precision { fp32, bf16, fp8 };

std::string_view to_string(Precision precision);

// Unit roundoff of the arithmetic that accumulates the dot products.
double accumulator_unit_roundoff(Precision precision);

// The type C is written in: FP32 (every stage), or bf16 (sgemm --c-type bf16: the stages
// with a Bf16OutputLauncher, against cuBLAS writing bf16 C).
enum class COutput { fp32, bf16 };

std::string_view to_string(COutput output);

// Divisibility a stage's kernels need; 1 means any size. `padded`: any other shape runs
// on operands padded to these multiples (common/padded_launch.cuh), the copies timed with the
// stage; otherwise the driver refuses it.
struct ShapeRule {
    int m_multiple = 1;
    int n_multiple = 1;
    int k_multiple = 1;
    bool padded = false;

    bool accepts(const GemmShape& shape) const;  // the kernels take it as it is
    bool runs(const GemmShape& shape) const { return padded || accepts(shape); }
    std::string describe() const;  // "any", "M%128 N%128 K%8", or "any (N%8 K%8 padded)"
};

// Where an FP8 stage's MMA sums go (the budget it is held to, and the cuBLASLt mode it is
// timed against): kept in the MMA's accumulator over all of K (cuBLASLt's fast
// accumulation), or promoted into FP32 every 128 of K (cuBLASLt's default).
enum class Fp8Accumulation { in_mma, promoted };

// The scalings an FP8 stage takes, as a set.
constexpr unsigned fp8_scaling_bit(Fp8Scaling scaling) { return 1u << static_cast<unsigned>(scaling); }
constexpr unsigned kTensorScale = fp8_scaling_bit(Fp8Scaling::tensor);
constexpr unsigned kBlockScales = fp8_scaling_bit(Fp8Scaling::rows_and_blocks) | fp8_scaling_bit(Fp8Scaling::rows_and_rows);

// What a stage needs of the GPU: a compute capability, and whether it uses Hopper's own
// instructions (sm_90a: wgmma, setmaxnreg), which run on sm_90 only.
struct GpuRequirement {
    int min_compute_capability = 0;
    bool needs_sm90a = false;
};
constexpr GpuRequirement kAnyGpu{};
constexpr GpuRequirement kSm80{80};
constexpr GpuRequirement kSm90a{90, true};

using KernelChooser = KernelChoice (*)(const GemmShape& shape);

// What an entry of the registry is. cublas: stage 0, cuBLAS itself, which the driver calls
// without a launcher of ours. stage: a numbered stage, its kernel behind the launcher of its
// precision. track: a precision's entry point in the dispatch layer (dispatch/), launched as
// a stage is, which chooses a stage's kernel for each shape.
enum class StageKind { cublas, stage, track };

// A track's number: tracks are named (fp32, bf16, fp32-tc, fp8), not numbered.
constexpr int kTrackNumber = -1;

struct Stage {
    StageKind kind = StageKind::stage;
    int number = 0;         // kTrackNumber for a track
    std::string_view name;  // also the kernel file's name: kernels/<NN>_<name>.cu; a track's name
    Precision precision = Precision::fp32;
    int min_compute_capability = 0;  // e.g. 80 for sm_80
    bool needs_sm90a = false;  // Hopper's own instructions (wgmma, setmaxnreg): sm_90 only
    ShapeRule shape_rule;
    std::string_view summary;  // one line: what this stage changes, or how a track chooses
    Fp32Launcher launch = nullptr;        // fp32 stages
    Bf16Launcher launch_bf16 = nullptr;   // bf16 stages
    Bf16OutputLauncher launch_bf16_c = nullptr;  // bf16 stages that also write bf16 C
    // FP8 stages (precision fp8): the launcher, where the sums go, the scalings taken.
    Fp8Launcher launch_fp8 = nullptr;
    Fp8Accumulation fp8_accumulation = Fp8Accumulation::promoted;
    unsigned fp8_scalings = 0;
    // A track's choice of kernel for a shape on this GPU (dispatch/).
    KernelChooser choose = nullptr;
    bool is_cublas() const { return kind == StageKind::cublas; }
    bool is_track() const { return kind == StageKind::track; }
    bool takes(Fp8Scaling scaling) const { return (fp8_scalings & fp8_scaling_bit(scaling)) != 0; }
    // The scaling an FP8 run takes when none is asked for: the recipe's where the stage takes it.
    Fp8Scaling default_fp8_scaling() const {
        return takes(Fp8Scaling::rows_and_blocks) ? Fp8Scaling::rows_and_blocks : Fp8Scaling::tensor;
    }
};

// The registry declares its entries through these, one factory a kind of entry, each taking
// the launchers that kind runs, so that no entry is declared without them.
namespace stage_factory {
constexpr Stage common(StageKind kind, int number, std::string_view name, Precision precision, GpuRequirement gpu,
                       ShapeRule rule, std::string_view summary) {
    Stage stage;
    stage.kind = kind;
    stage.number = number;
    stage.name = name;
    stage.precision = precision;
    stage.min_compute_capability = gpu.min_compute_capability;
    stage.needs_sm90a = gpu.needs_sm90a;
    stage.shape_rule = rule;
    stage.summary = summary;
    return stage;
}

constexpr Stage track(Stage stage, KernelChooser choose) {
    stage.kind = StageKind::track;
    stage.choose = choose;
    return stage;
}
}  // namespace stage_factory

// Stage 0: cuBLAS, the reference; the driver calls it itself.
constexpr Stage cublas_reference(std::string_view summary) {
    return stage_factory::common(StageKind::cublas, 0, "cublas", Precision::fp32, kAnyGpu, ShapeRule{}, summary);
}

constexpr Stage fp32_stage(int number, std::string_view name, GpuRequirement gpu, ShapeRule rule, Fp32Launcher launch,
                           std::string_view summary) {
    Stage stage = stage_factory::common(StageKind::stage, number, name, Precision::fp32, gpu, rule, summary);
    stage.launch = launch;
    return stage;
}

constexpr Stage bf16_stage(int number, std::string_view name, GpuRequirement gpu, ShapeRule rule,
                           Bf16Launcher launch, std::string_view summary) {
    Stage stage = stage_factory::common(StageKind::stage, number, name, Precision::bf16, gpu, rule, summary);
    stage.launch_bf16 = launch;
    return stage;
}

// A bf16 stage that can also write bf16 C (--c-type bf16).
constexpr Stage bf16_stage(int number, std::string_view name, GpuRequirement gpu, ShapeRule rule,
                           Bf16Launcher launch, Bf16OutputLauncher launch_bf16_c, std::string_view summary) {
    Stage stage = bf16_stage(number, name, gpu, rule, launch, summary);
    stage.launch_bf16_c = launch_bf16_c;
    return stage;
}

constexpr Stage fp8_stage(int number, std::string_view name, GpuRequirement gpu, ShapeRule rule, Fp8Launcher launch,
                          Fp8Accumulation accumulation, unsigned scalings, std::string_view summary) {
    Stage stage = stage_factory::common(StageKind::stage, number, name, Precision::fp8, gpu, rule, summary);
    stage.launch_fp8 = launch;
    stage.fp8_accumulation = accumulation;
    stage.fp8_scalings = scalings;
    return stage;
}

// A track is launched as a stage of its precision is; `choose` names the kernel its launcher
// runs for a shape (the run's kernel column, and the ceiling the run is held to).
constexpr Stage fp32_track(std::string_view name, GpuRequirement gpu, ShapeRule rule, Fp32Launcher launch,
                           KernelChooser choose, std::string_view summary) {
    return stage_factory::track(fp32_stage(kTrackNumber, name, gpu, rule, launch, summary), choose);
}

constexpr Stage bf16_track(std::string_view name, GpuRequirement gpu, ShapeRule rule, Bf16Launcher launch,
                           Bf16OutputLauncher launch_bf16_c, KernelChooser choose, std::string_view summary) {
    return stage_factory::track(bf16_stage(kTrackNumber, name, gpu, rule, launch, launch_bf16_c, summary), choose);
}

constexpr Stage fp8_track(std::string_view name, GpuRequirement gpu, ShapeRule rule, Fp8Launcher launch,
                          Fp8Accumulation accumulation, unsigned scalings, KernelChooser choose,
                          std::string_view summary) {
    return stage_factory::track(fp8_stage(kTrackNumber, name, gpu, rule, launch, accumulation, scalings, summary),
                                choose);
}

// How a run names it: "stage 20 (hopper_tuned)", "track bf16".
std::string describe(const Stage& stage);
// The CSV's stage column: "20", "bf16".
std::string label(const Stage& stage);

// Whose kernel runs `shape`: the stage's own (on padded copies where its rule says so), or
// the one a track chooses.
KernelChoice kernel_choice(const Stage& stage, const GemmShape& shape);
// The CSV's kernel column: "20", "20 padded".
std::string kernel_label(const KernelChoice& choice);

// A run's operands: FP32 A and B, and the bf16 copies the bf16 stages take.
struct StageOperands {
    const float* a = nullptr;
    const float* b = nullptr;
    const __nv_bfloat16* a_bf16 = nullptr;
    const __nv_bfloat16* b_bf16 = nullptr;
};

// Enqueues `stage` (not stage 0: cuBLAS keeps its own rules) on C = alpha A B + beta C.
// Every stage is launched here, which keeps BLAS's rule for alpha for all of them: alpha
// = 0 gives C = beta C in one pass over C, A and B not read (nor C where beta = 0). The
// rule for beta = 0, C not read, is each kernel's own.
void launch_stage(const Stage& stage, const GemmProblem& problem, const StageOperands& operands, float* c,
                  cudaStream_t stream);
// The same writing bf16 C (stage.launch_bf16_c).
void launch_stage(const Stage& stage, const GemmProblem& problem, const StageOperands& operands, __nv_bfloat16* c,
                  cudaStream_t stream);

// Enqueues FP8 `stage` (or track) on D = alpha A B^T + beta C (fp8_problem.hpp), with BLAS's
// rule for alpha as above.
void launch_fp8_stage(const Stage& stage, const GemmProblem& problem, Fp8Scaling scaling,
                      const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream);

// Why FP8 `stage` cannot take `scaling`, in one line; nullopt if it can (or is not FP8).
std::optional<std::string> fp8_scaling_refusal(const Stage& stage, Fp8Scaling scaling);

// Why `stage` cannot run `shape`, in one line; nullopt if it can.
std::optional<std::string> shape_refusal(const Stage& stage, const GemmShape& shape);

// Why `stage` cannot write C as `output` on `shape`, in one line; nullopt if it can. bf16 C
// is the bf16 stages' with a Bf16OutputLauncher, where K and N are multiples of 8 (TMA's
// rows: their any-shape paths write FP32 C).
std::optional<std::string> c_output_refusal(const Stage& stage, COutput output, const GemmShape& shape);

// Why `stage` cannot run on a GPU of `device_cc` with a binary built for `build`.
std::optional<std::string> architecture_refusal(const Stage& stage, int device_cc, const BuildTarget& build);

}  // namespace sgemm

// Which kernel takes a shape on the FP32 track's last stages: see split_dispatch.cuh. Not a
// stage of its own (no NN_ prefix): the registry's entries for stages 23 and 24 point here.
#include "split_dispatch.cuh"

#include <algorithm>

#include "common/launch.cuh"
#include "common/padded_launch.cuh"

namespace sgemm {

// The launchers chosen between, each in its chapter.
void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);
void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                               cudaStream_t stream);
void launch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);
void launch_tuned(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

namespace {

// The FP32 stages' kernels read N-wide rows of B and the splits, and write C, through TMA.
constexpr GemmShape kTmaMultiples{1, 8, 1};
// Fitted on the draw of seed 1 (docs/notes/24_a_in_registers.md).
constexpr double kFlopsPerCopiedByte = 40.0;

// A shape off kTmaMultiples: where the copies outweigh the math, on stage 10's kernel;
// else `dispatch` on padded copies.
void launch_off_multiples(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                          Fp32Launcher dispatch) {
    if (copies_outweigh_math(problem.shape, kTmaMultiples, sizeof(float), kFlopsPerCopiedByte))
        return launch_tuned(problem, a, b, c, stream);
    launch_padded(problem, a, b, c, stream, kTmaMultiples, dispatch);
}

}  // namespace

// The measured crossovers (see the predicates in the header).
constexpr int kMaxRowsInRegisters = 256, kStage22StackRows = 256, kStage22StackColumns = 128;
constexpr int kMaxColumns = 256, kMinRowsPerColumn = 16;
constexpr int kMaxShortK = 256;
constexpr long long kMaxShortFlops = 1LL << 31;

bool sums_too_short_to_split(const GemmShape& shape) {
    return shape.k <= kMaxShortK && 2LL * shape.m * shape.n * shape.k <= kMaxShortFlops;
}

constexpr int kMaxStreamedRows = 16, kMinStreamedColumns = 3072;

bool rows_too_few_to_split(const GemmShape& shape) {
    return shape.m <= kMaxStreamedRows && shape.n >= kMinStreamedColumns;
}

bool splits_in_registers(const GemmShape& shape, int sms) {
    const int stage22_stacks = ceil_div(shape.m, kStage22StackRows) * ceil_div(shape.n, kStage22StackColumns);
    return shape.m <= kMaxRowsInRegisters || stage22_stacks < sms / 2;
}

bool splits_a_in_registers(const GemmShape& shape) {
    return shape.n <= kMaxColumns && static_cast<long long>(shape.n) * kMinRowsPerColumn <= shape.m &&
           shape.k % 4 == 0;
}

void dispatch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                                 cudaStream_t stream) {
    if (sums_too_short_to_split(problem.shape) || rows_too_few_to_split(problem.shape))
        return launch_tuned(problem, a, b, c, stream);
    if (!takes_as_is(problem.shape, kTmaMultiples))
        return launch_off_multiples(problem, a, b, c, stream, dispatch_split_in_registers);
    static const int sms = std::max(current_sm_count(), 1);
    if (splits_in_registers(problem.shape, sms))
        launch_split_in_registers(problem, a, b, c, stream);
    else
        launch_split_fp16(problem, a, b, c, stream);  // which hands small shapes on to stage 10 itself
}

void dispatch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                             cudaStream_t stream) {
    if (sums_too_short_to_split(problem.shape) || rows_too_few_to_split(problem.shape))
        return launch_tuned(problem, a, b, c, stream);
    if (!takes_as_is(problem.shape, kTmaMultiples))
        return launch_off_multiples(problem, a, b, c, stream, dispatch_a_in_registers);
    if (splits_a_in_registers(problem.shape))
        launch_a_in_registers(problem, a, b, c, stream);
    else
        dispatch_split_in_registers(problem, a, b, c, stream);
}

}  // namespace sgemm

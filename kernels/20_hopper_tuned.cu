// Stage 20 — tuned, with the leftover tiles shared out by K (stream-K).
//
// The idea: a persistent grid still works in rounds, each giving every cluster one whole
// stack. At N = 8192, 1024 stacks on 66 clusters make 15.5 rounds: in the last, 34
// clusters work and 32 wait for a whole tile's time, 3 % of the run. Stream-K
// (20_stream_k.cuh) gives every cluster its whole rounds and then an equal run of the
// leftover stacks' K tiles: here 66 runs of 66 K tiles where a stack has 128. A run
// covers the start of one stack, or the end of another, or both (each such part a
// "piece"); the cluster does its start first and leaves the partial sums in a workspace
// (coalesced float4 stores, then a flag raised with release semantics), and the cluster
// that ends a stack waits for the flags of the earlier clusters whose runs reach into it,
// adds their sums in a fixed order (so that every run gives the same bits) and stores C.
// Doing the starts first keeps the waits short: a finishing cluster only waits for runs
// that began when its own did.
//
// Where it pays: the hand-over costs about as much as 17-21 K tiles of work, so the
// schedule shares the leftovers out only where that spares each cluster at least 24 K
// tiles of waiting: at 8192 and 16384, not at 2048 or 4096 (where it would spare 8). A
// problem of fewer stacks than the GPU holds clusters (a few tokens, or a small C with a
// long K) is shared out over every cluster by the same rule (make_grid_schedule).
//
// What changed since stage 19: the schedule and the hand-over; and the kernel
// (20_hopper_tuned.cuh) takes what the tuner varies as template parameters: the tile, the
// ring's depth, the cluster, the C stores and the schedule. The tuner (scripts/tune.py
// --stage 20, results/<gpu>/tuning_stage20.md), ranking by the worst ratio over 4096 and
// 8192, kept stage 19's choices, and stream-K.
//
// Prediction: the idle share of the last round, up to 3 % at 8192; nothing at 4096.
//
// Measured on the H100 (make results): 98.7 % of cuBLAS BF16 at N = 4096 and 104.5 % at
// 8192, where stream-K gained 2 points, most of the prediction; beside cuBLASLt's own
// kernels (make survey), whose fastest Hopper kernels reached 100.0 and 102.8 %. At 1024
// it reaches 53.8 %: 16 stacks keep 32 of the 132 SMs busy. What limits it at 4096 is
// stage 19's: the C stores, and 3.88 rounds that stream-K cannot recover at its cost.
// Next to try: a cheaper hand-over, and consumers that take turns on two tiles so that
// one's stores overlap the other's wgmmas. docs/notes/20_hopper_tuned.md has the rest.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "20_hopper_tuned.cuh"

namespace sgemm {
namespace {

using TunedConfig = WarpSpecializedConfig<128, 256, 4, 2, CStores::kThroughTma, Schedule::kPersistentStreamK>;
constexpr int kTunedGroupRows = 8;

}  // namespace

void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream) {
    launch_hopper_tuned_kernel<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
}

void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream, const OperandScaling& scaling) {
    launch_hopper_tuned_kernel<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream, scaling);
}

}  // namespace sgemm

// Stage 20 — tuned, with the leftover tiles shared out by K (stream-K).
//
// The idea: a persistent grid still works in rounds. At N = 8192, 1024 stacks of two
// 128x256 tiles on 66 clusters make 15.5 rounds: in the last, 34 clusters work and 32
// wait for a whole tile's time, 3 % of the run. Stream-K (common/tile_schedule.cuh) gives
// every cluster its whole rounds and then an equal run of the leftover stacks' K tiles:
// here 66 runs of 66 K tiles where a stack has 128. A run covers the start of one stack,
// or the end of another, or both; the cluster does the start first and leaves its partial
// sums in a workspace (publish_partial_sums: coalesced float4 stores, then a flag with
// release semantics), and the cluster that ends a stack waits for the flags of the earlier
// clusters whose runs reach into it, adds their sums in a fixed order (so that every run
// gives the same bits) and stores C. Doing the starts first keeps the waits short: a
// finishing cluster only waits for runs that began when its own did.
//
// Where it pays: the hand-over costs about as much as 17-21 K tiles of work (the writes
// and reads of 128 KB partial tiles, the fences, the waits), measured at 4096, where
// stream-K spares each cluster only 8 K tiles of waiting (58 leftover stacks for 66
// clusters) and lost 3.5 points, and at 8192, where it spares 62 and gained 2. The
// schedule shares the leftovers out only where that spares at least 24 K tiles a cluster
// (kStreamKMinSparedKTiles): at 8192 and 16384, not at 2048 or 4096.
//
// The tuner (scripts/tune.py --stage 20, results/h100-80gb-hbm3/tuning_stage20.md) timed
// tile shapes, depths, clusters, raster groups and the two ways of writing C. Ranked by
// the worst ratio over 4096 and 8192, the same kernel without stream-K came first by 0.2
// points at 4096, where both run the same schedule; stream-K is 2 points ahead at 8192,
// and this stage takes it. 256x128 tiles, three stages and C from registers lost 1.5-5
// points; clusters of one CTA, 9 at 8192.
//
// Measured on the H100 (make results): 665.1 TFLOPS at N = 4096, 98.7 % of cuBLAS BF16
// (98.3 % in turns), 68.8 % of the wgmma ceiling; 696.4 at 8192, 104.5 % (101.4 % in
// turns), 71.6 %; 737.4 at 16384, 102.7 % (96.0 % in turns); 525.8 at 2048, 94.0 %; and
// beside cuBLASLt's own kernels (make survey, cublaslt_survey.md): 98.9 % at 4096 and
// 104.5 % at 8192, where the library's fastest Hopper kernels reached 100.0 and 102.8 %.
// At 1024 it reaches 53.8 %: 16 stacks keep 32 of the 132 SMs busy; smaller tiles for
// small problems, as stage 14 has, are not here yet.
//
// What limits it at 4096: 3.88 rounds (3 % idle in the last), which stream-K cannot yet
// recover at its cost; and the C stores (the kernel without them reached 106.9 %).
// Next to try: a cheaper hand-over (profile where its 17-21 K tiles go), and consumers
// that take turns on two tiles so that one's stores overlap the other's wgmmas.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "17_warp_specialized.cuh"

namespace sgemm {
namespace {

using TunedConfig = WarpSpecializedConfig<128, 256, 4, 2, CStores::kThroughTma, Schedule::kPersistentStreamK>;
constexpr int kTunedGroupRows = 8;

}  // namespace

void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream) {
    launch_warp_specialized_kernel<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
}

// Stage 21 runs this kernel on operands it has scaled by powers of two, undone on C.
void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream, const OperandScaling& scaling) {
    launch_warp_specialized_kernel<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream, scaling);
}

}  // namespace sgemm

// Stage 19 — a persistent kernel whose C stores overlap the next tile's loads.
//
// The idea: stage 17 measured its C stores as the largest cost left: 10 % at N = 4096.
// Each CTA computes one tile, stores 128 KB of FP32 from registers while its tensor cores
// wait, and leaves; and since all CTAs of a wave finish together, every SM stores at
// once. Two changes take most of that away.
//   - Persistent CTAs (common/tile_schedule.cuh): the grid is as many clusters as the GPU
//     holds at once (66 of two CTAs on the H100), and cluster c takes stacks c, c + 66,
//     ... in raster order. The producer's loop runs over all of its tiles, so while the
//     consumers store one tile it is already filling the ring with the next one's first
//     four K tiles, and the barrier inits, tensor maps and launch are paid once per SM.
//   - C through shared memory and TMA (store_c_chunk_through_tma, common/hopper_tiles.cuh):
//     each consumer writes its 64x256 tile in eight 64x32 chunks (8 KB, swizzled like the
//     operands) into two buffers of its own and has the copy engine store each chunk; it
//     waits only until the engine has read a buffer two chunks later, not until C is in
//     memory. alpha and beta are applied on the way, and TMA leaves out what lies outside
//     C. The ring keeps its four stages: 4 x 48 + 2 x 16 KB of buffers = 225 KB.
//
// What changed since stage 18: CStores::kThroughTma and Schedule::kPersistent (template
// arguments of 17_warp_specialized.cuh); raster groups of 8 stack rows.
//
// Prediction: most of the 10 % at 4096 and 5 % at 8192 that the stores cost: 103-105 % of
// cuBLAS.
//
// Measured on the H100 (make results): 665.7 TFLOPS at N = 4096, 98.8 % of cuBLAS BF16
// (97.5 % in turns), 68.9 % of the wgmma ceiling; 695.8 at 8192, 102.1 % (100.5 % in
// turns), 71.0 %; 742.1 at 16384, 101.6 % (100.1 %); 525.8 at 2048, 94.0 %. The TMA stores
// bought 3.5 points at 4096 and 1.5 at 8192 (tuning_stage20.md in results/: the same
// kernel storing from registers, 95.3 and 102.9 %, against 98.8 and 104.4 %), about a
// third of what the stores cost. Most likely the copy engine takes a chunk only as fast
// as it writes one out, so with 16 KB of buffers a consumer still waits for most of its
// tile's write (not measured); larger buffers need a shallower ring, which cost more
// (docs/notes/19_persistent.md, with the other tries).
//
// What limits it now: at 4096, 256 stacks on 66 clusters make 3.88 rounds, so the last
// round leaves 8 clusters idle (3 % of the time); the stores (about 7 % at 4096: the
// kernel without them reached 106.9 %); and the ring's four stages, which the 227 KB of
// shared memory allow beside the C buffers.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "17_warp_specialized.cuh"

namespace sgemm {

void launch_persistent(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream) {
    launch_warp_specialized_kernel<WarpSpecializedConfig<128, 256, 4, 2, CStores::kThroughTma, Schedule::kPersistent>>(
        problem, a, b, c, 8, stream);
}

}  // namespace sgemm

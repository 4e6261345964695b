// The chooser of stage 31's plan (kernels/31_fp8_any_tile.hpp): stage 30's plan model
// (bf16_tiles.hpp) asked for the FP8 shape counted in stage 30's K tiles (one a K block of
// 128 e4m3 values: the same bytes into an SM, the same tensor-core time at FP8's twice bf16's
// rate, and the same DRAM bytes of A and B), over the tiles stage 31 is compiled for, with
// their own occupancy, and its own constants (fp8_tiles_fit.hpp), fitted on timed FP8 plans:
// what the terms leave out (D's two bytes a value against C's four) is in them. Two terms
// are FP8's own: a K block takes no less than one consumer's path through it, its share of
// the multiply-adds and then the promotion of its share of the sums on its CUDA cores,
//   step_seconds = max(stage 30's step_seconds,
//                      step_macs / consumers / mma_rate + promoted_values * promoted_value_seconds)
// (another consumer's wgmmas run meanwhile: three consumers of 64 rows hide more of it than
// two); and D, bf16, is two bytes a value in the DRAM term where stage 30's C is four.
#pragma once

#include <optional>
#include <vector>

#include "31_fp8_any_tile.hpp"
#include "common/fp8_problem.hpp"
#include "dispatch/bf16_tiles.hpp"

namespace sgemm {

// What stage 31's model adds to stage 30's terms.
struct Fp8Terms {
    double consumers = 1;        // consumer warpgroups a CTA
    double promoted_values = 0;  // sums one consumer promotes a K block
    double d_values = 0;         // D's, two bytes each in DRAM where stage 30's C takes four
};
// Stage 31's, for `tile` on the FP8 `shape`: each consumer promotes its share of the tile's
// sums every K block.
Fp8Terms fp8_terms(const AnyTile& tile, const GemmShape& shape);

struct Fp8TileConstants {
    AnyTileConstants any_tile;
    double promoted_value_seconds;  // one consumer's, a sum
};

double fp8_predicted_seconds(const AnyTileTerms& terms, const Fp8Terms& fp8, const Fp8TileConstants& constants,
                             bool direct_stores);

// A GPU as stage 31's model sees it: its SMs, and the CTAs of each of stage 31's tiles it
// holds by cluster size (fp8_any_tiles()'s order; none where stage 31 cannot run).
struct Fp8TilesGpu {
    int sms = 0;
    std::vector<ResidentByCluster> resident;
};
// For a GPU of `sms` SMs that holds `resident` of stage 31's CTAs (fp8_any_tiles()'s order).
Fp8TilesGpu fp8_tiles_gpu(int sms, const std::vector<ResidentByCluster>& resident);
// The GPU at hand's, asked once a process.
const Fp8TilesGpu& fp8_tiles_gpu_here();

// The shape stage 30's model reads for an FP8 shape: K in blocks of 128, each counted as 64.
GemmShape fp8_shape_in_bf16_k_tiles(const GemmShape& shape);

// Every compiled tile's plans for `shape`, stage 30's terms of the shape in its K tiles
// predicted with stage 31's constants (fp8_tiles_fit.hpp), plan.tile an index into
// fp8_any_tiles(); fastest predicted first.
std::vector<AnyTileCandidate> fp8_any_tile_candidates(const GemmShape& shape, const Fp8TilesGpu& gpu);

// The plan predicted fastest for `shape` (the first of fp8_any_tile_candidates); none where
// no tile takes it.
std::optional<AnyTileCandidate> fastest_fp8_any_tile_plan(const GemmShape& shape, const Fp8TilesGpu& gpu);

// Stage 31 (`./sgemm 31`): its kernel in the plan chosen for the shape on this GPU.
void launch_fp8_any_tile(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                         __nv_bfloat16* d, cudaStream_t stream);

}  // namespace sgemm

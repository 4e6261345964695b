// The chooser of stage 30's plan (kernels/30_any_tile.hpp): every tile the kernel is
// compiled for, each with its grid and with or without stream-K, scored by a model of its
// time; the plan predicted fastest runs. The model:
//   seconds = fixed + max(dram_bytes / dram_rate, sm_k_tiles * step_seconds)
//             + sm_store_bytes / store_rate + sm_split_bytes / split_rate
//             + sm_cluster_split_bytes / cluster_split_rate + sm_tiles * tile_seconds
//   step_seconds = max(step_bytes / load_rate, step_macs / mma_rate + step_wgmmas * wgmma_seconds)
// where the SM terms are the busiest SM's: the K tiles it multiplies (whole rounds of
// tiles, stream-K's even share of them, or its range of a tile's K split over a cluster),
// the C it writes (through TMA stores, or from registers where the tile is swapped or its
// K split in a cluster: two rates), the partial sums it hands over (stream-K: through
// global memory; the split in a cluster: through distributed shared memory), and the tiles
// it starts (each its first K tile's wait and its last one's drain). Its constants (bf16_tiles_fit.hpp) are fitted by scripts/fit_bf16_tiles.py on the
// measured times of candidate plans over one draw of problems.
#pragma once

#include <optional>
#include <vector>

#include "30_any_tile.hpp"
#include "common/gemm_problem.hpp"

namespace sgemm {

// What the plans depend on in the GPU at hand: its SMs, and the CTAs of each compiled
// tile's kernel it holds at once (any_tiles()'s order).
struct Bf16TilesGpu {
    int sms = 0;
    std::vector<ResidentByCluster> resident;
};
// Asked once a process.
const Bf16TilesGpu& bf16_tiles_gpu_here();

// The model's terms of one plan on one shape.
struct AnyTileTerms {
    double sm_k_tiles = 0;      // K tiles (64 values of K) the busiest SM multiplies
    double step_bytes = 0;      // bytes one K tile brings into an SM (a multicast operand: its share)
    double step_macs = 0;       // multiply-adds of one K tile
    double step_wgmmas = 0;     // wgmma instructions of one K tile
    double dram_bytes = 0;      // A and B once, C written once (and read with beta)
    double sm_store_bytes = 0;  // C the busiest SM writes
    double sm_split_bytes = 0;  // stream-K's partial sums the busiest SM writes and reads
    double sm_cluster_split_bytes = 0;  // the split's sums an SM writes to and adds from its cluster
    double sm_tiles = 0;        // tiles (or parts of one) the busiest SM starts
};

struct AnyTileConstants {
    double fixed_seconds;
    double dram_bytes_per_second;
    double load_bytes_per_second;   // one SM's
    double macs_per_second;         // one SM's
    double wgmma_seconds;           // one wgmma's issue, beyond its multiply-adds
    double store_bytes_per_second;  // one SM's, C at C[row][column]
    double direct_store_bytes_per_second;  // one SM's, C from registers
    double split_bytes_per_second;  // one SM's
    double cluster_split_bytes_per_second;  // one SM's
    double tile_seconds;            // a tile's start and end on an SM, beyond its K tiles and stores
};

double predicted_seconds(const AnyTileTerms& terms, const AnyTileConstants& constants, bool direct_stores);

// A plan with its terms and prediction.
struct AnyTileCandidate {
    AnyTilePlan plan;
    AnyTileTerms terms;
    double predicted_seconds;
};

// The plans of tile `tile` for a shape: whole rounds, stream-K where it has a tail of
// tiles to share out, K split 2 to 8 ways over a cluster where the tiles' CTAs fit in one
// wave (none where the tile cannot take the shape).
std::vector<AnyTileCandidate> any_tile_plans(const GemmShape& shape, const Bf16TilesGpu& gpu, int tile);
// The same for a tile of another list (stage 31's): its geometry, its index there (the plans'
// tile), and the CTAs a GPU holds of it by cluster size; which shapes its operands' rows take
// is that stage's to say.
std::vector<AnyTileCandidate> any_tile_plans(const GemmShape& shape, const AnyTile& tile, int index,
                                             const ResidentByCluster& resident);

// Every tile's plans, fastest predicted first.
std::vector<AnyTileCandidate> any_tile_candidates(const GemmShape& shape, const Bf16TilesGpu& gpu);

// The first of them, found without building the list (what a launch asks); none where no
// tile takes the shape.
std::optional<AnyTileCandidate> fastest_any_tile_plan(const GemmShape& shape, const Bf16TilesGpu& gpu);

AnyTilePlan choose_any_tile_plan(const GemmShape& shape, const Bf16TilesGpu& gpu);

// Stage 30 (`./sgemm 30`): its kernel in the plan chosen for the shape on this GPU. K and N
// multiples of 8.
void launch_any_tile(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                     cudaStream_t stream);
void launch_any_tile_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                            __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm

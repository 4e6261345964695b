// Stage 20 — tuned, with the leftover tiles shared out by K (stream-K).
//
// Builds on stage 19 (19_persistent.cu): diff its kernel against 20_hopper_tuned.cuh's.
//
// The idea: a persistent grid still works in rounds, each giving every cluster one whole
// stack. At N = 8192, 1024 stacks on 66 clusters make 15.5 rounds: in the last, 34
// clusters work and 32 wait for a whole tile's time, 3 % of the run. Stream-K
// (20_stream_k.cuh) gives every cluster its whole rounds and then an equal run of the
// leftover stacks' K tiles: here 66 runs of 66 K tiles where a stack has 128. A run
// covers the start of one stack, or the end of another, or both (each such part a
// "piece"); the cluster does its start first and leaves the partial sums in a workspace
// (coalesced float4 stores, then a flag raised with release semantics), and the cluster
// that ends a stack waits for the earlier clusters whose runs reach into it, adds their
// sums in a fixed order (so that every run gives the same bits) and stores C. Doing the
// starts first keeps the waits short. A deep K spreads one stack over many clusters (256
// x 256 x 65536: 33 on each of two), more slots than one CTA reads in its share of the
// time; there every sharer leaves its slot and counts it, then adds up and writes an equal
// share of C (in a kernel of its own: the code cost the other hand-over 1-2 points).
// Where it pays: the hand-over costs about as much as 17-21 K tiles of work, so the
// schedule shares the leftovers out only where that spares each cluster at least 24 K
// tiles of waiting: at 8192 and 16384, not at 2048 or 4096 (where it would spare 8). A
// problem of fewer stacks than the GPU holds clusters (a few tokens, or a small C with a
// long K) is shared out over every cluster by the same rule (make_grid_schedule).
//
// Tiles by shape: 128x256 tiles in clusters of two fill the GPU only where C has 88 of
// them (two thirds of the H100's SMs); 1024 x 1024 has 32, and 64 tokens leave each
// tile's rows half empty. So the launcher chooses per shape (tuned_tiles_for, below): a
// C of 64 rows or fewer takes 64-row tiles (the consumers split the columns instead of
// the rows), 64x256 or 64x128; the rest 128x256, 128x128 or 128x64: of each, the largest
// that gives two thirds of the SMs a tile, else the smallest, or with a long K 128x128
// (stream-K fills the grid; they load half the bytes per FLOP); no cluster where C has one
// row of tiles, and 64-row tiles where they leave fewer rows empty. The rule follows the
// fastest candidate per shape in scripts/tune.py --shapes (tuning_stage20_shapes.md).
//
// What changed since stage 19: the schedule and the hand-over (20_stream_k.cuh); the tiles
// by shape; and the kernel (20_hopper_tuned.cuh) takes what the tuner varies as template
// parameters: the tile, the ring's depth and the cluster. The tuner (scripts/tune.py
// --stage 20, results/<gpu>/tuning_stage20.md), ranking by the worst ratio over 4096 and
// 8192, kept stage 19's choices (also against C stored from registers and 256x128 tiles),
// and stream-K.
//
// Prediction: the idle share of the last round, up to 3 % at 8192; nothing at 4096. With
// tiles by shape, most of the SMs that the small problems left idle: up to 2x at 1024.
//
// Measured by make results on the H100 80GB HBM3: 665.7 TFLOPS at N = 4096 (99.4 % of cuBLAS bf16),
// 723.0 at 8192 (104.2 %).
// Stream-K gained 2 points at 8192, most of the prediction. Tiles by shape (make
// shapes): 1024 53.9 -> 84.1 %; the suite's M <= 256, 72.1 -> 89.6 % geomean. What limits
// 4096 is stage 19's: the C stores, and 3.88 rounds that stream-K cannot recover at its
// cost. Next: consumers that take turns on two tiles. With bf16 C (stage 19): 98.4 % at
// 4096 and 104.0 % at 8192, where issue 48 measured pranjalssh/fast.cu's best kernel at
// 100.4 and 102.6 %. docs/notes/20_hopper_tuned.md has these and the other figures.
//
// Shapes: any. K and N multiples of 8 as they are; off them (TMA's rows start 16-byte
// aligned), on zero-padded copies timed with the stage (common/padded_launch.cuh). bf16 C:
// K and N multiples of 8. sm_90a. The bf16 track (dispatch/bf16.cpp) runs this kernel, on
// the copies where a shape needs them, where its cost model predicts it fastest.
#include "20_hopper_tuned.cuh"

namespace sgemm {
namespace {

// The CTAs of Config's grid that have rows of C to work on in its first round (in a
// cluster past M's last row, a CTA only loads its share of B).
template <class Config>
int busy_ctas(const GemmShape& shape) {
    return ceil_div(shape.m, Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
}

}  // namespace

// Where neither of the larger 128-row tiles fills two thirds of the SMs, stream-K fills the
// grid by sharing stacks out by K. With a K this long the loads bound the kernel, and the
// 128x128 tiles in clusters of two load half the bytes per FLOP of the 128x64 ones: they
// take such a problem where their stacks lie within C. The tuner, against the 128x64 tiles:
// 256 x 256 x 65536 82 against 59 % of cuBLAS, 1024 x 1024 x 16384 73 against 69, 256 x
// 4096 x 14336 86 against 83; with K = 4096 (256 x 4096) they lost, 81 against 94.
constexpr int kLongK = 8192;

// Where C has a single row of tiles, a cluster of two along M gives its second CTA no rows
// to work on, only B to load: there the tiles go without a cluster (64x128 tiles for 64
// rows or fewer, 128x128 for 128 or fewer). And where 128-row tiles would leave more of
// their last row empty than 64-row ones, as at 137 or 663 rows, 64-row tiles take the
// problem that would go to 128x64 ones: as many rows of B loaded for half the rows of A.
// Fitted on the tuner's candidates over 73 problems (the suite's and the aligned ones of
// the draw of seed 1 and of seed 2's worst: scripts/tune.py --stage 20 --shapes), against
// the rule before, the geomean of the choices went 78.2 -> 80.5 % of cuBLAS, 77.7 -> 80.3
// over M <= 256 (the best candidate of each problem: 84.0): 2 x 9216 x 1536 68 -> 89 %,
// 109 x 11264 x 1792 67 -> 95, 663 x 1536 x 4096 48 -> 77; 64 x 6144 x 4096 lost 88 -> 84.
constexpr int padded_rows(int m, int block_m) { return ceil_div(m, block_m) * block_m; }

// The largest tile whose grid leaves at most a third of the SMs idle, of the 64-row tiles
// for a few tokens, of the 128-row ones for the rest; the smallest where none does, or with
// a long K the 128x128 tiles.
TunedTiles tuned_tiles_for(const GemmShape& shape, int sms) {
    using namespace tuned_tiles;
    const int enough = 2 * sms / 3;
    if (shape.m <= 64) return busy_ctas<FewRowsWide>(shape) >= enough ? TunedTiles::kFewRowsWide : TunedTiles::kFewRows;
    if (busy_ctas<Wide>(shape) >= enough) return TunedTiles::kWide;
    if (busy_ctas<Medium>(shape) >= enough)
        return shape.m <= Medium::kBlockM ? TunedTiles::kMediumOneRow : TunedTiles::kMedium;
    const bool medium_stacks_fit = shape.m >= Medium::kClusterM * Medium::kBlockM && shape.n >= Medium::kBlockN;
    if (shape.k >= kLongK && medium_stacks_fit) return TunedTiles::kMedium;
    if (padded_rows(shape.m, FewRows::kBlockM) < padded_rows(shape.m, Narrow::kBlockM)) return TunedTiles::kFewRows;
    return TunedTiles::kNarrow;
}

template <class Config>
constexpr HopperTile tile_of() {
    return HopperTile{Config::kBlockM, Config::kBlockN, Config::kClusterM};
}

HopperTile hopper_tuned_tile(const GemmShape& shape, int sms) {
    using namespace tuned_tiles;
    switch (tuned_tiles_for(shape, sms)) {
        case TunedTiles::kWide:
            return tile_of<Wide>();
        case TunedTiles::kMedium:
            return tile_of<Medium>();
        case TunedTiles::kMediumOneRow:
            return tile_of<MediumOneRow>();
        case TunedTiles::kNarrow:
            return tile_of<Narrow>();
        case TunedTiles::kFewRows:
            return tile_of<FewRows>();
        case TunedTiles::kFewRowsWide:
            return tile_of<FewRowsWide>();
    }
    return tile_of<Wide>();
}

void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream) {
    launch_in_tuned_tiles(problem, a, b, c, stream);
}

void launch_hopper_tuned_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                __nv_bfloat16* c, cudaStream_t stream) {
    launch_in_tuned_tiles(problem, a, b, c, stream);
}

}  // namespace sgemm

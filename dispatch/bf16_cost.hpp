// The bf16 track's cost model (dispatch/bf16.cpp): a predicted time for each kernel the
// track can run a shape on, from what the kernel's launcher would do with it, so that the
// track runs the shape on the kernel predicted fastest instead of by rules of thumb.
//
// A kernel's time is a fixed part (launch, first loads), plus the longer of two limits:
// DRAM, the bytes the kernel must read and write at the GPU's bandwidth; and the SMs, the
// longest run of K steps (64 values of K) one SM goes through, each as long as the slower
// of loading its tiles and multiplying them; plus, where K is split, the adding of the
// parts' partial sums; plus, where stage 20 runs a shape off its multiples, the padded
// copies, which run before and after the kernel:
//   seconds = fixed + max(dram_bytes / dram_rate, sm_steps * max(step_bytes / load_rate,
//             step_macs / mma_rate)) + split_bytes / split_rate + copy_bytes / copy_rate
// (A term for the stores of C, the bytes of C one SM writes, fitted to nothing on draw 5:
// docs/notes/25_few_tokens.md.)
// The constants of each kernel are fitted by scripts/fit_bf16_cost.py on the GPU's
// measured times over one draw of problems, and written into dispatch/bf16_cost_fit.hpp.
#pragma once

#include "25_few_tokens.hpp"
#include "common/gemm_problem.hpp"

namespace sgemm {

// What the model weighs for one kernel on one shape.
struct CostTerms {
    double dram_bytes = 0;   // A and B once (B once per token tile for stage 25), C written once
    double sm_steps = 0;     // the longest run of K steps one SM goes through
    double step_bytes = 0;   // the bytes one K step brings into an SM
    double step_macs = 0;    // the multiply-adds of one K step (tile rows x tile columns x 64)
    double split_bytes = 0;  // the partial sums one SM adds up where K is split, in bytes
    double copy_bytes = 0;   // what padded copies move (padding_cost.hpp), where a kernel runs on them
};

// A kernel's constants, as fitted.
struct CostConstants {
    double fixed_seconds;
    double dram_bytes_per_second;
    double load_bytes_per_second;  // one SM's
    double macs_per_second;        // one SM's
    double split_bytes_per_second;  // one SM's
    double copy_bytes_per_second;
};

double predicted_seconds(const CostTerms& terms, const CostConstants& constants);

// Stage 20's kernel in the tile its launcher chooses, on a GPU of `sms` SMs.
CostTerms stage20_terms(const GemmShape& shape, int sms);

// Stage 20's kernel on a shape off K and N multiples of 8: on zero-padded copies, the
// shape rounded up, with the copies' bytes.
CostTerms stage20_padded_terms(const GemmShape& shape, int sms);

// Stage 25's kernel as its launcher plans the shape, on a GPU that holds `resident`.
CostTerms stage25_terms(const GemmShape& shape, const ResidentCtas& resident);

// Stage 14's kernel as its launcher plans the shape, on a GPU of `sms` SMs.
CostTerms stage14_terms(const GemmShape& shape, int sms);

}  // namespace sgemm

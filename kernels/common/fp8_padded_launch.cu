// The FP8 problem at any N and K through padded copies: see fp8_padded_launch.cuh.
#include "common/fp8_padded_launch.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/padded_launch.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("FP8 padded launch: ") + what + ": " + cudaGetErrorString(status));
}

// One operand's copy: `rows` rows of `row_bytes` bytes, `source_pitch` apart, into
// `padded_rows` rows `padded_pitch` apart (a multiple of 16, from a 16-byte boundary), zeros
// past them.
struct RowsCopy {
    std::uint8_t* padded;
    const std::uint8_t* source;
    unsigned padded_pitch, padded_rows, source_pitch, row_bytes, rows;

    __host__ __device__ unsigned words() const { return padded_pitch / 16 * padded_rows; }
};

// Every operand's copy of one launch (A, B, B's scales, D in).
struct RowsCopies {
    static constexpr int kMost = 4;
    RowsCopy copy[kMost];
    int count = 0;
};

// Words q.. of w shifted right by `shift` bits, each word taking the next one's low bits (shf.r).
template <int q>
__device__ __forceinline__ void shifted(const std::uint32_t (&w)[8], int shift, std::uint32_t (&word)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) word[i] = __funnelshift_r(w[i + q], w[i + q + 1], shift);
}

// The `count` bytes from p on (any byte; none past `end`), zeros after them, as one 16-byte
// word: the 16-byte words that hold them loaded whole (ld.global.nc.v4) and shifted into place
// (shf.r), where both lie before `end`; else byte by byte.
__device__ uint4 bytes_from(const std::uint8_t* p, int count, const std::uint8_t* end) {
    if (count <= 0) return make_uint4(0, 0, 0, 0);
    count = min(count, 16);
    const int offset = static_cast<int>(reinterpret_cast<std::uintptr_t>(p) % 16);
    const std::uint8_t* const first = p - offset;
    const bool two = offset + count > 16;
    std::uint32_t word[4];
    if (first + (two ? 32 : 16) <= end) {
        const uint4 low = __ldg(reinterpret_cast<const uint4*>(first));
        const uint4 high = two ? __ldg(reinterpret_cast<const uint4*>(first) + 1) : make_uint4(0, 0, 0, 0);
        const std::uint32_t w[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
        const int shift = 8 * (offset % 4);
        // The first word is w[offset / 4]: four cases, each with constant register indices.
        switch (offset / 4) {
            case 0: shifted<0>(w, shift, word); break;
            case 1: shifted<1>(w, shift, word); break;
            case 2: shifted<2>(w, shift, word); break;
            default: shifted<3>(w, shift, word); break;
        }
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) word[i] = 0;
#pragma unroll
        for (int byte = 0; byte < 16; ++byte)
            if (byte < count) word[byte / 4] |= static_cast<std::uint32_t>(__ldg(p + byte)) << (8 * (byte % 4));
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // the bytes past `count` are another row's, or past the operand
        const int kept = count - 4 * i;
        if (kept <= 0) word[i] = 0;
        else if (kept < 4) word[i] &= (1u << (8 * kept)) - 1;
    }
    return make_uint4(word[0], word[1], word[2], word[3]);
}

// Every copy of `copies` in one grid: a thread a 16-byte word of a padded operand at a time.
__global__ void copy_rows_padded(RowsCopies copies) {
    unsigned all = 0;
    for (int j = 0; j < copies.count; ++j) all += copies.copy[j].words();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < all; i += gridDim.x * blockDim.x) {
        unsigned word = i;
        int j = 0;
        while (word >= copies.copy[j].words()) word -= copies.copy[j++].words();
        const RowsCopy& copy = copies.copy[j];
        const unsigned words_a_row = copy.padded_pitch / 16, row = word / words_a_row,
                       column = word % words_a_row * 16;
        const std::uint8_t* const end =
            copy.source + static_cast<std::size_t>(copy.rows - 1) * copy.source_pitch + copy.row_bytes;
        const int count = row < copy.rows ? static_cast<int>(copy.row_bytes) - static_cast<int>(column) : 0;
        reinterpret_cast<uint4*>(copy.padded + static_cast<std::size_t>(row) * copy.padded_pitch)[column / 16] =
            bytes_from(copy.source + static_cast<std::size_t>(row) * copy.source_pitch + column, count, end);
    }
}

// D (m x n, dense) from the padded buffer (rows of `padded_n` values): a thread 8 values of D,
// one 16-byte store where they lie whole on a 16-byte boundary.
__global__ void copy_d_out(__nv_bfloat16* d, const __nv_bfloat16* padded, unsigned m, unsigned n, unsigned padded_n) {
    const std::size_t values = static_cast<std::size_t>(m) * n;
    for (std::size_t first = 8 * (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x); first < values;
         first += 8 * static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        unsigned row = static_cast<unsigned>(first / n), column = static_cast<unsigned>(first % n);
        std::uint32_t word[4] = {0, 0, 0, 0};  // value e in bits 16 (e % 2) of word e / 2
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            if (first + e >= values) break;
            const __nv_bfloat16 value = padded[static_cast<std::size_t>(row) * padded_n + column];
            word[e / 2] |= static_cast<std::uint32_t>(__bfloat16_as_ushort(value)) << (16 * (e % 2));
            if (++column == n) column = 0, ++row;
        }
        if (first + 8 <= values && reinterpret_cast<std::uintptr_t>(d + first) % 16 == 0) {
            *reinterpret_cast<uint4*>(d + first) = make_uint4(word[0], word[1], word[2], word[3]);
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e)
                if (first + e < values)
                    d[first + e] = __ushort_as_bfloat16(static_cast<unsigned short>(word[e / 2] >> (16 * (e % 2))));
        }
    }
}

constexpr int kThreads = 256, kMostBlocks = 132 * 8;

int blocks_for(std::size_t threads) {
    return static_cast<int>(std::min<std::size_t>((threads + kThreads - 1) / kThreads, kMostBlocks));
}

void add(RowsCopies& copies, void* padded, std::size_t padded_pitch, std::size_t padded_rows, const void* source,
         std::size_t source_pitch, std::size_t row_bytes, std::size_t rows) {
    if (padded_pitch % 16 != 0 || padded_pitch / 16 * padded_rows >= (1u << 31))
        throw std::invalid_argument("FP8 padded launch: an operand past the copy's 2^31 16-byte words");
    copies.copy[copies.count++] = RowsCopy{
        static_cast<std::uint8_t*>(padded),        static_cast<const std::uint8_t*>(source),
        static_cast<unsigned>(padded_pitch),       static_cast<unsigned>(padded_rows),
        static_cast<unsigned>(source_pitch),       static_cast<unsigned>(row_bytes),
        static_cast<unsigned>(rows)};
}

}  // namespace

GemmShape fp8_padded_shape(const GemmShape& shape, bool pad_n) {
    return padded_shape(shape, pad_n ? kFp8TmaMultiples : GemmShape{1, 1, kFp8TmaMultiples.k});
}

Fp8PaddedProblem pad_fp8_problem(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                                 __nv_bfloat16* d, bool pad_n, cudaStream_t stream) {
    const auto [m, n, k] = problem.shape;
    const GemmShape padded = fp8_padded_shape(problem.shape, pad_n);
    const bool pad_k = padded.k != k, pad_d = padded.n != n;
    // B's 1 x 128 scales lie [K block][B's rows rounded up to 4] (fp8_problem.hpp).
    const int scale_stride = (n + 3) / 4 * 4, k_blocks = (k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    const bool pad_b_scales = scaling == Fp8Scaling::rows_and_rows && (padded.n + 3) / 4 * 4 != scale_stride;
    const bool d_in = pad_d && problem.beta != 0.0f;  // D is read as C: its values in
    static GrowingWorkspace workspace("the padded operands of an FP8 problem off N % 8 or K % 16");
    WorkspaceLayout layout;
    const auto padded_a = layout.add<std::uint8_t>(pad_k ? static_cast<std::size_t>(m) * padded.k : 0);
    const auto padded_b = layout.add<std::uint8_t>(pad_k || pad_d ? static_cast<std::size_t>(padded.n) * padded.k : 0);
    const auto padded_b_scales = layout.add<float>(pad_b_scales ? static_cast<std::size_t>(k_blocks) * padded.n : 0);
    const auto padded_d = layout.add<__nv_bfloat16>(pad_d ? static_cast<std::size_t>(m) * padded.n : 0);
    void* const base = workspace.at_least(layout.bytes());
    Fp8PaddedProblem out{GemmProblem{padded, problem.alpha, problem.beta}, operands, pad_d ? padded_d.in(base) : d};
    RowsCopies copies;
    if (pad_k) {
        add(copies, padded_a.in(base), padded.k, m, operands.a, k, k, m);
        out.operands.a = padded_a.in(base);
    }
    if (pad_k || pad_d) {
        add(copies, padded_b.in(base), padded.k, padded.n, operands.b, k, k, n);
        out.operands.b = padded_b.in(base);
    }
    if (pad_b_scales) {
        constexpr std::size_t kScale = sizeof(float);
        add(copies, padded_b_scales.in(base), kScale * padded.n, k_blocks, operands.b_scales, kScale * scale_stride,
            kScale * scale_stride, k_blocks);
        out.operands.b_scales = padded_b_scales.in(base);
    }
    if (d_in) {
        constexpr std::size_t kValue = sizeof(__nv_bfloat16);
        add(copies, out.d, kValue * padded.n, m, d, kValue * n, kValue * n, m);
    }
    if (copies.count == 0) return out;
    std::size_t words = 0;
    for (int j = 0; j < copies.count; ++j) words += copies.copy[j].words();
    copy_rows_padded<<<blocks_for(words), kThreads, 0, stream>>>(copies);
    check(cudaGetLastError(), "copying rows");
    return out;
}

void copy_fp8_d_out(const GemmProblem& problem, const Fp8PaddedProblem& padded, __nv_bfloat16* d,
                    cudaStream_t stream) {
    if (padded.d == d) return;
    const auto [m, n, k] = problem.shape;
    const std::size_t eights = (static_cast<std::size_t>(m) * n + 7) / 8;
    copy_d_out<<<blocks_for(eights), kThreads, 0, stream>>>(d, padded.d, m, n, padded.problem.shape.n);
    check(cudaGetLastError(), "copying D out");
}

}  // namespace sgemm

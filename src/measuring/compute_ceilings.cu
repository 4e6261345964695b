// The arithmetic ceilings: FFMA on the CUDA cores, mma.sync (bf16 and tf32) and wgmma
// (bf16 and e4m3) on the tensor cores. Every warp keeps the unit fed with instructions
// whose operands never change and are never loaded again, so nothing but the unit itself
// sets the rate. One more, mma.sync sustained, feeds it changing random operands for
// seconds, to show what that costs a GPU whose power is capped.
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <cstdint>

#include "gpu/build_target.hpp"
#include "gpu/device_buffer.hpp"
#include "kernels/common/bf16_tiles.cuh"
#include "kernels/common/mma.cuh"
#include "kernels/common/wgmma.cuh"
#include "kernels/common/wgmma_fp8.cuh"
#include "measuring/ceilings.hpp"
#include "measuring/microbenchmark.hpp"

namespace sgemm {

// The instruction for each input type: the values of K one step takes, the operands
// (near_one: 1 plus `units`, 0 to 6, small steps; never zero, so the sums stay finite), and
// one m64n256 step. Outside the file's unnamed namespace: where the build has no sm_90a the
// kernel's body is compiled away, and nvcc warns of unused functions with internal linkage.
struct WgmmaBf16Step {
    using Value = __nv_bfloat16;
    static constexpr int kStepK = 16;
    static __device__ Value near_one(int units) { return __float2bfloat16(1.0f + units / 64.0f); }
    static __device__ void mma(float (&d)[128], std::uint64_t a, std::uint64_t b) {
        wgmma_m64k16<256, false>(d, a, b);
    }
};

struct WgmmaE4m3Step {
    using Value = std::uint8_t;  // e4m3 bits, as the FP8 stages keep them
    static constexpr int kStepK = 32;
    // 0x38 is 1.0 in e4m3; each unit adds its last mantissa bit, 1/8.
    static __device__ Value near_one(int units) { return static_cast<Value>(0x38 + units); }
    static __device__ void mma(float (&d)[128], std::uint64_t a, std::uint64_t b) {
        wgmma_m64k32_e4m3<256>(d, a, b);
    }
};

namespace {

constexpr float kNeverTrue = 1.2345f;  // a sum the kernels below cannot produce in practice

// TFLOPS of the fastest of the timed launches of `launch`, each `flops` of work, with the
// SM clock that launch ran at.
ClockedValue fastest_tflops(double flops, const std::function<void()>& launch, cudaStream_t stream) {
    const FastestLaunch fastest = fastest_launch_with_clock(launch, stream);
    return ClockedValue{flops / (fastest.ms * 1e-3) / 1e12, fastest.clock_mhz};
}

// FFMA: eight chains x = x * m + a a thread, each waiting only on itself, so a warp has
// an FMA ready whenever the pipe (about 4 cycles deep) takes one. m and a are kernel
// arguments the compiler cannot fold; with m + a = 1 every x stays near 1.
constexpr int kFfmaChains = 8;
constexpr int kFfmaUnroll = 4;
constexpr int kFfmaIterations = 16384;  // about a millisecond on an H100
constexpr int kFfmaThreads = 256;

__global__ void ffma_throughput_kernel(float multiplier, float addend, float* sink) {
    float x[kFfmaChains];
#pragma unroll
    for (int c = 0; c < kFfmaChains; ++c) x[c] = 1.0f + 1e-3f * float(threadIdx.x + c);
    for (int iteration = 0; iteration < kFfmaIterations; ++iteration)
#pragma unroll
        for (int u = 0; u < kFfmaUnroll; ++u)
#pragma unroll
            for (int c = 0; c < kFfmaChains; ++c) x[c] = fmaf(x[c], multiplier, addend);
    float total = 0.0f;
#pragma unroll
    for (int c = 0; c < kFfmaChains; ++c) total += x[c];
    if (total == kNeverTrue) sink[threadIdx.x] = total;
}

// mma.sync: eight independent accumulator tiles a warp cover the instruction's latency.
constexpr int kMmaTiles = 8;
constexpr int kMmaIterations = 2048;
constexpr int kMmaWarpsPerBlock = 4;

// Operands near 1, never zero, so sums stay finite and no input is trivial.
struct MmaSyncBf16 {
    static constexpr double kFlops = 2.0 * 16 * 8 * 16;
    // A pair of bf16 values: 0x3F80 is 1.0, plus a few units in the last place.
    static __device__ unsigned operand(unsigned seed) { return 0x3F803F80u + (seed & 7); }
    static __device__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
        mma_bf16_16816(d, a, b);
    }
};

struct MmaSyncTf32 {
    static constexpr double kFlops = 2.0 * 16 * 8 * 8;
    // 1.0f plus a few units in the last of the 10 mantissa bits tf32 keeps.
    static __device__ unsigned operand(unsigned seed) { return 0x3F800000u + ((seed & 7) << 13); }
    static __device__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
        mma_tf32_1688(d, a, b);
    }
};

template <class Mma>
__global__ void mma_sync_throughput_kernel(float* sink) {
    unsigned a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = Mma::operand(threadIdx.x + i);
    for (int i = 0; i < 2; ++i) b[i] = Mma::operand(threadIdx.x * 3 + i);
    float acc[kMmaTiles][4] = {};
    for (int iteration = 0; iteration < kMmaIterations; ++iteration)
#pragma unroll
        for (int t = 0; t < kMmaTiles; ++t) Mma::mma(acc[t], a, b);
    float total = 0.0f;
#pragma unroll
    for (int t = 0; t < kMmaTiles; ++t) total += acc[t][0] + acc[t][1] + acc[t][2] + acc[t][3];
    if (total == kNeverTrue) sink[threadIdx.x] = total;
}

template <class Mma>
ClockedValue measure_mma_sync(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(32 * kMmaWarpsPerBlock);
    const int blocks = blocks_filling_gpu(mma_sync_throughput_kernel<Mma>, 32 * kMmaWarpsPerBlock, 0, device.sm_count);
    const double flops = Mma::kFlops * kMmaTiles * double(kMmaIterations) * blocks * kMmaWarpsPerBlock;
    return fastest_tflops(
        flops, [&] { mma_sync_throughput_kernel<Mma><<<blocks, 32 * kMmaWarpsPerBlock, 0, stream>>>(sink.data()); },
        stream);
}

// mma.sync sustained: the warp loop of stage 14 (kernels/14_multistage.cuh) without its
// global memory. Eight warps an SM, each with a 64x64 tile of m16n8k16 accumulators,
// load the next k16 step's fragments with ldmatrix between the rows of this step's
// mma.sync; the fragments come from random bf16 values in [-1, 1] in shared memory, a
// different 2 KB of A and of B at each of 8 steps, so every operand changes at every
// step as a GEMM's do. Switching real data costs energy: on a GPU that hits its power
// cap (the H100 at 700 W) the clock falls until the loop fits under it, so this is
// timed only after seconds back to back. What it measures is the most a GEMM on
// mma.sync could sustain on random inputs, before loading any of them from memory.
// Its fastest launch, with the clock it ran at, is a ceiling too (the warp loop): against
// the register-only ceiling at the same clock, what feeding the tensor cores through
// ldmatrix costs eight warps, without the copies and barriers of a GEMM.
constexpr int kSustainedThreads = 256;
constexpr int kSustainedMTiles = 4, kSustainedNTiles = 8;  // a 64x64 warp tile
constexpr int kSustainedSteps = 8;                         // k16 steps of distinct operands
constexpr int kSustainedStepBytes = 16 * 16 * 4 * sizeof(__nv_bfloat16);  // A's 64x16 or B's 16x64
constexpr int kSustainedIterations = 512;                  // of two steps: a few ms on an H100
constexpr double kSustainedWarmSeconds = 2.0, kSustainedMeasuredSeconds = 1.0;

// A bf16 value uniform in [-1, 1], never zero, from a hash of `index`.
__device__ __nv_bfloat16 random_bf16(unsigned index) {
    unsigned x = index * 2654435761u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return __float2bfloat16((float(x >> 8) + 0.5f) * (2.0f / 16777216.0f) - 1.0f);
}

__global__ void __launch_bounds__(kSustainedThreads, 1) mma_sync_sustained_kernel(float* sink) {
    constexpr int kRegionValues = kSustainedSteps * kSustainedStepBytes / sizeof(__nv_bfloat16);
    __shared__ alignas(16) __nv_bfloat16 operands[2 * kRegionValues];  // A's steps, then B's
    for (int i = threadIdx.x; i < 2 * kRegionValues; i += kSustainedThreads)
        operands[i] = random_bf16(blockIdx.x * 2 * kRegionValues + i);
    __syncthreads();

    // Lane l addresses 16 contiguous bytes: the 8 rows of each 8x8 matrix are one
    // 128-byte line, so ldmatrix meets no bank conflict. What matters here is only that
    // the values are random and differ from step to step.
    const unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(operands)) + threadIdx.x % 32 * 16;
    const unsigned b_base = a_base + kRegionValues * sizeof(__nv_bfloat16);
    constexpr int kRowBytes = kSustainedStepBytes / kSustainedMTiles;  // one ldmatrix_x4
    WarpFragments<kSustainedMTiles, kSustainedNTiles> fragments[2];
    const auto load_row = [&](WarpFragments<kSustainedMTiles, kSustainedNTiles>& f, int step, int mi) {
        const unsigned offset = step % kSustainedSteps * kSustainedStepBytes + mi * kRowBytes;
        ldmatrix_x4(f.a[mi], a_base + offset);
        load_b_fragment_pair(f, 2 * mi, b_base + offset);
    };
#pragma unroll
    for (int mi = 0; mi < kSustainedMTiles; ++mi) load_row(fragments[0], 0, mi);
    float acc[kSustainedMTiles][kSustainedNTiles][4] = {};
    for (int iteration = 0; iteration < kSustainedIterations; ++iteration)
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
            for (int mi = 0; mi < kSustainedMTiles; ++mi) {
                load_row(fragments[1 - s], 2 * iteration + s + 1, mi);
#pragma unroll
                for (int ni = 0; ni < kSustainedNTiles; ++ni)
                    mma_bf16_16816(acc[mi][ni], fragments[s].a[mi], fragments[s].b[ni]);
            }
    float total = 0.0f;
#pragma unroll
    for (int mi = 0; mi < kSustainedMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < kSustainedNTiles; ++ni)
            total += acc[mi][ni][0] + acc[mi][ni][1] + acc[mi][ni][2] + acc[mi][ni][3];
    if (total == kNeverTrue) sink[threadIdx.x] = total;
}

// wgmma: A (64 rows) and B (256 rows) tiles of one K tile each in shared memory, K-major
// with the 128-byte swizzle, the layout a TMA-fed Hopper GEMM uses: a K tile is one
// 128-byte swizzle row, 64 bf16 or 128 e4m3 values. Each iteration is what such a GEMM does
// for one K tile: its four 32-byte steps of K (k16 for bf16, k32 for e4m3) as m64n256
// wgmmas in one group, then a wait that leaves that group running while the next is
// issued. One warpgroup a block, as many blocks as fit (registers allow three an SM on an
// H100), so that one warpgroup issues while another waits. Both input types run the one
// kernel, so their figures differ only in the instruction.
constexpr int kWgmmaThreads = 128;
constexpr int kWgmmaRowBytes = 128;  // a K tile: one 128-byte swizzle row
constexpr int kWgmmaStepBytes = 32;  // of K, one instruction's
constexpr int kWgmmaSteps = kWgmmaRowBytes / kWgmmaStepBytes;
constexpr int kWgmmaIterations = 4096;
[[maybe_unused]] constexpr int kWgmmaSwizzlePatternBytes = 8 * kWgmmaRowBytes;  // used only with sm_90a

template <class Wgmma>
__global__ void __launch_bounds__(kWgmmaThreads) wgmma_throughput_kernel(float* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Value = typename Wgmma::Value;
    constexpr int kTileK = kWgmmaRowBytes / sizeof(Value);
    static_assert(Wgmma::kStepK * sizeof(Value) == kWgmmaStepBytes, "a step is 32 bytes of K");
    // Aligned to the swizzle pattern, so the descriptors' base offset is 0.
    __shared__ alignas(kWgmmaSwizzlePatternBytes) Value a_tile[64 * kTileK];
    __shared__ alignas(kWgmmaSwizzlePatternBytes) Value b_tile[256 * kTileK];
    for (int i = threadIdx.x; i < 64 * kTileK; i += kWgmmaThreads) a_tile[i] = Wgmma::near_one(i % 7);
    for (int i = threadIdx.x; i < 256 * kTileK; i += kWgmmaThreads) b_tile[i] = Wgmma::near_one(i % 5);
    fence_shared_for_wgmma();
    __syncthreads();

    std::uint64_t a[kWgmmaSteps], b[kWgmmaSteps];
#pragma unroll
    for (int step = 0; step < kWgmmaSteps; ++step) {
        // Leading offset unused with a swizzle (16 encodes the 1 the ISA assumes).
        a[step] = wgmma_descriptor(a_tile + Wgmma::kStepK * step, 16, kWgmmaSwizzlePatternBytes,
                                   WgmmaSwizzle::bytes128);
        b[step] = wgmma_descriptor(b_tile + Wgmma::kStepK * step, 16, kWgmmaSwizzlePatternBytes,
                                   WgmmaSwizzle::bytes128);
    }
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    for (int iteration = 0; iteration < kWgmmaIterations; ++iteration) {
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kWgmmaSteps; ++step) Wgmma::mma(d, a[step], b[step]);
        wgmma_commit_group();
        wgmma_wait_group<1>();
    }
    wgmma_wait_group<0>();
    wgmma_fence_accumulators(d);
    float total = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; ++i) total += d[i];
    if (total == kNeverTrue) sink[threadIdx.x] = total;
#endif
}

template <class Wgmma>
ClockedValue measure_wgmma(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(kWgmmaThreads);
    const int blocks = blocks_filling_gpu(wgmma_throughput_kernel<Wgmma>, kWgmmaThreads, 0, device.sm_count);
    const double flops = 2.0 * 64 * 256 * Wgmma::kStepK * kWgmmaSteps * double(kWgmmaIterations) * blocks;
    return fastest_tflops(
        flops, [&] { wgmma_throughput_kernel<Wgmma><<<blocks, kWgmmaThreads, 0, stream>>>(sink.data()); }, stream);
}

__global__ void wgmma_probe_kernel(int* compiled_in) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *compiled_in = 1;
#else
    *compiled_in = 0;
#endif
}

bool wgmma_compiled_in(cudaStream_t stream) {
    DeviceBuffer<int> flag(1);
    wgmma_probe_kernel<<<1, 1, 0, stream>>>(flag.data());
    CUDA_CHECK(cudaGetLastError());
    int compiled_in = 0;
    CUDA_CHECK(cudaMemcpyAsync(&compiled_in, flag.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return compiled_in == 1;
}

}  // namespace

std::optional<std::string> mma_sync_refusal(const DeviceInfo& device) {
    if (device.compute_capability < 80)
        return fmt::format("mma.sync with bf16 and tf32 needs sm_80 or newer; this GPU is sm_{}",
                           device.compute_capability);
    if (build_compute_capability() < 80)
        return fmt::format("mma.sync needs sm_80 code; this binary was built for sm_{} (make ARCH=...)",
                           build_compute_capability());
    return std::nullopt;
}

std::optional<std::string> wgmma_refusal(const DeviceInfo& device, cudaStream_t stream) {
    if (device.compute_capability != 90)
        return fmt::format("wgmma exists only on sm_90 (Hopper); this GPU is sm_{}", device.compute_capability);
    if (!wgmma_compiled_in(stream))
        return fmt::format("wgmma needs a build for sm_90a (make ARCH=90a); this binary was built for sm_{}",
                           build_compute_capability());
    return std::nullopt;
}

ClockedValue measure_ffma_tflops(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(kFfmaThreads);
    const int blocks = blocks_filling_gpu(ffma_throughput_kernel, kFfmaThreads, 0, device.sm_count);
    const double flops = 2.0 * kFfmaChains * kFfmaUnroll * double(kFfmaIterations) * blocks * kFfmaThreads;
    return fastest_tflops(
        flops, [&] { ffma_throughput_kernel<<<blocks, kFfmaThreads, 0, stream>>>(0.999f, 0.001f, sink.data()); },
        stream);
}

ClockedValue measure_mma_sync_bf16_tflops(const DeviceInfo& device, cudaStream_t stream) {
    return measure_mma_sync<MmaSyncBf16>(device, stream);
}

ClockedValue measure_mma_sync_tf32_tflops(const DeviceInfo& device, cudaStream_t stream) {
    return measure_mma_sync<MmaSyncTf32>(device, stream);
}

// The warp loop's grid and the FLOPs of one launch of it.
struct WarpLoopLaunch {
    int blocks;
    double flops;
};

WarpLoopLaunch warp_loop_launch(const DeviceInfo& device) {
    const int blocks = blocks_filling_gpu(mma_sync_sustained_kernel, kSustainedThreads, 0, device.sm_count);
    return WarpLoopLaunch{blocks, MmaSyncBf16::kFlops * kSustainedMTiles * kSustainedNTiles * 2.0 *
                                      kSustainedIterations * (kSustainedThreads / 32) * blocks};
}

ClockedValue measure_mma_sync_bf16_warp_loop_tflops(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(kSustainedThreads);
    const WarpLoopLaunch loop = warp_loop_launch(device);
    return fastest_tflops(
        loop.flops, [&] { mma_sync_sustained_kernel<<<loop.blocks, kSustainedThreads, 0, stream>>>(sink.data()); },
        stream);
}

double measure_mma_sync_bf16_sustained_tflops(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(kSustainedThreads);
    const WarpLoopLaunch loop = warp_loop_launch(device);
    const double ms = sustained_launch_ms(
        [&] { mma_sync_sustained_kernel<<<loop.blocks, kSustainedThreads, 0, stream>>>(sink.data()); }, stream,
        kSustainedWarmSeconds, kSustainedMeasuredSeconds);
    return loop.flops / (ms * 1e-3) / 1e12;
}

ClockedValue measure_wgmma_bf16_tflops(const DeviceInfo& device, cudaStream_t stream) {
    return measure_wgmma<WgmmaBf16Step>(device, stream);
}

ClockedValue measure_wgmma_fp8_tflops(const DeviceInfo& device, cudaStream_t stream) {
    return measure_wgmma<WgmmaE4m3Step>(device, stream);
}

}  // namespace sgemm

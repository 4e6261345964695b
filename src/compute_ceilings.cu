// The arithmetic ceilings: FFMA on the CUDA cores, mma.sync (bf16 and tf32) and wgmma
// (bf16) on the tensor cores. Every warp keeps the unit fed with instructions whose
// operands never change and are never loaded again, so nothing but the unit itself
// sets the rate.
#include <cuda_bf16.h>
#include <fmt/format.h>

#include "build_target.hpp"
#include "ceilings.hpp"
#include "device_buffer.hpp"
#include "kernels/common/mma.cuh"
#include "kernels/common/wgmma.cuh"
#include "microbenchmark.hpp"

namespace sgemm {
namespace {

constexpr float kNeverTrue = 1.2345f;  // a sum the kernels below cannot produce in practice

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
double measure_mma_sync_tflops(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(32 * kMmaWarpsPerBlock);
    const int blocks = blocks_filling_gpu(mma_sync_throughput_kernel<Mma>, 32 * kMmaWarpsPerBlock, 0, device.sm_count);
    const double flops = Mma::kFlops * kMmaTiles * double(kMmaIterations) * blocks * kMmaWarpsPerBlock;
    const double ms = fastest_launch_ms(
        [&] { mma_sync_throughput_kernel<Mma><<<blocks, 32 * kMmaWarpsPerBlock, 0, stream>>>(sink.data()); },
        stream);
    return flops / (ms * 1e-3) / 1e12;
}

// wgmma: A (64 x 64) and B (256 x 64) bf16 tiles in shared memory, K-major with the
// 128-byte swizzle, the layout a TMA-fed Hopper GEMM uses; each iteration is what such
// a GEMM does for one K tile: the four k16 steps as m64n256k16 wgmmas in one group,
// then a wait that leaves that group running while the next is issued. One warpgroup
// a block, as many blocks as fit (registers allow three an SM on an H100), so that one
// warpgroup issues while another waits.
constexpr int kWgmmaThreads = 128;
constexpr int kWgmmaTileK = 64;  // one 128-byte swizzle row
constexpr int kWgmmaSteps = kWgmmaTileK / 16;
constexpr int kWgmmaIterations = 4096;
constexpr int kWgmmaSwizzlePatternBytes = 1024;  // 8 rows of 128 bytes
static_assert(kWgmmaTileK * sizeof(__nv_bfloat16) * 8 == kWgmmaSwizzlePatternBytes, "a tile row is a swizzle row");

__global__ void __launch_bounds__(kWgmmaThreads) wgmma_throughput_kernel(float* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Aligned to the swizzle pattern, so the descriptors' base offset is 0.
    __shared__ alignas(kWgmmaSwizzlePatternBytes) __nv_bfloat16 a_tile[64 * kWgmmaTileK];
    __shared__ alignas(kWgmmaSwizzlePatternBytes) __nv_bfloat16 b_tile[256 * kWgmmaTileK];
    for (int i = threadIdx.x; i < 64 * kWgmmaTileK; i += kWgmmaThreads)
        a_tile[i] = __float2bfloat16(1.0f + (i % 7) / 64.0f);
    for (int i = threadIdx.x; i < 256 * kWgmmaTileK; i += kWgmmaThreads)
        b_tile[i] = __float2bfloat16(1.0f + (i % 5) / 64.0f);
    fence_shared_for_wgmma();
    __syncthreads();

    std::uint64_t a[kWgmmaSteps], b[kWgmmaSteps];
#pragma unroll
    for (int step = 0; step < kWgmmaSteps; ++step) {
        // Leading offset unused with a swizzle (16 encodes the 1 the ISA assumes).
        a[step] = wgmma_descriptor(a_tile + 16 * step, 16, kWgmmaSwizzlePatternBytes, WgmmaSwizzle::bytes128);
        b[step] = wgmma_descriptor(b_tile + 16 * step, 16, kWgmmaSwizzlePatternBytes, WgmmaSwizzle::bytes128);
    }
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    for (int iteration = 0; iteration < kWgmmaIterations; ++iteration) {
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kWgmmaSteps; ++step) wgmma_m64n256k16_bf16(d, a[step], b[step]);
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

double measure_ffma_tflops(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(kFfmaThreads);
    const int blocks = blocks_filling_gpu(ffma_throughput_kernel, kFfmaThreads, 0, device.sm_count);
    const double flops = 2.0 * kFfmaChains * kFfmaUnroll * double(kFfmaIterations) * blocks * kFfmaThreads;
    const double ms = fastest_launch_ms(
        [&] { ffma_throughput_kernel<<<blocks, kFfmaThreads, 0, stream>>>(0.999f, 0.001f, sink.data()); }, stream);
    return flops / (ms * 1e-3) / 1e12;
}

double measure_mma_sync_bf16_tflops(const DeviceInfo& device, cudaStream_t stream) {
    return measure_mma_sync_tflops<MmaSyncBf16>(device, stream);
}

double measure_mma_sync_tf32_tflops(const DeviceInfo& device, cudaStream_t stream) {
    return measure_mma_sync_tflops<MmaSyncTf32>(device, stream);
}

double measure_wgmma_bf16_tflops(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<float> sink(kWgmmaThreads);
    const int blocks = blocks_filling_gpu(wgmma_throughput_kernel, kWgmmaThreads, 0, device.sm_count);
    const double flops = 2.0 * 64 * 256 * 16 * kWgmmaSteps * double(kWgmmaIterations) * blocks;
    const double ms = fastest_launch_ms(
        [&] { wgmma_throughput_kernel<<<blocks, kWgmmaThreads, 0, stream>>>(sink.data()); }, stream);
    return flops / (ms * 1e-3) / 1e12;
}

}  // namespace sgemm

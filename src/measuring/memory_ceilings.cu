// The memory ceilings: DRAM (a copy far larger than L2), L2 (every SM re-reading a
// buffer that stays in L2) and shared memory (every block re-reading its own tile).
// All accesses are 16 bytes, the widest one thread can make, so that the memory and not
// the instruction count sets the rate; a GEMM's tiles move the same way.
#include <algorithm>
#include <cstdint>

#include "gpu/device_buffer.hpp"
#include "verification/input_data.hpp"
#include "measuring/ceilings.hpp"
#include "measuring/microbenchmark.hpp"

namespace sgemm {
namespace {

constexpr unsigned kNeverTrue = 0x9E3779B9u;  // a checksum taken to be impossible in practice
constexpr int kThreads = 256;

// DRAM: 1 GiB read and 1 GiB written (less where the GPU has less than 4 GiB free).
constexpr std::size_t kCopyBytes = std::size_t{1} << 30;

__global__ void copy_kernel(const uint4* __restrict__ source, uint4* __restrict__ destination, std::size_t count) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
    // Four loads in flight before the first store has to wait for one.
    for (; i + 3 * stride < count; i += 4 * stride) {
        const uint4 v0 = source[i];
        const uint4 v1 = source[i + stride];
        const uint4 v2 = source[i + 2 * stride];
        const uint4 v3 = source[i + 3 * stride];
        destination[i] = v0;
        destination[i + stride] = v1;
        destination[i + 2 * stride] = v2;
        destination[i + 3 * stride] = v3;
    }
    for (; i < count; i += stride) destination[i] = source[i];
}

// L2: a quarter of L2, not half. The L2 of an A100 or H100 is two partitions, and a line
// that SMs on both sides read may be held in both, so half of it need not stay resident.
constexpr int kL2Passes = 1024;

// ld.global.cg: cached in L2 only, so every pass is served by L2, not by the SM's L1.
__device__ __forceinline__ uint4 load_from_l2(const uint4* address) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(address));
    return v;
}

// A full grid leaves each thread only a few words a pass: they are loaded together, so
// that a warp has several loads in flight, not one at a time.
constexpr int kL2LoadsInFlight = 4;

__global__ void l2_read_kernel(const uint4* data, std::size_t count, unsigned* sink) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    const std::size_t first = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
    unsigned sum = 0;
    for (int pass = 0; pass < kL2Passes; ++pass)
        for (std::size_t i = first; i < count; i += kL2LoadsInFlight * stride) {
            uint4 v[kL2LoadsInFlight];
#pragma unroll
            for (int k = 0; k < kL2LoadsInFlight; ++k)
                v[k] = i + k * stride < count ? load_from_l2(data + i + k * stride) : uint4{};
#pragma unroll
            for (int k = 0; k < kL2LoadsInFlight; ++k) sum += v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
        }
    if (sum == kNeverTrue) sink[threadIdx.x] = sum;
}

// Shared memory: each thread reads kSharedLoads 16-byte words a pass. A warp's load
// covers 512 consecutive bytes, four 128-byte wavefronts without a bank conflict.
constexpr int kSharedLoads = 4;
constexpr int kSharedPasses = 4096;

// ld.volatile: the tile never changes, and a plain load of it could be hoisted out of
// the loop; a volatile one is executed every time it is written.
__device__ __forceinline__ uint4 load_shared(unsigned address) {
    uint4 v;
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(address));
    return v;
}

__global__ void __launch_bounds__(kThreads) shared_read_kernel(unsigned* sink) {
    __shared__ uint4 tile[kSharedLoads * kThreads];
    unsigned addresses[kSharedLoads];
#pragma unroll
    for (int j = 0; j < kSharedLoads; ++j) {
        const int index = j * kThreads + threadIdx.x;
        tile[index] = make_uint4(index + 1, blockIdx.x + 1, j + 1, threadIdx.x + 1);
        addresses[j] = static_cast<unsigned>(__cvta_generic_to_shared(&tile[index]));
    }
    __syncthreads();
    unsigned sum = 0;
    for (int pass = 0; pass < kSharedPasses; ++pass)
#pragma unroll
        for (int j = 0; j < kSharedLoads; ++j) {
            const uint4 v = load_shared(addresses[j]);
            sum += v.x ^ v.y ^ v.z ^ v.w;
        }
    if (sum == kNeverTrue) sink[threadIdx.x] = sum;
}

double terabytes_per_second(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e12; }

}  // namespace

double measure_dram_copy_tbps(const DeviceInfo& device, cudaStream_t stream) {
    const std::size_t bytes = std::min(kCopyBytes, device.free_memory_bytes / 4) / sizeof(uint4) * sizeof(uint4);
    DeviceBuffer<float> source(bytes / sizeof(float));
    DeviceBuffer<float> destination(bytes / sizeof(float));
    fill_input(source.data(), Operand::a, 1, source.size(), 1, InputData::uniform, stream);
    const auto* from = reinterpret_cast<const uint4*>(source.data());
    auto* to = reinterpret_cast<uint4*>(destination.data());
    const std::size_t count = bytes / sizeof(uint4);
    const int blocks = blocks_filling_gpu(copy_kernel, kThreads, 0, device.sm_count);
    const double ms = fastest_launch_ms([&] { copy_kernel<<<blocks, kThreads, 0, stream>>>(from, to, count); }, stream);
    return terabytes_per_second(2.0 * bytes, ms);
}

double measure_l2_read_tbps(const DeviceInfo& device, cudaStream_t stream) {
    const std::size_t bytes = device.l2_bytes / 4 / sizeof(uint4) * sizeof(uint4);
    DeviceBuffer<float> data(bytes / sizeof(float));
    DeviceBuffer<unsigned> sink(kThreads);
    fill_input(data.data(), Operand::a, 1, data.size(), 2, InputData::uniform, stream);
    const auto* words = reinterpret_cast<const uint4*>(data.data());
    const std::size_t count = bytes / sizeof(uint4);
    const int blocks = blocks_filling_gpu(l2_read_kernel, kThreads, 0, device.sm_count);
    // The warm-up launch leaves the buffer in L2 for the timed ones.
    const double ms = fastest_launch_ms(
        [&] { l2_read_kernel<<<blocks, kThreads, 0, stream>>>(words, count, sink.data()); }, stream);
    return terabytes_per_second(double(bytes) * kL2Passes, ms);
}

double measure_shared_memory_read_tbps(const DeviceInfo& device, cudaStream_t stream) {
    DeviceBuffer<unsigned> sink(kThreads);
    const int blocks = blocks_filling_gpu(shared_read_kernel, kThreads, 0, device.sm_count);
    const double ms =
        fastest_launch_ms([&] { shared_read_kernel<<<blocks, kThreads, 0, stream>>>(sink.data()); }, stream);
    const double bytes = double(blocks) * kThreads * kSharedLoads * sizeof(uint4) * kSharedPasses;
    return terabytes_per_second(bytes, ms);
}

}  // namespace sgemm

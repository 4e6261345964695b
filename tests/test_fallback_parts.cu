// The FP32 fallback's split of K on the GPU (k_parts_by_warp, 22_fp32_fallback.cuh), a warp's
// lanes weighing the numbers of parts at once, gives what stage 10's k_parts gives on the host
// one number at a time: the host sizes the fallback's grid by one, its blocks find their work
// by the other.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "22_fp32_fallback.cuh"
#include "gpu/device_buffer.hpp"
#include "skip_markers.hpp"

namespace sgemm {
namespace {

struct PartsQuestion {
    int tiles, k_tiles, slots;
};

__global__ void k_parts_by_warp_kernel(const PartsQuestion* questions, int* answers, int count) {
    const int question = blockIdx.x;  // one warp a question
    if (question >= count) return;
    const int parts = k_parts_by_warp(questions[question].tiles, questions[question].k_tiles, questions[question].slots);
    if (threadIdx.x == 0) answers[question] = parts;
}

TEST(FallbackParts, AWarpWeighsThePartsAsStage10DoesOneByOne) {
    SGEMM_SKIP_WITHOUT_GPU();
    std::vector<PartsQuestion> questions;
    for (const int slots : {0, 1, 132, 264, 396, 528})
        for (const int tiles : {1, 2, 3, 7, 16, 31, 32, 64, 100, 131, 263, 264, 265, 500, 1000, 5000})
            for (const int k_tiles : {1, 15, 16, 31, 32, 48, 64, 100, 256, 257, 512, 1000, 1024, 4096})
                questions.push_back({tiles, k_tiles, slots});
    const int count = static_cast<int>(questions.size());
    DeviceBuffer<PartsQuestion> on_gpu(questions.size());
    DeviceBuffer<int> answers(questions.size());
    ASSERT_EQ(cudaMemcpy(on_gpu.data(), questions.data(), questions.size() * sizeof(PartsQuestion), cudaMemcpyHostToDevice),
              cudaSuccess);
    k_parts_by_warp_kernel<<<count, 32>>>(on_gpu.data(), answers.data(), count);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<int> got(questions.size());
    ASSERT_EQ(cudaMemcpy(got.data(), answers.data(), got.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    int split = 0;
    for (int i = 0; i < count; ++i) {
        const PartsQuestion& q = questions[i];
        const int expected = k_parts(q.tiles, q.k_tiles, q.slots);
        split += expected > 1;
        EXPECT_EQ(got[i], expected) << q.tiles << " tiles, " << q.k_tiles << " K tiles, " << q.slots << " slots";
    }
    EXPECT_GT(split, count / 10);  // the questions include many splits, not only 1 part
}

}  // namespace
}  // namespace sgemm

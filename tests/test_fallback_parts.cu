// The FP32 fallback's split of K on the GPU (k_parts_by_warp, 22_fp32_fallback.cuh), a warp's
// lanes weighing the numbers of parts at once, gives what stage 10's k_parts gives on the host
// one number at a time: the host sizes the fallback's grid by one, its blocks find their work
// by the other. And where every row fails the split's check and the tiles outnumber the
// fallback's units, the whole problem is stage 10's own launch, K in its parts.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "10_tuned.hpp"
#include "22_fp32_fallback.cuh"
#include "22_split_fp16.hpp"
#include "23_split_in_registers.hpp"
#include "gpu/device_buffer.hpp"
#include "skip_markers.hpp"
#include "verification/input_data.hpp"

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

// 3000 x 3000 x 1024 on graded data (A's column k scaled by 2^-g, B's row k by 2^g: every row
// fails the split's check): 576 tiles of 128 x 128, more than the fallback's kernel's units
// can split, so they would leave K whole; stage 10's launcher splits it (k_parts). The split
// stages' result is stage 10's own launcher's, bit for bit: the same tile, parts and sum,
// alpha and beta not 1.
TEST(FallbackParts, WholeProblemIsStage10sOwnLaunchKInItsParts) {
    SGEMM_SKIP_WITHOUT_GPU();
    const GemmProblem problem{{3000, 3000, 1024}, 0.75f, -1.5f};
    const GemmShape& s = problem.shape;
    using Tuned = std::tuple_element_t<kTunedTileId, Stage10TileConfigs>;
    const int fallback_slots =
        resident_blocks(fp32_fallback_kernel<Tuned>, Tuned::kThreads, kFallbackSharedBytes<Tuned>);
    ASSERT_TRUE(whole_problem_on_stage_10<Tuned>(s, fallback_slots)) << "the fallback's units would leave K whole";
    ASSERT_GT(whole_problem_parts<Tuned>(s), 1) << "stage 10's launcher splits K here";
    const std::size_t values_a = std::size_t(s.m) * s.k, values_b = std::size_t(s.k) * s.n,
                      values_c = std::size_t(s.m) * s.n;
    DeviceBuffer<float> a(values_a), b(values_b), c_in(values_c), c_stage10(values_c), c_split(values_c);
    fill_input(a.data(), Operand::a, s.m, s.k, 74, InputData::graded, nullptr);
    fill_input(b.data(), Operand::b, s.k, s.n, 74, InputData::graded, nullptr);
    fill_input(c_in.data(), Operand::c, s.m, s.n, 74, InputData::graded, nullptr);
    const auto copy_c = [&](float* to) {
        ASSERT_EQ(cudaMemcpy(to, c_in.data(), values_c * sizeof(float), cudaMemcpyDeviceToDevice), cudaSuccess);
    };
    const auto host = [&](const float* from) {
        std::vector<float> out(values_c);
        EXPECT_EQ(cudaMemcpy(out.data(), from, values_c * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        return out;
    };
    copy_c(c_stage10.data());
    launch_tuned(problem, a.data(), b.data(), c_stage10.data(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> expected = host(c_stage10.data());
    for (const int stage : {22, 23}) {
        copy_c(c_split.data());
        if (stage == 22) launch_split_fp16(problem, a.data(), b.data(), c_split.data(), nullptr);
        if (stage == 23) launch_split_in_registers(problem, a.data(), b.data(), c_split.data(), nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<float> got = host(c_split.data());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < values_c; ++i) differ += std::memcmp(&got[i], &expected[i], sizeof(float)) != 0;
        EXPECT_EQ(differ, 0u) << "stage " << stage << ": values unlike stage 10's own launcher's";
    }
}

}  // namespace
}  // namespace sgemm

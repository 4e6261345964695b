// The binary as a user meets it: bad input never crashes or hangs, and each mistake
// gets exactly one line on stderr and a non-zero exit status. The suite BinaryOnGpu runs
// stages and measures ceilings: CTest gives it the GPU alone (tests/CMakeLists.txt), and
// without a GPU it reports skipped.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "driver/stage_registry.hpp"
#include "driver/stage_runner.hpp"
#include "gpu/device_info.hpp"
#include "scratch_file.hpp"
#include "skip_markers.hpp"

namespace sgemm {
namespace {

struct ProcessResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string slurp(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// The binaries under test: SGEMM_BINARY and SGEMM_MODEL_BINARY in the environment (to run a
// build copied to another machine), else the ones this test was built with.
std::string binary_path(const char* variable = "SGEMM_BINARY", const char* built = SGEMM_BINARY) {
    const char* from_environment = std::getenv(variable);
    return from_environment != nullptr ? from_environment : built;
}

std::string model_binary_path() { return binary_path("SGEMM_MODEL_BINARY", SGEMM_MODEL_BINARY); }

ProcessResult run_binary(const std::string& binary, const std::string& arguments, const std::string& environment) {
    const ScratchFile out("sgemm_cli_out"), err("sgemm_cli_err");
    const std::string command = environment + " timeout 120 " + binary + " " + arguments + " >" +
                                out.path().string() + " 2>" + err.path().string() + " </dev/null";
    const int status = std::system(command.c_str());
    return ProcessResult{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out.path()), slurp(err.path())};
}

ProcessResult run_sgemm(const std::string& arguments, const std::string& environment = "") {
    return run_binary(binary_path(), arguments, environment);
}

int count_lines(const std::string& text) {
    int lines = 0;
    for (const char ch : text) lines += ch == '\n';
    return lines;
}

void expect_one_line_error(const ProcessResult& result, int exit_code, const std::string& part) {
    EXPECT_EQ(result.exit_code, exit_code) << result.err;
    EXPECT_EQ(count_lines(result.err), 1) << result.err;
    EXPECT_EQ(result.err.rfind("sgemm: error: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
    EXPECT_EQ(result.out, "");
}

TEST(Binary, NoArgumentsPrintsUsageAndStages) {
    const ProcessResult result = run_sgemm("");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_NE(result.out.find("Usage"), std::string::npos);
    EXPECT_NE(result.out.find("shared_memory_tiling"), std::string::npos);
    EXPECT_EQ(result.err, "");
}

TEST(Binary, ListPrintsEveryStage) {
    const ProcessResult result = run_sgemm("--list");
    EXPECT_EQ(result.exit_code, 0);
    for (const char* name : {"cublas", "naive", "global_coalescing", "shared_memory_tiling", "double_buffering",
                             "1d_blocktiling", "2d_blocktiling", "a_in_registers"})
        EXPECT_NE(result.out.find(name), std::string::npos) << name;
    // The tracks after the stages.
    const std::size_t tracks = result.out.find("track");
    ASSERT_NE(tracks, std::string::npos) << result.out;
    EXPECT_GT(tracks, result.out.find("a_in_registers"));
    for (const char* track : {"\n   fp32  ", "\n   bf16  ", "\nfp32-tc  "})
        EXPECT_NE(result.out.find(track, tracks), std::string::npos) << track << result.out;
}

// sgemm_model on a GPU it is told of (--gpu-as, an H100's answers), with no GPU asked: the
// terms and predictions of stages 20 and 25 for each shape, and the track's choice.
TEST(ModelTool, ModelsAGpuItIsToldOf) {
    const ScratchFile csv("sgemm_model.csv");
    const ProcessResult result = run_binary(model_binary_path(),
                                            "--gpu-as 132 132 132 117 120 110 102 105 120 --shapes 8x8192x8192 "
                                            "4096x4096x4096 --csv " + csv.path().string(), "");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("132 132 117 120 110 102 105 120"), std::string::npos) << result.out;
    const std::string rows = slurp(csv.path());
    EXPECT_EQ(count_lines(rows), 5) << rows;
    EXPECT_EQ(rows.rfind("m,n,k,kernel,dram_bytes,sm_steps,step_bytes,step_macs,split_bytes,copy_bytes,predicted_us,"
                         "chosen\n", 0), 0u);
    EXPECT_NE(rows.find("\n8,8192,8192,25,"), std::string::npos) << rows;
    // The choice: stage 25 for 8 tokens, stage 20 for the square.
    const auto chosen = [&](const std::string& start) {
        const std::size_t row = rows.find("\n" + start);
        return rows.substr(rows.find('\n', row + 1) - 1, 1);
    };
    EXPECT_EQ(chosen("8,8192,8192,25,"), "1");
    EXPECT_EQ(chosen("8,8192,8192,20,"), "0");
    EXPECT_EQ(chosen("4096,4096,4096,20,"), "1");
    const ProcessResult short_list = run_binary(model_binary_path(), "--gpu-as 132 132 --shapes 8x8x8 --csv x.csv", "");
    EXPECT_NE(short_list.exit_code, 0);
}

TEST(Binary, UnknownStage) { expect_one_line_error(run_sgemm("42 128"), 2, "unknown stage or track '42'"); }
TEST(Binary, ZeroSize) { expect_one_line_error(run_sgemm("1 0"), 2, "positive integer"); }
TEST(Binary, NegativeSize) { expect_one_line_error(run_sgemm("1 -- -7"), 2, "positive integer"); }
TEST(Binary, NegativeLookingOption) { expect_one_line_error(run_sgemm("1 -7"), 2, ""); }
TEST(Binary, SizeNotANumber) { expect_one_line_error(run_sgemm("1 lots"), 2, "positive integer"); }
TEST(Binary, SizeOverflowsIndexing) { expect_one_line_error(run_sgemm("1 50000"), 2, "2^31"); }
TEST(Binary, UnknownOption) { expect_one_line_error(run_sgemm("1 64 --fast"), 2, "--fast"); }
TEST(Binary, ShapeTheStageCannotDo) {
    expect_one_line_error(run_sgemm("5 100"), 2, "stage 5 (2d_blocktiling) needs");
}

TEST(Binary, Bf16OutputOnAStageThatWritesFp32Only) {
    expect_one_line_error(run_sgemm("10 256 --c-type bf16"), 2, "stage 10 (tuned) writes FP32 C only");
    expect_one_line_error(run_sgemm("20 -m 256 -n 100 -k 64 --c-type bf16"), 2,
                          "stage 20 (hopper_tuned) writes bf16 C where N and K are multiples of 8");
}

TEST(Binary, NoGpuPresent) {
    expect_one_line_error(run_sgemm("1 64", "CUDA_VISIBLE_DEVICES="), 1, "no usable CUDA GPU");
}

TEST(Binary, PeakWithoutGpu) {
    expect_one_line_error(run_sgemm("peak", "CUDA_VISIBLE_DEVICES="), 1, "no usable CUDA GPU");
}

TEST(Binary, UnknownTimingMethod) { expect_one_line_error(run_sgemm("1 64 --timing alone"), 2, "--timing"); }

TEST(Binary, PeakWithASize) { expect_one_line_error(run_sgemm("peak 4096"), 2, "peak takes no size"); }

TEST(BinaryOnGpu, PeakWritesCeilingsCsv) {
    SGEMM_SKIP_WITHOUT_GPU();
    const ScratchFile csv("sgemm_cli_ceilings.csv");
    const ProcessResult result = run_sgemm("peak --csv " + csv.path().string());
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("fp32_ffma"), std::string::npos) << result.out;
    const std::string text = slurp(csv.path());
    EXPECT_EQ(text.rfind("ceiling,unit,value,gpu,sm_clock_mhz\nfp32_ffma,TFLOPS,", 0), 0u) << text;
    EXPECT_NE(text.find("\ndram,TB/s,"), std::string::npos) << text;
    // The fastest-launch ceilings carry the clock their launch ran at; the FFMA one first.
    const std::size_t ffma_start = text.find('\n') + 1;
    const std::string ffma_line = text.substr(ffma_start, text.find('\n', ffma_start) - ffma_start);
    EXPECT_FALSE(ffma_line.empty() || ffma_line.back() == ',') << ffma_line;
}

TEST(BinaryOnGpu, ProblemTooLargeForGpuMemory) {
    SGEMM_SKIP_WITHOUT_GPU();
    const GemmProblem problem{GemmShape{46000, 46000, 46000}, 1.0f, 0.0f};
    const DeviceInfo device = query_device();
    const std::optional<std::string> refusal =
        device_bytes_needed(problem, true, device.l2_bytes) <= device.free_memory_bytes
            ? std::optional<std::string>("this GPU has memory for the largest problem the kernels can index")
            : std::nullopt;
    SGEMM_SKIP_IF_REFUSED(refusal);
    expect_one_line_error(run_sgemm("3 46000"), 1, "GiB of GPU memory");
}

TEST(BinaryOnGpu, ProfileModeLaunchesOnce) {
    SGEMM_SKIP_WITHOUT_GPU();
    const ProcessResult result = run_sgemm("7 256 --profile");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("profiled one launch of stage 7"), std::string::npos) << result.out;
    const ProcessResult cublas = run_sgemm("7 256 --profile-cublas");
    EXPECT_EQ(cublas.exit_code, 0) << cublas.err;
    EXPECT_NE(cublas.out.find("profiled one launch of the cuBLAS call timed against stage 7"), std::string::npos)
        << cublas.out;
}

TEST(BinaryOnGpu, RunsAndVerifiesOnAGpu) {
    SGEMM_SKIP_WITHOUT_GPU();
    const ScratchFile csv("sgemm_cli_rows.csv");
    const ProcessResult result = run_sgemm("all 256 --reps 2 --beta 0.5 --csv " + csv.path().string());
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("PASS"), std::string::npos);
    EXPECT_EQ(result.out.find("FAIL"), std::string::npos);
    EXPECT_EQ(count_lines(slurp(csv.path())), 1 + static_cast<int>(all_stages().size()))
        << "header and one row per stage";
}

// A track's run names the kernel it chose, on the screen and in the CSV's last column.
TEST(BinaryOnGpu, TrackRunsTheKernelItChooses) {
    SGEMM_SKIP_WITHOUT_GPU();
    const ScratchFile csv("sgemm_cli_track.csv");
    const ProcessResult result = run_sgemm("fp32 -m 300 -n 200 -k 100 --reps 2 --csv " + csv.path().string());
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("track fp32"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("kernel  stage 10's (tuned)"), std::string::npos) << result.out;
    const std::string text = slurp(csv.path());
    const std::string row = text.substr(text.find('\n') + 1);
    EXPECT_EQ(row.rfind("fp32,fp32,", 0), 0u) << row;
    EXPECT_NE(row.find(",10\n"), std::string::npos) << row;
}

TEST(BinaryOnGpu, TimesInBlocksAndSaysSo) {
    SGEMM_SKIP_WITHOUT_GPU();
    const ScratchFile csv("sgemm_cli_blocks.csv");
    const ProcessResult result = run_sgemm("7 512 --timing blocks --csv " + csv.path().string());
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("in turns of 0.5 s"), std::string::npos) << result.out;
    EXPECT_NE(slurp(csv.path()).find(",blocks,"), std::string::npos);
}

}  // namespace
}  // namespace sgemm

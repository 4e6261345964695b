#include "tools/cublaslt_kernels.hpp"

#include <cupti.h>
#include <fmt/format.h>

#include <array>
#include <set>
#include <stdexcept>
#include <utility>

#include "gpu/cuda_check.hpp"

namespace sgemm {
namespace {

// cuBLAS's default workspace on Hopper; the configurations that want more are left out.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
constexpr int kMaxAlgorithmIds = 256;

void check_cupti(CUptiResult status, const char* call) {
    if (status == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    cuptiGetResultString(status, &text);
    throw std::runtime_error(fmt::format("{} failed: {} (CUPTI allows one subscriber: not under a profiler)",
                                         call, text != nullptr ? text : "unknown CUPTI error"));
}

// While alive, records the name of every kernel launched, through CUPTI's callbacks on
// the driver's launch calls.
class LaunchedKernelNames {
public:
    LaunchedKernelNames() {
        check_cupti(cuptiSubscribe(&subscriber_, &on_driver_call, &names_), "cuptiSubscribe");
        check_cupti(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain");
    }
    ~LaunchedKernelNames() { cuptiUnsubscribe(subscriber_); }
    LaunchedKernelNames(const LaunchedKernelNames&) = delete;
    LaunchedKernelNames& operator=(const LaunchedKernelNames&) = delete;

    std::string take() { return std::exchange(names_, std::string{}); }

private:
    static void CUPTIAPI on_driver_call(void* names, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
        const auto* call = static_cast<const CUpti_CallbackData*>(data);
        // Only kernel launches carry a symbol name.
        if (call->callbackSite != CUPTI_API_ENTER || call->symbolName == nullptr) return;
        auto& joined = *static_cast<std::string*>(names);
        if (!joined.empty()) joined += " + ";
        joined += call->symbolName;
    }

    CUpti_SubscriberHandle subscriber_ = nullptr;
    std::string names_;
};

template <class T>
T config_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
    T value{};
    std::size_t written = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written));
    return value;
}

std::string describe(const cublasLtMatmulAlgo_t& algo) {
    return fmt::format("algo {} tile {} stages {} split-k {} swizzle {} option {} inner {} cluster {}",
                       config_attribute<int>(algo, CUBLASLT_ALGO_CONFIG_ID),
                       config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                       config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                       config_attribute<int>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                       config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                       config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
                       config_attribute<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID),
                       config_attribute<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
}

// The values a capability lists (tile or stages ids); {0}, the library's choice, when none.
std::vector<std::uint32_t> capability_list(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
    std::size_t bytes = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, cap, nullptr, 0, &bytes));
    if (bytes == 0) return {0};
    std::vector<std::uint32_t> values(bytes / sizeof(std::uint32_t));
    CUBLAS_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, cap, values.data(), bytes, &bytes));
    return values;
}

}  // namespace

bool named_for_hopper_or_later(std::string_view kernel_name) {
    constexpr std::array<std::string_view, 4> kMarks{"sm90", "sm100", "sm120", "nvjet"};
    for (const std::string_view mark : kMarks)
        if (kernel_name.find(mark) != std::string_view::npos) return true;
    return false;
}

CublasLt::CublasLt(const GemmProblem& problem) : problem_(problem), workspace_(kWorkspaceBytes) {
    const auto [m, n, k] = problem.shape;
    CUBLAS_CHECK(cublasLtCreate(&handle_));
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&operation_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_16BF, n, k, n));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, CUDA_R_16BF, k, m, k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout_, CUDA_R_32F, n, m, n));
}

CublasLt::~CublasLt() {
    cublasLtMatrixLayoutDestroy(c_layout_);
    cublasLtMatrixLayoutDestroy(b_layout_);
    cublasLtMatrixLayoutDestroy(a_layout_);
    cublasLtMatmulDescDestroy(operation_);
    cublasLtDestroy(handle_);
}

int CublasLt::version() const { return static_cast<int>(cublasLtGetVersion()); }

std::vector<CublasLtKernel> CublasLt::kernels(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                                              cudaStream_t stream) const {
    std::vector<CublasLtKernel> found;
    std::set<std::string> seen;
    const auto add = [&](const cublasLtMatmulAlgo_t& algo) {
        cublasLtMatmulHeuristicResult_t check{};
        if (cublasLtMatmulAlgoCheck(handle_, operation_, a_layout_, b_layout_, c_layout_, c_layout_, &algo,
                                    &check) != CUBLAS_STATUS_SUCCESS ||
            check.workspaceSize > kWorkspaceBytes)
            return;
        std::string config = describe(algo);
        if (seen.insert(config).second) found.push_back({algo, std::move(config), "", check.workspaceSize});
    };

    // The heuristic's picks (with the cluster shapes and options it chooses), then every
    // algorithm with every tile and pipeline depth it lists, with and without swizzling.
    std::array<cublasLtMatmulHeuristicResult_t, 64> picks{};
    int pick_count = 0;
    cublasLtMatmulPreference_t preference = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const std::size_t workspace_bytes = kWorkspaceBytes;
    const cublasStatus_t heuristic_status = [&] {
        const cublasStatus_t set = cublasLtMatmulPreferenceSetAttribute(
            preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes);
        if (set != CUBLAS_STATUS_SUCCESS) return set;
        return cublasLtMatmulAlgoGetHeuristic(handle_, operation_, a_layout_, b_layout_, c_layout_, c_layout_,
                                              preference, static_cast<int>(picks.size()), picks.data(), &pick_count);
    }();
    cublasLtMatmulPreferenceDestroy(preference);
    CUBLAS_CHECK(heuristic_status);
    for (int i = 0; i < pick_count; ++i) add(picks[i].algo);

    std::array<int, kMaxAlgorithmIds> ids{};
    int id_count = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoGetIds(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF,
                                          CUDA_R_32F, CUDA_R_32F, kMaxAlgorithmIds, ids.data(), &id_count));
    for (int i = 0; i < id_count; ++i) {
        cublasLtMatmulAlgo_t algo{};
        if (cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,
                                   CUDA_R_32F, ids[i], &algo) != CUBLAS_STATUS_SUCCESS)
            continue;
        for (std::uint32_t tile : capability_list(algo, CUBLASLT_ALGO_CAP_TILE_IDS))
            for (std::uint32_t stages : capability_list(algo, CUBLASLT_ALGO_CAP_STAGES_IDS))
                for (std::uint32_t swizzle : {0u, 1u}) {
                    cublasLtMatmulAlgo_t variant = algo;
                    CUBLAS_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&variant, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                                                      &tile, sizeof tile));
                    CUBLAS_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&variant, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                                                      &stages, sizeof stages));
                    CUBLAS_CHECK(cublasLtMatmulAlgoConfigSetAttribute(
                        &variant, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle));
                    add(variant);
                }
    }

    LaunchedKernelNames names;
    for (CublasLtKernel& kernel : found) {
        gemm(kernel, a, b, c, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        kernel.kernel_name = names.take();
    }
    return found;
}

void CublasLt::gemm(const CublasLtKernel& kernel, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                    cudaStream_t stream) const {
    CUBLAS_CHECK(cublasLtMatmul(handle_, operation_, &problem_.alpha, b, a_layout_, a, b_layout_, &problem_.beta, c,
                                c_layout_, c, c_layout_, &kernel.algo, workspace_.data(), kernel.workspace_bytes,
                                stream));
}

}  // namespace sgemm

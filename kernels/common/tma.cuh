// TMA, Hopper's tensor memory accelerator (sm_90): one thread asks the copy engine for a
// whole box of a matrix (here up to 64 x 256 bf16 values); the engine moves it from
// global to shared memory, swizzled, fills what lies outside the matrix with zeros, and
// counts the bytes against an mbarrier (mbarrier.cuh); or back, from shared to global
// memory, leaving out what lies outside. The matrix is described once, on the host, by a
// tensor map (make_tensor_map) that the kernel takes as a __grid_constant__ parameter.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "cp_async.cuh"

namespace sgemm {

// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes: the box
// whose first element is (column, row) of the matrix into `shared`, its bytes counted
// against `barrier`.
__device__ __forceinline__ void tma_load_2d(void* shared, const CUtensorMap* map, int column, int row,
                                            std::uint64_t* barrier) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
            "r"(shared_address(shared)),
        "l"(map), "r"(column), "r"(row), "r"(shared_address(barrier))
        : "memory");
#endif
}

// The same with .multicast::cluster: the box lands at the same shared-memory offset in
// every CTA of the cluster whose bit is set in `cta_mask`, each counting the bytes
// against its own barrier at `barrier`'s offset. One load from L2 feeds several SMs.
__device__ __forceinline__ void tma_load_2d_multicast(void* shared, const CUtensorMap* map, int column,
                                                      int row, std::uint64_t* barrier,
                                                      std::uint16_t cta_mask) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(shared_address(shared)),
        "l"(map), "r"(column), "r"(row), "r"(shared_address(barrier)), "h"(cta_mask)
        : "memory");
#endif
}

// cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: the copy engine writes the box
// in `shared` to the matrix at (column, row), leaving out what lies outside the matrix.
// Asynchronous: the thread goes on at once; tma_store_commit() closes the stores issued
// so far into a group, tma_store_wait_read<N>() waits until at most N groups still read
// their shared memory (which may then be written again), tma_store_wait<N>() until at
// most N groups are unfinished.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int column, int row, const void* shared) {
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map),
                 "r"(column), "r"(row), "r"(shared_address(shared))
                 : "memory");
#endif
}

__device__ __forceinline__ void tma_store_commit() {
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

template <int kMaxPendingGroups>
__device__ __forceinline__ void tma_store_wait_read() {
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kMaxPendingGroups) : "memory");
#endif
}

template <int kMaxPendingGroups>
__device__ __forceinline__ void tma_store_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kMaxPendingGroups) : "memory");
#endif
}

// A tensor map for a row-major rows x columns matrix of `type` (1, 2 or 4 bytes a value)
// read or written in boxes of box_rows x box_columns, with the 128-byte swizzle (a box row
// must then be 128 bytes, one swizzle row) or none (a box row a multiple of 16 bytes); the
// row pitch a multiple of 16 bytes, as TMA requires. The driver's cuTensorMapEncodeTiled is found through the runtime, so the
// binary needs no link to libcuda and runs (without these stages) where there is no
// driver.
inline CUtensorMap make_tensor_map(CUtensorMapDataType type, int value_bytes, const void* matrix, int rows,
                                   int columns, int box_rows, int box_columns,
                                   CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                             &found) != cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            throw std::runtime_error("the CUDA driver offers no cuTensorMapEncodeTiled (TMA needs CUDA 12+)");
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    }();
    CUtensorMap map{};
    const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
    const cuuint64_t row_pitch[1] = {static_cast<cuuint64_t>(columns) * value_bytes};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_columns), static_cast<cuuint32_t>(box_rows)};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult status = encode(&map, type, 2, const_cast<void*>(matrix), sizes,
                                   row_pitch, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (status != CUDA_SUCCESS)
        throw std::runtime_error("cuTensorMapEncodeTiled failed (" + std::to_string(status) + ") for a " +
                                 std::to_string(rows) + " x " + std::to_string(columns) + " matrix");
    return map;
}

inline CUtensorMap make_bf16_tensor_map(const void* matrix, int rows, int columns, int box_rows, int box_columns) {
    return make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, matrix, rows, columns, box_rows, box_columns);
}

inline CUtensorMap make_f16_tensor_map(const void* matrix, int rows, int columns, int box_rows, int box_columns) {
    return make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, matrix, rows, columns, box_rows, box_columns);
}

inline CUtensorMap make_fp32_tensor_map(const void* matrix, int rows, int columns, int box_rows, int box_columns) {
    return make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, matrix, rows, columns, box_rows, box_columns);
}

}  // namespace sgemm

// Tensor-core instructions of sm_80 and later, as PTX: mma.sync (a warp multiplies a
// 16x16 bf16 tile of A by a 16x8 tile of B into a 16x8 FP32 tile) and ldmatrix (a warp
// loads 8x8 tiles of 16-bit values from shared memory straight into the register
// layout mma.sync expects). The layouts are in the PTX ISA, "Matrix fragments for
// mma.m16n8k16"; in short, lane l holds:
//   A (4 registers, 2 bf16 each): rows l/4 and l/4 + 8, columns 2(l%4) + {0,1} and + 8
//   B (2 registers):              rows (k) 2(l%4) + {0,1} and + 8, column (n) l/4
//   C (4 floats):                 row l/4: columns 2(l%4) + {0,1}; row l/4 + 8: the same
// mma.sync m16n8k8 with tf32 inputs (FP32 values of which the unit reads the top 19
// bits) has the same C; A is 16x8 and B 8x8, one value a register:
//   A (4 registers): rows l/4 and l/4 + 8, columns l%4 and l%4 + 4
//   B (2 registers): rows (k) l%4 and l%4 + 4, column (n) l/4
#pragma once

#include <cuda_bf16.h>

namespace sgemm {

// d += a * b for one m16n8k16 tile, FP32 accumulators.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// d += a * b for one m16n8k8 tile of tf32 values, FP32 accumulators.
__device__ __forceinline__ void mma_tf32_1688(float (&d)[4], const unsigned (&a)[4],
                                              const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Four 8x8 tiles of 16-bit values; lane l gives the shared-memory address (as from
// __cvta_generic_to_shared, so that constant offsets fold into the instruction) of row
// l % 8 of tile l / 8. kTranspose transposes each tile on the way: that loads B stored
// [k][n] as mma's "col" operand.
template <bool kTranspose>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned shared_address) {
#if __CUDA_ARCH__ >= 800
    if constexpr (kTranspose)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(shared_address));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(shared_address));
#endif
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned shared_address) {
    ldmatrix_x4<false>(r, shared_address);
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned shared_address) {
    ldmatrix_x4<true>(r, shared_address);
}

// Both from a generic pointer into shared memory.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* shared_row) {
    ldmatrix_x4<false>(r, static_cast<unsigned>(__cvta_generic_to_shared(shared_row)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* shared_row) {
    ldmatrix_x4<true>(r, static_cast<unsigned>(__cvta_generic_to_shared(shared_row)));
}

}  // namespace sgemm

#pragma once
/// \file
/// The one matrix product every weighted kernel is built on: OpenBLAS sgemm,
/// row-major, with the output split across a ParallelFor.

#include <cstdint>

#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope {

/// A row-major matrix operand: `data` with `stride` floats between rows.
struct MatrixRef {
  const float* data = nullptr;
  int64_t stride = 0;
};

/// C[m×n] = A[m×k]·B[k×n] + beta·C, all row-major with the given strides.
/// The output is cut into blocks of whole columns (or whole rows, when m is
/// the larger side), one sgemm per block, run across `parallel`. Each block
/// sums over all of k, so only rounding depends on the split (OpenBLAS takes
/// other code paths for the edges of a block).
void gemm(ParallelFor& parallel, int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b,
          float beta, float* c, int64_t c_stride);

/// Whether gemm_transposed() reads an operand as stored or as its transpose.
enum class Transpose { kNo, kYes };

/// C[m×n] = op(A)·op(B) + beta·C, row-major. op(A) is m×k: A is stored m×k,
/// or k×m when `ta` is kYes; op(B) is k×n: B is stored k×n, or n×k when `tb`
/// is kYes. The strides are those of A and B as stored. The backward pass
/// needs the transposed products (dX = dZ·Wᵀ, dW = Xᵀ·dZ) and sgemm reads
/// the transpose in place, so no operand is ever copied out. Split over
/// `parallel` as gemm() splits: a block of rows of op(A) is a block of
/// columns of A when A is stored transposed, and likewise for B. beta = 0
/// does not read C (as in BLAS), so C may start as garbage.
void gemm_transposed(ParallelFor& parallel, Transpose ta, Transpose tb, int64_t m, int64_t n,
                     int64_t k, MatrixRef a, MatrixRef b, float beta, float* c, int64_t c_stride);

/// Tells OpenBLAS to run each call on the calling thread only. Debian's
/// OpenBLAS is the pthread build: its thread count is process-wide, and
/// concurrent calls from several of our workers would queue for its single
/// pool, so the devices' workers would not overlap. We parallelise inside an
/// op with our own pool instead (gemm() above). Idempotent.
void use_single_threaded_blas();

/// OpenBLAS's build description ("OpenBLAS 0.3.21 DYNAMIC_ARCH ..."), for reports.
const char* blas_description();

}  // namespace splitscope

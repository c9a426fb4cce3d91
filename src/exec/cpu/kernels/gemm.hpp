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

/// Tells OpenBLAS to run each call on the calling thread only. Debian's
/// OpenBLAS is the pthread build: its thread count is process-wide, and
/// concurrent calls from several of our workers would queue for its single
/// pool, so the devices' workers would not overlap. We parallelise inside an
/// op with our own pool instead (gemm() above). Idempotent.
void use_single_threaded_blas();

/// OpenBLAS's build description ("OpenBLAS 0.3.21 DYNAMIC_ARCH ..."), for reports.
const char* blas_description();

}  // namespace splitscope

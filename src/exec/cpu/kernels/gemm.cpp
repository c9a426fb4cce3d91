#include "exec/cpu/kernels/gemm.hpp"

#include <algorithm>
#include <cblas.h>

namespace splitscope {
namespace {

/// Below this many multiply-adds a block is not worth a thread hand-off:
/// OpenBLAS's own rule (interface/gemm.c gives each thread at least
/// SMP_THRESHOLD_MIN · GEMM_MULTITHREAD_THRESHOLD = 65536 · 4 of them), about
/// 5 us of one-thread sgemm here. A split smaller than that waits for its
/// helper longer than it saves (a 32 Ki block is under 1 us).
constexpr int64_t kMinBlockWork = 65536 * 4;
/// Column blocks are whole cache lines of C and B (16 floats).
constexpr int64_t kColumnAlign = 16;

int64_t grain_for(int64_t extent, int64_t work_per_unit, int64_t threads, int64_t align) {
  const int64_t by_work = (kMinBlockWork + work_per_unit - 1) / std::max<int64_t>(work_per_unit, 1);
  const int64_t by_threads = (extent + threads - 1) / threads;
  const int64_t grain = std::max(by_work, by_threads);
  return (grain + align - 1) / align * align;
}

void sgemm_block(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void sgemm_block_transposed(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k,
                            const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                            float* c, int64_t ldc) {
  const auto op = [](Transpose t) { return t == Transpose::kYes ? CblasTrans : CblasNoTrans; };
  cblas_sgemm(CblasRowMajor, op(ta), op(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

}  // namespace

void gemm(ParallelFor& parallel, int64_t m, int64_t n, int64_t k, MatrixRef a, MatrixRef b,
          float beta, float* c, int64_t c_stride) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // An empty sum: C = beta·C (sgemm would do the same, but says nothing for k = 0 in its docs).
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * c_stride + j] *= beta;
    }
    return;
  }
  const int64_t threads = parallel.threads();
  if (threads <= 1 || m * n * k < 2 * kMinBlockWork) {
    sgemm_block(m, n, k, a.data, a.stride, b.data, b.stride, beta, c, c_stride);
    return;
  }
  if (n >= m) {
    parallel.run(n, grain_for(n, m * k, threads, kColumnAlign), [&](int64_t begin, int64_t end) {
      sgemm_block(m, end - begin, k, a.data, a.stride, b.data + begin, b.stride, beta, c + begin,
                  c_stride);
    });
  } else {
    parallel.run(m, grain_for(m, n * k, threads, 1), [&](int64_t begin, int64_t end) {
      sgemm_block(end - begin, n, k, a.data + begin * a.stride, a.stride, b.data, b.stride, beta,
                  c + begin * c_stride, c_stride);
    });
  }
}

void gemm_transposed(ParallelFor& parallel, Transpose ta, Transpose tb, int64_t m, int64_t n,
                     int64_t k, MatrixRef a, MatrixRef b, float beta, float* c, int64_t c_stride) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // An empty sum: C = beta·C, without reading C when beta is 0 (as sgemm with k > 0).
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * c_stride;
      for (int64_t j = 0; j < n; ++j) row[j] = beta == 0.0f ? 0.0f : row[j] * beta;
    }
    return;
  }
  const int64_t threads = parallel.threads();
  if (threads <= 1 || m * n * k < 2 * kMinBlockWork) {
    sgemm_block_transposed(ta, tb, m, n, k, a.data, a.stride, b.data, b.stride, beta, c, c_stride);
    return;
  }
  if (n >= m) {
    // Columns [begin, end) of op(B): columns of B as stored, or rows of it when transposed.
    const bool b_transposed = tb == Transpose::kYes;
    parallel.run(n, grain_for(n, m * k, threads, kColumnAlign), [&](int64_t begin, int64_t end) {
      const float* b_block = b_transposed ? b.data + begin * b.stride : b.data + begin;
      sgemm_block_transposed(ta, tb, m, end - begin, k, a.data, a.stride, b_block, b.stride, beta,
                             c + begin, c_stride);
    });
  } else {
    // Rows [begin, end) of op(A): rows of A as stored, or columns of it when transposed.
    const bool a_transposed = ta == Transpose::kYes;
    parallel.run(m, grain_for(m, n * k, threads, 1), [&](int64_t begin, int64_t end) {
      const float* a_block = a_transposed ? a.data + begin : a.data + begin * a.stride;
      sgemm_block_transposed(ta, tb, end - begin, n, k, a_block, a.stride, b.data, b.stride, beta,
                             c + begin * c_stride, c_stride);
    });
  }
}

void use_single_threaded_blas() { openblas_set_num_threads(1); }

const char* blas_description() { return openblas_get_config(); }

}  // namespace splitscope

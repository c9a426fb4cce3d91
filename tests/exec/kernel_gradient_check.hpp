#pragma once
// What the backward kernels' tests share: random data, strided rows with
// sentinels in the gaps, ParallelFors that split the work, and gradients by
// central differences in double.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"

namespace splitscope::kernel_check {

/// The kernels run OpenBLAS one call per thread, as the executor sets it up
/// (gemm.hpp): OpenBLAS's own thread pool would race in ThreadSanitizer's eyes
/// (it is not instrumented) and is not what the executor runs.
class SingleThreadedBlas final : public ::testing::Environment {
 public:
  void SetUp() override { use_single_threaded_blas(); }
};
inline ::testing::Environment* const kSingleThreadedBlas =
    ::testing::AddGlobalTestEnvironment(new SingleThreadedBlas);  // gtest owns it

/// Marks the gaps between strided rows: a kernel must leave them alone.
inline constexpr float kSentinel = 42.5f;
/// Finite-difference step and tolerances: central differences in double are
/// exact for the linear layers up to rounding and O(eps²) for the others.
inline constexpr double kEps = 1e-3;
inline constexpr double kRelative = 1e-3;
inline constexpr double kAbsolute = 1e-5;

inline std::vector<float> random_vector(size_t n, unsigned seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(generator);
  return v;
}

inline std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }

inline size_t at(int64_t i) { return static_cast<size_t>(i); }

/// A ParallelFor that claims 4 threads, so that kernels split their work, and
/// runs the chunks on the calling thread, last chunk first (a kernel that
/// depended on chunk order would show it). Counts the chunks it ran and its runs.
class ChunkedFor final : public ParallelFor {
 public:
  int threads() const override { return 4; }
  void run(int64_t count, int64_t grain, const ChunkFunction& chunk) override {
    if (count <= 0) return;
    const int64_t size = std::max<int64_t>({grain, (count + 3) / 4, 1});
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t begin = 0; begin < count; begin += size) ranges.emplace_back(begin, std::min(count, begin + size));
    std::reverse(ranges.begin(), ranges.end());
    for (auto [begin, end] : ranges) chunk(begin, end);
    chunks += static_cast<int64_t>(ranges.size());
    ++runs;
  }
  int64_t chunks = 0;
  int64_t runs = 0;  ///< calls of run() with work
};

/// The ParallelFors every kernel runs under: serial, split serially, and a real pool.
struct Parallels {
  SerialFor serial;
  ChunkedFor chunked;
  IntraOpPool pool{3};
  std::vector<std::pair<const char*, ParallelFor*>> all() {
    return {{"serial", &serial}, {"chunked", &chunked}, {"pool of 3", &pool}};
  }
};

/// `rows` rows of `width` from a compact matrix, `stride` apart, the gaps set to kSentinel.
inline std::vector<float> to_strided(const std::vector<float>& compact, int64_t rows, int64_t width, int64_t stride) {
  std::vector<float> out(at(rows * stride), kSentinel);
  for (int64_t r = 0; r < rows; ++r) std::copy_n(compact.begin() + r * width, width, out.begin() + r * stride);
  return out;
}

/// The compact matrix back, after checking that the gaps still hold kSentinel.
inline std::vector<float> from_strided(const std::vector<float>& strided, int64_t rows, int64_t width,
                                       int64_t stride) {
  std::vector<float> out(at(rows * width));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(strided.begin() + r * stride, width, out.begin() + r * width);
    for (int64_t j = width; j < stride; ++j) {
      EXPECT_EQ(strided[at(r * stride + j)], kSentinel) << "gap after row " << r << " written at " << j;
    }
  }
  return out;
}

inline void expect_close(const std::vector<float>& actual, const std::vector<double>& expected, double relative,
                         double absolute, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], absolute + relative * std::abs(expected[i])) << what << ", element " << i;
  }
}

/// ∂loss/∂p at `point` by central differences, one parameter at a time.
inline std::vector<double> numeric_gradient(const std::function<double(const std::vector<double>&)>& loss,
                                            std::vector<double> point) {
  std::vector<double> gradient(point.size());
  for (size_t i = 0; i < point.size(); ++i) {
    const double saved = point[i];
    point[i] = saved + kEps;
    const double up = loss(point);
    point[i] = saved - kEps;
    const double down = loss(point);
    point[i] = saved;
    gradient[i] = (up - down) / (2 * kEps);
  }
  return gradient;
}

}  // namespace splitscope::kernel_check

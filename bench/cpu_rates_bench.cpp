// The rates behind models/machines/cpu-2.json: what one "device" of the cpu
// backend (one worker thread, one OpenBLAS thread) computes and copies.
//
//   build/bench/bench_cpu_rates --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// - Sgemm: C = A·B, n×n float32, one OpenBLAS thread; FLOP/s = 2n³ / time.
//   The Threads(2) variant runs one such sgemm per device at once, as the
//   cpu backend does with two devices on two cores.
// - Relu: y = max(x, 0) over 64 MiB; bytes = read + written, the roofline's
//   memory side of an element-wise op.
// - Memcpy: 64 MiB copies; bytes = bytes copied, the rate of a transfer
//   between two devices; Threads(2) = two transfers at once.

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

void BM_Sgemm(benchmark::State& state) {
  openblas_set_num_threads(1);
  const auto n = static_cast<int>(state.range(0));
  std::vector<float> a(static_cast<size_t>(n) * n, 0.5f);
  std::vector<float> b(a.size(), 0.25f);
  std::vector<float> c(a.size(), 0.0f);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate |
                                                                     benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_Sgemm)->Arg(512)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sgemm)->Arg(1024)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

constexpr size_t kBufferBytes = size_t{64} << 20;

void BM_Relu(benchmark::State& state) {
  std::vector<float> x(kBufferBytes / sizeof(float), -0.5f);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); i += 2) x[i] = 0.5f;
  for (auto _ : state) {
    std::transform(x.begin(), x.end(), y.begin(), [](float v) { return std::max(v, 0.0f); });
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * static_cast<int64_t>(kBufferBytes));
}
BENCHMARK(BM_Relu)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Relu)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Memcpy(benchmark::State& state) {
  std::vector<char> from(kBufferBytes, 1);
  std::vector<char> to(kBufferBytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), kBufferBytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBufferBytes));
}
BENCHMARK(BM_Memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Memcpy)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

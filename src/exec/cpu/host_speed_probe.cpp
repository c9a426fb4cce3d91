// The host's sgemm speed now (host_speed_probe.hpp).

#include "exec/cpu/host_speed_probe.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"
#include "util/median.hpp"
#include "util/thread_affinity.hpp"

namespace splitscope {
namespace {

using ProbeClock = std::chrono::steady_clock;

constexpr int kProbeSamples = 5;
constexpr double kMinProbeSampleSeconds = 200e-6;  // as calibrate's grid

double probe_seconds_since(ProbeClock::time_point start) {
  return std::chrono::duration<double>(ProbeClock::now() - start).count();
}

}  // namespace

std::vector<SgemmShape> host_speed_shapes() { return {{64, 1024, 1024}, {256, 256, 256}, {16, 4096, 1024}}; }

double time_one_thread_sgemm(const SgemmShape& shape) {
  use_single_threaded_blas();
  std::vector<float> a(static_cast<size_t>(shape.m * shape.k), 1.0f);
  std::vector<float> b(static_cast<size_t>(shape.k * shape.n), 0.5f);
  std::vector<float> c(static_cast<size_t>(shape.m * shape.n), 0.0f);
  SerialFor one_thread;
  const auto product = [&] {
    gemm(one_thread, shape.m, shape.n, shape.k, {a.data(), shape.k}, {b.data(), shape.n}, 0.0f, c.data(), shape.n);
  };
  double seconds = 0;
  std::thread worker([&] {
    const auto first = ProbeClock::now();
    product();
    const double guess = std::max(1e-9, probe_seconds_since(first));
    const int calls = static_cast<int>(std::clamp(kMinProbeSampleSeconds / guess, 1.0, 100000.0));
    std::vector<double> samples;
    for (int s = 0; s < kProbeSamples; ++s) {
      const auto start = ProbeClock::now();
      for (int call = 0; call < calls; ++call) product();
      samples.push_back(probe_seconds_since(start) / calls);
    }
    seconds = median(samples);
  });
  const std::vector<int> cpus = allowed_cpus();
  if (!cpus.empty()) pin_thread(worker, cpus.front());
  worker.join();
  return seconds;
}

}  // namespace splitscope

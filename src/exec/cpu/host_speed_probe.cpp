// The host's sgemm speed now (host_speed_probe.hpp).

#include "exec/cpu/host_speed_probe.hpp"

#include "exec/cpu/call_timing.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/parallel_for.hpp"
#include "util/thread_affinity.hpp"

namespace splitscope {

std::vector<SgemmShape> host_speed_shapes() { return {{64, 1024, 1024}, {256, 256, 256}, {16, 4096, 1024}}; }

double time_one_thread_sgemm(const SgemmShape& shape) {
  use_single_threaded_blas();
  std::vector<float> a(static_cast<size_t>(shape.m * shape.k), 1.0f);
  std::vector<float> b(static_cast<size_t>(shape.k * shape.n), 0.5f);
  std::vector<float> c(static_cast<size_t>(shape.m * shape.n), 0.0f);
  SerialFor one_thread;
  double seconds = 0;
  run_pinned(allowed_cpus(), [&] {
    seconds = median_call_seconds(5, [&] {
      gemm(one_thread, shape.m, shape.n, shape.k, {a.data(), shape.k}, {b.data(), shape.n}, 0.0f, c.data(), shape.n);
    });
  });
  return seconds;
}

}  // namespace splitscope

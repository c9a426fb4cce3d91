// `single` on the mlp zoo network through the CPU executor, against the same
// chain of sgemm calls made directly (OpenBLAS with all hardware threads, on
// the very same weight arrays). Target: executor time within 1/0.9 of direct.
//
// Argument: the width. 8192 is the zoo's mlp itself (8 × dense 8192, batch 64,
// ~69 GFLOP per forward); smaller widths are the same network built here with
// narrower layers, for a quick run.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cblas.h>
#include <map>
#include <memory>
#include <thread>

#include "exec/cpu/kernels/gemm.hpp"
#include "prepared_run.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "ir/params.hpp"

namespace splitscope {
namespace {

using bench::PreparedRun;

/// One fixture per width, shared by both benchmarks so the weights are made once.
PreparedRun& prepared(int64_t width) {
  static std::map<int64_t, std::unique_ptr<PreparedRun>> runs;  // benchmark-local cache
  auto& run = runs[width];
  if (!run) {
    use_single_threaded_blas();
    const ThreadConfig threads = resolve_threads(RunOptions{}, 1, static_cast<int>(std::thread::hardware_concurrency()));
    run = std::make_unique<PreparedRun>(std::make_shared<const Graph>(bench::mlp_of_width(width)), threads);
  }
  return *run;
}

double forward_flops(const Plan& plan) {
  double flops = 0;
  for (const PlanOp& op : plan.ops) flops += static_cast<double>(op.flops);
  return flops;
}

void BM_ExecutorSingle(benchmark::State& state) {
  PreparedRun& run = prepared(state.range(0));
  use_single_threaded_blas();
  for (auto _ : state) benchmark::DoNotOptimize(run.scheduler.run(run.tasks.graph));
  state.counters["GFLOP/s"] = benchmark::Counter(forward_flops(run.plan) * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void BM_DirectSgemmChain(benchmark::State& state) {
  PreparedRun& run = prepared(state.range(0));
  const Plan& plan = run.plan;
  // The dense layers in order, with the same weights the executor reads.
  struct Layer {
    int64_t in, out;
    const float* w;
  };
  std::vector<Layer> layers;
  for (const PlanOp& op : plan.ops) {
    if (plan.graph->node(op.node).kind != OpKind::kDense) continue;
    layers.push_back({op.slice.reduce.size(), op.slice.out.size(), run.weights.get(plan.value(op.params))->data(kWeight)});
  }
  const int64_t batch = plan.graph->batch();
  int64_t widest = 0;
  for (const Layer& l : layers) widest = std::max({widest, l.in, l.out});
  std::vector<float> a(static_cast<size_t>(batch * widest), 0.5f), b(a.size());
  openblas_set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
  for (auto _ : state) {
    float* x = a.data();
    float* y = b.data();
    for (const Layer& l : layers) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(batch), static_cast<blasint>(l.out),
                  static_cast<blasint>(l.in), 1.0f, x, static_cast<blasint>(l.in), l.w, static_cast<blasint>(l.out), 0.0f,
                  y, static_cast<blasint>(l.out));
      std::swap(x, y);
    }
    benchmark::DoNotOptimize(x);
  }
  use_single_threaded_blas();
  state.counters["GFLOP/s"] = benchmark::Counter(forward_flops(plan) * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// Interleaved per width, so that load on a shared machine hits both alike.
BENCHMARK(BM_DirectSgemmChain)->Arg(2048)->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExecutorSingle)->Arg(2048)->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DirectSgemmChain)->Arg(8192)->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ExecutorSingle)->Arg(8192)->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace splitscope

BENCHMARK_MAIN();

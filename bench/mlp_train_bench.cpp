// A training step of `single` on the mlp zoo network through the CPU
// executor (forward, loss, backward, SGD update), against the bare chain of
// OpenBLAS products the step makes: per dense layer the forward product, and
// in reverse order dX = dZ·Wᵀ and dW = Xᵀ·dZ (3 products a layer), on the
// very same weight arrays, with all hardware threads. Issue 15's target: the
// executor's step at >= 0.85x the chain's throughput. The executor does more
// than the chain: activation gradients, the loss, and the optimizer update,
// which streams weights, gradients and the momentum buffer (memory-bound).
//
// Argument: the width (see mlp_forward_bench.cpp); the second argument is
// the momentum in percent (0: plain SGD, 12 bytes a weight; 90: 20 bytes).

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
#include "ir/training.hpp"

namespace splitscope {
namespace {

std::shared_ptr<const Graph> training_mlp(int64_t width, double momentum) {
  const Graph forward = bench::mlp_of_width(width);
  Optimizer optimizer;
  optimizer.learning_rate = 1e-4;
  optimizer.momentum = momentum;
  return std::make_shared<const Graph>(training_graph(forward, optimizer));
}

/// A training step per Scheduler::run.
using PreparedStep = bench::PreparedRun;

PreparedStep& prepared(int64_t width, int64_t momentum_percent) {
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<PreparedStep>> steps;  // benchmark-local cache
  auto& step = steps[{width, momentum_percent}];
  if (!step) {
    use_single_threaded_blas();
    const ThreadConfig threads = resolve_threads(RunOptions{}, 1, static_cast<int>(std::thread::hardware_concurrency()));
    step = std::make_unique<PreparedStep>(training_mlp(width, static_cast<double>(momentum_percent) / 100.0), threads);
  }
  return *step;
}

/// The products' FLOPs: 3 per dense layer (the rest of the step is bytes).
double product_flops(const Plan& plan) {
  double flops = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && op_def(plan.graph->node(op.node).kind).cost_class == CostClass::kMatrix) {
      flops += static_cast<double>(op.flops);
    }
  }
  return flops;
}

void BM_ExecutorTrainingStep(benchmark::State& state) {
  PreparedStep& step = prepared(state.range(0), state.range(1));
  use_single_threaded_blas();
  for (auto _ : state) benchmark::DoNotOptimize(step.scheduler.run(step.tasks.graph));
  state.counters["GFLOP/s"] = benchmark::Counter(product_flops(step.plan) * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void BM_DirectProductChain(benchmark::State& state) {
  PreparedStep& step = prepared(state.range(0), state.range(1));
  const Plan& plan = step.plan;
  struct Layer {
    int64_t in, out;
    const float* w;
    std::vector<float> dw;
  };
  std::vector<Layer> layers;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || plan.graph->node(op.node).kind != OpKind::kDense) continue;
    layers.push_back({op.slice.reduce.size(), op.slice.out.size(),
                      step.weights.get(plan.value(op.params))->data(kWeight), {}});
  }
  for (Layer& l : layers) l.dw.assign(static_cast<size_t>(l.in * l.out), 0.0f);
  const int64_t batch = plan.graph->batch();
  // Every layer's input kept for its dW, as the step keeps them.
  std::vector<std::vector<float>> activations(layers.size() + 1);
  activations[0].assign(static_cast<size_t>(batch * layers.front().in), 0.5f);
  for (size_t i = 0; i < layers.size(); ++i) activations[i + 1].assign(static_cast<size_t>(batch * layers[i].out), 0.0f);
  int64_t widest = 0;
  for (const Layer& l : layers) widest = std::max({widest, l.in, l.out});
  std::vector<float> dz(static_cast<size_t>(batch * widest), 0.01f), dx(dz.size());
  const auto b = [](int64_t v) { return static_cast<blasint>(v); };
  openblas_set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
  for (auto _ : state) {
    for (size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b(batch), b(l.out), b(l.in), 1.0f,
                  activations[i].data(), b(l.in), l.w, b(l.out), 0.0f, activations[i + 1].data(), b(l.out));
    }
    for (size_t i = layers.size(); i-- > 0;) {
      Layer& l = layers[i];
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, b(l.in), b(l.out), b(batch), 1.0f, activations[i].data(),
                  b(l.in), dz.data(), b(l.out), 0.0f, l.dw.data(), b(l.out));
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b(batch), b(l.in), b(l.out), 1.0f, dz.data(), b(l.out),
                  l.w, b(l.out), 0.0f, dx.data(), b(l.in));
      std::swap(dz, dx);
    }
    benchmark::DoNotOptimize(dz.data());
  }
  use_single_threaded_blas();
  state.counters["GFLOP/s"] = benchmark::Counter(product_flops(plan) * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// Interleaved per configuration, so that load on a shared machine hits both alike.
BENCHMARK(BM_DirectProductChain)->Args({2048, 0})->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExecutorTrainingStep)->Args({2048, 0})->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DirectProductChain)->Args({2048, 90})->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExecutorTrainingStep)->Args({2048, 90})->Repetitions(5)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DirectProductChain)->Args({8192, 90})->Repetitions(3)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ExecutorTrainingStep)->Args({8192, 90})->Repetitions(3)->ReportAggregatesOnly(true)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace splitscope

BENCHMARK_MAIN();

// The demo's cpu baseline (issue 8): the fused loop of
// exec/cpu/fused_rnn_loop.hpp against the same LSTM stack run cell by cell
// by the cpu executor on one device, and split by layer over L devices
// (`demo rnn`'s default cpu shape: 4 layers, batch 16, 32 steps).
//
//   build/bench/bench_fused_rnn --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Each iteration times one forward pass of the stack (the loop's own clock,
// the executor's makespan), set as the iteration's manual time; weights and
// buffers are made outside it. Arg: hidden units H (= input features).

#include <benchmark/benchmark.h>

#include <memory>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/fused_rnn_loop.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "partitioners/partitioner.hpp"

namespace {

using namespace splitscope;

constexpr int kLayers = 4;

std::shared_ptr<const Graph> lstm_stack(int64_t hidden) {
  const std::string text = "{\"name\": \"bench-lstm\", \"batch\": 16, \"input\": [32, " + std::to_string(hidden) +
                           "], \"layers\": [{\"type\": \"lstm\", \"hidden\": " + std::to_string(hidden) +
                           ", \"layers\": 4, \"return_sequences\": false}]}";
  return std::make_shared<const Graph>(lower(parse_model_text(text, "bench")));
}

RunOptions one_pass() {
  RunOptions options;
  options.warmup = 1;
  options.repeats = 1;
  options.want_output = false;
  return options;
}

void BM_FusedLoop(benchmark::State& state) {
  const auto graph = lstm_stack(state.range(0));
  for (auto _ : state) {
    const FusedRnnLoopResult result = run_fused_rnn_loop(*graph, 0, one_pass());
    state.SetIterationTime(result.times_ms.front() / 1e3);
  }
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(graph->total_flops()),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void run_plan(benchmark::State& state, const std::string& strategy, int devices) {
  const auto graph = lstm_stack(state.range(0));
  PartitionOptions partition;
  partition.devices = devices;
  const Plan plan = make_partitioner(strategy)->partition(graph, partition);
  for (auto _ : state) {
    const RunResult result = CpuExecutor().run(plan, one_pass());
    state.SetIterationTime(result.timelines.front().makespan_us() / 1e6);
  }
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(graph->total_flops()),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_CellByCell(benchmark::State& state) { run_plan(state, "single", 1); }
void BM_LayerSplit(benchmark::State& state) { run_plan(state, "horizontal", kLayers); }

BENCHMARK(BM_FusedLoop)->Arg(256)->Arg(512)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CellByCell)->Arg(256)->Arg(512)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LayerSplit)->Arg(256)->Arg(512)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

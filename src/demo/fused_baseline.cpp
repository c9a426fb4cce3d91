#include "demo/fused_baseline.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "exec/cpu/fused_rnn_loop.hpp"
#include "exec/cpu/fused_rnn_training.hpp"
#include "exec/cuda/fused_rnn.hpp"
#include "exec/training_divergence.hpp"
#include "sim/costs/fused_rnn_prediction.hpp"

namespace splitscope {
namespace {

std::string stack_label(const Graph& graph) {
  const Layer& rnn = graph.model().layers.at(0);
  return fmt::format("fused {} stack ({} layers x {} steps)", to_string(rnn.kind), rnn.stacked,
                     rnn.input_shape.at(0));
}

class CpuFusedBaseline final : public FusedBaseline {
 public:
  std::string_view name() const override { return "cpu"; }
  bool trains() const override { return true; }
  FusedTiming run(const std::shared_ptr<const Graph>& graph, const RunOptions& options) override {
    if (graph->is_training()) return train(graph, options);
    const FusedRnnLoopResult loop = run_fused_rnn_loop(*graph, 0, options);
    FusedTiming timing;
    timing.timelines = single_span_timelines(loop.times_ms, stack_label(*graph));
    timing.implementation = "fused cpu loop";
    timing.method = fmt::format(
        "measured: per stacked layer one sgemm for the input products of all {} steps, then the recurrent "
        "products and gate math step by step, no scheduler; {} thread{} each running the whole stack over its "
        "block of the batch (wall clock, median of {})",
        graph->model().layers.at(0).input_shape.at(0), loop.threads, loop.threads == 1 ? "" : "s",
        loop.times_ms.size());
    timing.device_mode = fmt::format("cpu threads ({} intra-op)", loop.threads);
    timing.output = loop.output;
    timing.threads = loop.threads;
    return timing;
  }

 private:
  /// One timed training step a repeat (a warm-up would be a step too).
  static FusedTiming train(const std::shared_ptr<const Graph>& graph, const RunOptions& options) {
    const FusedRnnTrainingResult steps = run_fused_rnn_training(*graph, options);
    check_losses_finite(steps.losses, graph->training()->optimizer);
    FusedTiming timing;
    timing.timelines = single_span_timelines(steps.times_ms, stack_label(*graph) + " training step");
    timing.implementation = "fused cpu training loop";
    timing.method = fmt::format(
        "measured: per training step the fused forward keeping every step's gate pre-activations, the backward "
        "through time step by step, then per stacked layer dx, dWx and dWh each one sgemm over all {} steps, and "
        "the optimizer's update; products split over {} thread{} (wall clock, median of {} steps)",
        graph->model().layers.at(0).input_shape.at(0), steps.threads, steps.threads == 1 ? "" : "s",
        steps.times_ms.size());
    timing.device_mode = fmt::format("cpu threads ({} intra-op)", steps.threads);
    timing.output = steps.output;
    timing.threads = steps.threads;
    timing.losses = steps.losses;
    return timing;
  }
};

class CudaFusedBaseline final : public FusedBaseline {
 public:
  CudaFusedBaseline(std::string dtype, int virtual_devices)
      : dtype_(std::move(dtype)), virtual_devices_(virtual_devices) {}
  std::string_view name() const override { return "cuda"; }
  bool trains() const override { return true; }
  FusedTiming run(const std::shared_ptr<const Graph>& graph, const RunOptions& options) override {
    gpu::FusedRnnRequest request;
    request.graph = graph;
    request.layer = 0;
    request.seed = options.seed;
    request.dtype = dtype_;
    request.virtual_devices = virtual_devices_;
    request.warmup = options.warmup;
    request.repeats = options.repeats;
    const bool training = graph->is_training();
    if (training) {
      request.training = graph->training()->optimizer;  // warm-up steps are undone (fused_rnn.cpp)
    }
    const gpu::FusedRnnResult fused = gpu::run_fused_rnn(request);
    if (training) check_losses_finite(fused.losses, graph->training()->optimizer);
    FusedTiming timing;
    timing.timelines = single_span_timelines(fused.times_ms, stack_label(*graph) + (training ? " training step" : ""));
    timing.implementation = training ? "cuDNN training (cudnnRNNForward, cudnnRNNBackwardData_v8, "
                                       "cudnnRNNBackwardWeights_v8)"
                                     : "cuDNN cudnnRNNForward";
    timing.method =
        training ? fmt::format("measured: per step cudnnRNNForward in training mode, the loss and its gradient on "
                               "the host, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8 and one optimizer "
                               "kernel over the weights ({} math) on {} ({} SMs), CUDA events around the step, "
                               "median of {}",
                               fused.math, fused.device_name, fused.sm_count, fused.times_ms.size())
                 : fmt::format("measured: one cudnnRNNForward call over every stacked layer and step ({} math) on {} "
                               "({} SMs), CUDA events around the call, median of {}",
                               fused.math, fused.device_name, fused.sm_count, fused.times_ms.size());
    timing.device_mode = fused.device_mode;
    timing.output = fused.output;
    timing.losses = fused.losses;
    return timing;
  }

 private:
  std::string dtype_;
  int virtual_devices_;
};

class SimFusedBaseline final : public FusedBaseline {
 public:
  explicit SimFusedBaseline(Machine machine) : machine_(std::move(machine)) {}
  std::string_view name() const override { return "sim"; }
  bool trains() const override { return true; }
  FusedTiming run(const std::shared_ptr<const Graph>& graph, const RunOptions& options) override {
    (void)options;  // a prediction is the same every time
    const bool training = graph->is_training();
    const auto [seconds, method] = training ? predicted_step(*graph) : predicted_pass(*graph);
    FusedTiming timing;
    timing.timelines =
        single_span_timelines({seconds * 1e3}, stack_label(*graph) + (training ? " training step" : ""));
    timing.measured = false;
    timing.implementation = "cost-model prediction";
    timing.method = method;
    timing.device_mode = "simulated";
    if (machine_.pooled) timing.threads = machine_.devices;  // one device gets every share (Machine::pooled)
    return timing;
  }

 private:
  std::pair<double, std::string> predicted_pass(const Graph& graph) const {
    const FusedRnnPrediction prediction = predict_fused_rnn(machine_, graph, 0);
    return {prediction.seconds, prediction.method};
  }
  std::pair<double, std::string> predicted_step(const Graph& graph) const {
    const FusedRnnTrainingPrediction prediction = predict_fused_rnn_training(machine_, graph);
    return {prediction.seconds, prediction.method};
  }

  Machine machine_;
};

}  // namespace

std::unique_ptr<FusedBaseline> make_cpu_fused_baseline() { return std::make_unique<CpuFusedBaseline>(); }

std::unique_ptr<FusedBaseline> make_cuda_fused_baseline(std::string dtype, int virtual_devices) {
  return std::make_unique<CudaFusedBaseline>(std::move(dtype), virtual_devices);
}

std::unique_ptr<FusedBaseline> make_sim_fused_baseline(Machine machine) {
  return std::make_unique<SimFusedBaseline>(std::move(machine));
}

std::vector<Timeline> single_span_timelines(const std::vector<double>& times_ms, const std::string& label) {
  std::vector<Timeline> timelines;
  for (double ms : times_ms) {
    Span span;
    span.label = label;
    span.end_us = ms * 1000.0;
    timelines.push_back(Timeline{{span}});
  }
  return timelines;
}

}  // namespace splitscope

#include "exec/cpu/ps_worker.hpp"

#include <algorithm>
#include <span>

#include "ir/training.hpp"
#include "timeline/timeline.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

std::optional<StragglerDelay> straggler_of(const RunOptions& options, int index) {
  if (!options.straggler || !options.straggler->holds_back(index)) return std::nullopt;
  return StragglerDelay{0, options.straggler->ms};
}

SchedulerConfig scheduler_config(const ThreadConfig& threads) {
  SchedulerConfig config;
  config.devices = 1;
  config.compute_workers = 1;
  config.intra_op_threads = threads.intra_op;
  return config;
}

}  // namespace

PsWorker::PsWorker(const Plan& plan, int index, const RunOptions& options, const ThreadConfig& threads,
                   ParallelFor& setup)
    : index_(index),
      part_(device_part(plan, index)),
      buffers_(part_.plan),
      weights_(*plan.graph, options.seed, setup),
      tasks_(build_plan_tasks(part_.plan, buffers_, weights_, straggler_of(options, index))),
      scheduler_(scheduler_config(threads)) {
  fill_network_inputs(part_.plan, options.seed, buffers_);
  SPLITSCOPE_CHECK(part_.plan.outputs.size() == 1, "a ps worker's output in several values");
  rows_ = part_.plan.value(part_.plan.outputs[0]).batch;
  for (int id : part_.plan.parameters) {
    const Value& params = part_.plan.value(id);
    int gradient = -1;
    for (const Value& value : part_.plan.values) {
      if (value.role == ValueRole::kGradient && value.node == params.node && value.channels == params.channels &&
          value.reduce == params.reduce) {
        gradient = value.id;
      }
    }
    SPLITSCOPE_CHECK(gradient >= 0, "a ps worker's weights without a gradient");
    gradients_.push_back(gradient);
  }
}

std::vector<Span> PsWorker::step(std::chrono::steady_clock::time_point start,
                                 const std::optional<std::chrono::microseconds>& deadline) {
  const std::vector<TaskTiming> timings = scheduler_.run(tasks_.graph, deadline);
  const double offset = std::chrono::duration<double, std::micro>(scheduler_.last_run_start() - start).count();
  Timeline timeline = tasks_timeline(tasks_, timings);
  for (Span& span : timeline.spans) {
    span.device = index_;
    span.op = part_.plan_op.at(static_cast<size_t>(span.op));
    span.start_us += offset;
    span.end_us += offset;
  }
  return std::move(timeline.spans);
}

double PsWorker::loss(const Graph& graph, uint64_t seed) const {
  const ConstChannelBlock out = output();
  return rows_loss(graph, std::span<const float>(out.data, static_cast<size_t>(out.floats())), seed, rows_);
}

void append_flat(const WeightSlice& slice, std::vector<float>& flat) {
  for (const std::vector<float>& tensor : slice.tensors) flat.insert(flat.end(), tensor.begin(), tensor.end());
}

const float* read_flat(const float* flat, WeightSlice& slice) {
  for (std::vector<float>& tensor : slice.tensors) {
    std::copy(flat, flat + tensor.size(), tensor.begin());
    flat += tensor.size();
  }
  return flat;
}

}  // namespace splitscope

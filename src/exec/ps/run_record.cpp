#include "exec/ps/run_record.hpp"

#include <algorithm>
#include <utility>

#include "exec/ps/step_windows.hpp"
#include "util/errors.hpp"

namespace splitscope {

namespace {

Span worker_transfer(int worker, Lane lane, OffPlanMove move, const char* label, double start_us, double end_us,
                     int64_t bytes) {
  Span span;
  span.move = move;
  span.device = worker;
  span.lane = lane;
  span.kind = SpanKind::kTransfer;
  span.label = label;
  span.start_us = start_us;
  span.end_us = end_us;
  span.bytes = bytes;
  return span;
}

}  // namespace

Span pull_span(int worker, double start_us, double end_us, int64_t bytes) {
  return worker_transfer(worker, Lane::kCopyIn, OffPlanMove::kPull, "pull weights", start_us, end_us, bytes);
}

Span push_span(int worker, double start_us, double end_us, int64_t bytes) {
  return worker_transfer(worker, Lane::kCopyOut, OffPlanMove::kPush, "push gradients", start_us, end_us, bytes);
}

RunResult parameter_server_result(const ParameterServerOptions& options, int workers, PsRunRecord record,
                                  RunInfo info) {
  ParameterServerSummary summary =
      summarize_shards(options, workers, record.tallies, static_cast<int64_t>(record.step_losses.size()));
  const std::vector<double>& ends = summary.window_ends;
  if (ends.empty()) throw RunError("--strategy ps: no update was applied; every gradient was dropped");
  RunResult result;
  result.timelines = cut_into_windows(record.spans, ends);
  result.info = std::move(info);
  ParameterServerInfo& ps = summary.info;

  std::vector<StepLoss>& losses = record.step_losses;
  std::sort(losses.begin(), losses.end(), [](const StepLoss& a, const StepLoss& b) { return a.end_us < b.end_us; });
  size_t next = 0;
  double previous = losses.empty() ? 0.0 : losses.front().loss;
  for (double end : ends) {
    double weighted = 0;
    int64_t rows = 0;
    for (; next < losses.size() && losses[next].end_us <= end; ++next) {
      weighted += losses[next].loss * static_cast<double>(losses[next].rows);
      rows += losses[next].rows;
    }
    const double loss = rows > 0 ? weighted / static_cast<double>(rows) : previous;
    result.losses.push_back(loss);
    ps.loss_curve.emplace_back(end, loss);
    previous = loss;
  }
  result.info.parameter_server = std::move(ps);
  return result;
}

HostTensor empty_network_output(const Graph& graph) {
  const TensorRef tensor = graph.output();
  const Shape& sample = graph.node(tensor.node).output_shapes.at(static_cast<size_t>(tensor.output));
  HostTensor output;
  output.shape.push_back(graph.batch());
  output.shape.insert(output.shape.end(), sample.begin(), sample.end());
  output.data.assign(static_cast<size_t>(graph.batch() * element_count(sample)), 0.0f);
  return output;
}

}  // namespace splitscope

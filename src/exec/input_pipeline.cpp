#include "exec/input_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/median.hpp"

namespace splitscope {

std::vector<InputStepTimes> schedule_input_pipeline(const std::vector<InputStageTimes>& steps, int prefetch) {
  SPLITSCOPE_CHECK(prefetch >= 0, "prefetch must be 0 or more");
  std::vector<InputStepTimes> schedule(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    InputStepTimes& at = schedule[s];
    const InputStepTimes* previous = s > 0 ? &schedule[s - 1] : nullptr;
    // The gate on preparing batch s: the step that frees a place for it.
    double gate = 0;
    if (prefetch == 0) {
      if (previous != nullptr) gate = previous->compute_end;
    } else if (s >= static_cast<size_t>(prefetch)) {
      gate = schedule[s - static_cast<size_t>(prefetch)].compute_start;
    }
    at.prepare_start = std::max(gate, previous != nullptr ? previous->prepare_end : 0.0);
    at.prepare_end = at.prepare_start + steps[s].prepare_us;
    at.copy_start = std::max(at.prepare_end, previous != nullptr ? previous->copy_end : 0.0);
    at.copy_end = at.copy_start + steps[s].copy_us;
    at.compute_start = std::max(at.copy_end, previous != nullptr ? previous->compute_end : 0.0);
    at.compute_end = at.compute_start + steps[s].compute_us;
  }
  return schedule;
}

namespace {

/// Adds [start, end) (stream time) to `window` as a span clipped to
/// [from, to) and shifted to start at `from`; nothing if it falls outside.
void add_clipped(Timeline& window, Span span, double start, double end, double from, double to) {
  const double clipped_start = std::max(start, from);
  const double clipped_end = std::min(end, to);
  if (clipped_end <= clipped_start) return;
  span.start_us = clipped_start - from;
  span.end_us = clipped_end - from;
  window.spans.push_back(std::move(span));
}

}  // namespace

Timeline input_step_window(const std::vector<InputStepTimes>& schedule, int step, const Timeline& compute,
                           const std::vector<std::vector<InputCopy>>& copies) {
  SPLITSCOPE_CHECK(step >= 0 && static_cast<size_t>(step) < schedule.size(), "step outside the schedule");
  const double from = step > 0 ? schedule[static_cast<size_t>(step) - 1].compute_end : 0.0;
  const double to = schedule[static_cast<size_t>(step)].compute_end;
  Timeline window;
  // Batches whose copy ended by `from` left nothing in this window (a
  // batch's preparation ends before its copy starts); copy ends only grow
  // with s, so the first batch that can show is found by bisection, not by
  // walking every earlier batch: a stream of R steps costs O(R log R), not
  // O(R^2) (issue 54 item 15: --repeat 10000 with an input pipeline took 28 s).
  const auto first = std::partition_point(schedule.begin(), schedule.end(),
                                          [from](const InputStepTimes& at) { return at.copy_end <= from; });
  for (auto s = static_cast<size_t>(first - schedule.begin()); s < schedule.size(); ++s) {
    const InputStepTimes& at = schedule[s];
    if (at.prepare_start >= to) break;  // later batches start later still
    Span prepare;
    prepare.device = 0;
    prepare.lane = Lane::kHost;
    prepare.kind = SpanKind::kCompute;
    prepare.label = fmt::format("prepare batch {}", s);
    add_clipped(window, prepare, at.prepare_start, at.prepare_end, from, to);
    for (const InputCopy& copy : copies.at(s)) {
      Span span;
      span.device = copy.device;
      span.lane = Lane::kCopyIn;
      span.kind = SpanKind::kTransfer;
      span.label = fmt::format("copy batch {}", s);
      span.bytes = copy.bytes;
      add_clipped(window, span, at.copy_start, at.copy_start + copy.us, from, to);
    }
  }
  const double compute_start = schedule[static_cast<size_t>(step)].compute_start;
  for (const Span& span : compute.spans) {
    add_clipped(window, span, compute_start + span.start_us, compute_start + span.end_us, from, to);
  }
  // The window ends where the step's compute ends, even when its last span
  // (an idle tail) is shorter: its makespan is the step's period.
  if (window.makespan_us() < to - from) {
    Span marker;
    marker.device = 0;
    marker.lane = Lane::kHost;
    marker.label = "step end";
    marker.start_us = marker.end_us = to - from;
    window.spans.push_back(marker);
  }
  return window;
}

int64_t input_stream_spans_per_step(const Plan& plan, const InputPipelineOptions& input) {
  const auto batches_in_window = static_cast<int64_t>(std::max(input.prefetch, 0)) + 1;
  return batches_in_window * (1 + static_cast<int64_t>(network_input_copies(plan).size())) + 1;
}

std::vector<InputCopy> network_input_copies(const Plan& plan) {
  std::vector<InputCopy> copies;
  for (int id : plan.inputs) {
    const Value& value = plan.value(id);
    auto at = std::find_if(copies.begin(), copies.end(), [&](const InputCopy& c) { return c.device == value.device; });
    if (at == copies.end()) {
      copies.push_back(InputCopy{value.device, 0, 0});
      at = copies.end() - 1;
    }
    at->bytes += value.bytes;
  }
  std::sort(copies.begin(), copies.end(), [](const InputCopy& a, const InputCopy& b) { return a.device < b.device; });
  return copies;
}

InputPipelineInfo summarize_input_pipeline(const std::vector<InputStepTimes>& schedule, int skip,
                                           const InputPipelineOptions& options) {
  InputPipelineInfo info;
  info.cost_us_per_sample = options.cost_us_per_sample;
  info.prefetch = options.prefetch;
  std::vector<double> prepare, copy, compute, period, stall;
  for (size_t s = static_cast<size_t>(std::max(skip, 0)); s < schedule.size(); ++s) {
    const InputStepTimes& at = schedule[s];
    const double previous_end = s > 0 ? schedule[s - 1].compute_end : 0.0;
    prepare.push_back(at.prepare_end - at.prepare_start);
    copy.push_back(at.copy_end - at.copy_start);
    compute.push_back(at.compute_end - at.compute_start);
    period.push_back(at.compute_end - previous_end);
    stall.push_back(std::max(0.0, at.compute_start - previous_end));
  }
  info.steps = static_cast<int>(period.size());
  if (info.steps == 0) return info;
  info.prepare_us = median(prepare);
  info.copy_us = median(copy);
  info.compute_us = median(compute);
  info.step_us = median(period);
  info.stall_us = median(stall);
  info.serial_step_us = info.prepare_us + info.copy_us + info.compute_us;
  info.input_bound = info.stall_us > 0.05 * info.step_us;
  return info;
}

void check_input_pipeline_options(const InputPipelineOptions& input) {
  // Up to a second a sample: a cpu run sleeps through it for real, a batch at a time.
  if (!(input.cost_us_per_sample >= 0 && input.cost_us_per_sample <= kMaxInputCostUsPerSample)) {
    throw InputError("--input-cost-us-per-sample", "",
                     fmt::format("must be from 0 to {:g} (microseconds of host work per sample), got {}",
                                 kMaxInputCostUsPerSample, input.cost_us_per_sample));
  }
  // Each batch ahead is a batch held in memory; real loaders keep 2 to 8.
  if (input.prefetch < 0 || input.prefetch > kMaxPrefetch) {
    throw InputError("--prefetch", "",
                     fmt::format("must be from 0 to {} (batches prepared ahead), got {}", kMaxPrefetch, input.prefetch));
  }
}

}  // namespace splitscope

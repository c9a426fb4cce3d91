#include "exec/cpu/plan_tasks.hpp"

#include "exec/cpu/held_back.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <fmt/format.h>
#include <unordered_map>

#include "exec/cpu/collectives.hpp"
#include "exec/cpu/compute_task.hpp"
#include "exec/cpu/stored_precision.hpp"
#include "plan/collective_schedule.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

class TaskBuilder {
 public:
  TaskBuilder(const Plan& plan, ValueBuffers& buffers, WeightStore& weights,
              const std::optional<StragglerDelay>& straggler)
      : plan_(plan), buffers_(buffers), weights_(weights), straggler_(straggler), writer_(plan.values.size(), -1) {}

  PlanTasks run() {
    const PlanWalk walk = walk_plan(plan_);
    allocate_scratch();
    first_span_.assign(plan_.ops.size(), -1);
    for (const PlanOp& op : plan_.ops) {
      first_span_[static_cast<size_t>(op.id)] = static_cast<int>(tasks_.spans.size());
      if (op.role != OpRole::kCollective) {
        tasks_.spans.push_back(single_span(op));
        continue;
      }
      // Computed once: its deliveries give the spans here, its sends the tasks in collective().
      const CollectiveSchedule& schedule = schedules_.emplace(op.id, collective_schedule(plan_, op)).first->second;
      for (const CollectiveDelivery& delivery : schedule.deliveries) tasks_.spans.push_back(delivery_span(op, delivery));
    }
    std::vector<int> op_task(plan_.ops.size(), -1);  // compute/epilogue op -> its task
    for (int id : walk.order) {
      const PlanOp& op = plan_.op(id);
      switch (op.role) {
        case OpRole::kCompute:
        case OpRole::kEpilogue:
        case OpRole::kUpdate: {
          SPLITSCOPE_CHECK(op.device >= 0 && op.device < plan_.devices,
                           op_label(plan_, op) + " is on no device of the plan");
          float* scratch = tasks_.scratch[static_cast<size_t>(op.device)].data();
          const int before = walk.schedule_previous[static_cast<size_t>(id)];
          TaskFunction work = compute_task(plan_, op, buffers_, weights_, scratch);
          // What the op writes is stored at the plan's precision (an update stores its own writes).
          if (op.role != OpRole::kUpdate) work = storing_outputs(plan_, op, buffers_, std::move(work));
          if (straggler_ && straggler_->holds_back(op.device) && before < 0) work = held_back(std::move(work), straggler_->ms);
          const int task = add({op.device, Lane::kCompute, op_label(plan_, op), std::move(work)},
                               {first_span_[static_cast<size_t>(id)], -1}, op.inputs);
          if (before >= 0) tasks_.graph.add_dependency(op_task.at(static_cast<size_t>(before)), task);
          op_task[static_cast<size_t>(id)] = task;
          for (int value : op.outputs) writer_.at(static_cast<size_t>(value)) = task;
          break;
        }
        case OpRole::kTransfer: transfer(op); break;
        case OpRole::kCollective: collective(op); break;
      }
    }
    return std::move(tasks_);
  }

 private:
  /// Per-device scratch, sized for the hungriest op of the device.
  void allocate_scratch() {
    std::vector<int64_t> floats(static_cast<size_t>(plan_.devices), 0);
    for (const PlanOp& op : plan_.ops) {
      if (op.role != OpRole::kCompute) continue;
      auto& need = floats.at(static_cast<size_t>(op.device));
      need = std::max(need, compute_scratch_floats(plan_, op));
    }
    tasks_.scratch.resize(static_cast<size_t>(plan_.devices));
    for (size_t d = 0; d < floats.size(); ++d) tasks_.scratch[d].assign(static_cast<size_t>(floats[d]), 0.0f);
  }

  /// Adds a task after the writers of `reads` (values no op writes are inputs, there before the run).
  int add(Task task, TaskSpans spans, const std::vector<int>& reads) {
    const int id = tasks_.graph.add(std::move(task));
    tasks_.task_spans.push_back(spans);
    for (int value : reads) after_writers(value, id);
    return id;
  }

  void after_writers(int value, int task) {
    if (value < 0 || plan_.value(value).producer < 0) return;
    if (const auto many = collective_writers_.find(value); many != collective_writers_.end()) {
      for (int before : many->second) tasks_.graph.add_dependency(before, task);
      return;
    }
    const int before = writer_.at(static_cast<size_t>(value));
    SPLITSCOPE_CHECK(before >= 0, fmt::format("{} reads value {} before any op writes it",
                                              tasks_.graph.task(task).label, value));
    tasks_.graph.add_dependency(before, task);
  }

  void transfer(const PlanOp& op) {
    SPLITSCOPE_CHECK(op.inputs.size() == 1 && op.outputs.size() == 1, "a transfer moves one value");
    const Value& from = plan_.value(op.inputs[0]);
    const Value& to = plan_.value(op.outputs[0]);
    SPLITSCOPE_CHECK(from.batch == to.batch && from.channels == to.channels && from.device == op.src_device &&
                         to.device == op.device,
                     "transfer " + op_label(plan_, op) + " does not copy its value unchanged between its devices");
    const ConstChannelBlock source = std::as_const(buffers_).block(from.id);
    const ChannelBlock target = buffers_.block(to.id);
    const int task = add({op.device, Lane::kCopyIn, op_label(plan_, op),
                          [source, target](TaskContext&) { copy_channels(source, target); }},
                         {first_span_[static_cast<size_t>(op.id)], -1}, op.inputs);
    writer_.at(static_cast<size_t>(to.id)) = task;
  }

  /// The collective as its algorithm's sends: one task per send on the
  /// receiver's copy-in lane, one per local copy of a participant's own part.
  void collective(const PlanOp& op) {
    const CollectiveSchedule& schedule = schedules_.at(op.id);
    const std::string label = op_label(plan_, op);
    const int span = first_span_[static_cast<size_t>(op.id)];
    const auto input = [&](int slot) { return op.inputs.at(static_cast<size_t>(slot)); };
    const auto output = [&](int index) { return op.outputs.at(static_cast<size_t>(index)); };
    // Every value of participant `slot` (its segments).
    const auto values_of = [&](const std::vector<int>& values, int slot) {
      std::vector<int> ids;
      for (int k = 0; k < schedule.segments; ++k) ids.push_back(values.at(static_cast<size_t>(schedule.index(slot, k))));
      return ids;
    };
    for (size_t d = 0; d < schedule.deliveries.size(); ++d) {
      for (int value : values_of(op.outputs, static_cast<int>(d))) {
        SPLITSCOPE_CHECK(plan_.value(value).device == schedule.deliveries[d].device,
                         label + ": an output is not on its participant");
      }
    }

    // A reduce-scatter's partial sums in transit: a copy of the whole tensor per participant.
    std::vector<float*> staging(schedule.staged ? op.participants.size() : 0, nullptr);
    for (float*& copy : staging) {
      copy = tasks_.staging.emplace_back(static_cast<size_t>(schedule.segment_starts.back())).data();
    }
    const auto staged = [&](int slot, Range at) -> float* {
      SPLITSCOPE_CHECK(at.end <= schedule.segment_starts.back(), label + ": a chunk outside the staging copy");
      return staging.at(static_cast<size_t>(slot)) + at.begin;
    };
    std::vector<std::vector<int>> writers(schedule.deliveries.size());
    for (size_t d = 0; d < schedule.deliveries.size(); ++d) {
      const CollectiveDelivery& delivery = schedule.deliveries[d];
      if (delivery.local_copy < 0) continue;
      for (int k = 0; k < schedule.segments; ++k) {
        const int from = input(schedule.index(delivery.local_copy, k));
        const ConstChannelBlock own = std::as_const(buffers_).block(from);
        const ChannelBlock target = buffers_.block(output(schedule.index(static_cast<int>(d), k)));
        TaskFunction work = [own, target](TaskContext&) { copy_channels(own, target); };
        writers[d].push_back(add({delivery.device, Lane::kCopyIn,
                                  fmt::format("{} (own part on {})", label, delivery.device), std::move(work)},
                                 {span + static_cast<int>(d), -1}, {from}));
      }
    }

    std::vector<int> send_task(schedule.sends.size(), -1);
    for (size_t s = 0; s < schedule.sends.size(); ++s) {
      const CollectiveSend& send = schedule.sends[s];
      TaskFunction work;
      if (send.slice >= 0) {
        const int source_value = send.from_input ? input(send.from) : output(send.touches_from);
        const ConstChannelBlock source = std::as_const(buffers_).block(source_value);
        const ChannelBlock target = buffers_.block(output(send.delivers_to));
        const Range channels = plan_.value(input(send.slice)).channels;
        work = [source, target, channels](TaskContext&) { copy_channel_range(source, target, channels); };
      } else {
        // One receive per segment the chunk spans (a bucket's gradients).
        struct Piece {
          const float* data;
          const float* own;
          float* to;
          int64_t count;
        };
        std::vector<Piece> pieces;
        const CollectiveDelivery& receiver = schedule.deliveries.at(static_cast<size_t>(send.delivers_to));
        // A reduce-scatter of several rows repeats its chunk in each (CollectiveSchedule::rows).
        for (int64_t row = 0; row < schedule.rows; ++row) {
          const int64_t row_start = row * schedule.row_elements;
          for (const SegmentPiece& piece : schedule.pieces(send.elements)) {
            const Range at = piece.elements;
            const Range in_tensor{row_start + at.begin, row_start + at.end};
            const float* data = nullptr;
            if (send.from_staging) {
              data = staged(send.from, in_tensor);
            } else {
              const int from = send.from_input ? input(schedule.index(send.from, piece.segment))
                                               : output(schedule.index(send.touches_from, piece.segment));
              const ConstChannelBlock source = std::as_const(buffers_).block(from);
              SPLITSCOPE_CHECK(in_tensor.end <= source.floats(), label + ": a chunk outside the value it is sent from");
              data = source.data + in_tensor.begin;
            }
            float* to = nullptr;
            if (send.to_staging) {
              to = staged(send.delivers_to, in_tensor);
            } else {
              // A reduce-scatter's output holds only its own chunk of each row, from receiver.first_element on.
              const ChannelBlock target = buffers_.block(output(schedule.index(send.delivers_to, piece.segment)));
              const int64_t row_out = schedule.rows > 1 ? row * target.row_floats() : 0;
              SPLITSCOPE_CHECK(at.begin >= receiver.first_element &&
                                   row_out + at.end - receiver.first_element <= target.floats(),
                               label + ": a chunk outside the value it lands in");
              to = target.data + row_out + (at.begin - receiver.first_element);
            }
            const float* own = nullptr;  // the receiver's own contribution, for a reducing send
            if (send.reduces) {
              const ConstChannelBlock mine =
                  std::as_const(buffers_).block(input(schedule.index(send.needs_receiver_input, piece.segment)));
              SPLITSCOPE_CHECK(in_tensor.end <= mine.floats(), label + ": a chunk outside the receiver's own input");
              own = mine.data + in_tensor.begin;
            }
            pieces.push_back({data, own, to, at.size()});
          }
        }
        // A reducing send writes a sum, stored at the value's format like any other write.
        const NumberFormat format = send.reduces ? value_format(plan_, plan_.value(op.outputs.at(0)))
                                                 : NumberFormat::kFloat32;
        work = [pieces = std::move(pieces), format](TaskContext&) {
          for (const Piece& piece : pieces) {
            receive_chunk(piece.data, piece.own, piece.to, piece.count);
            round_in_place(format, {piece.to, static_cast<size_t>(piece.count)});
          }
        };
      }
      std::vector<int> reads;
      for (int slot : {send.needs_input, send.needs_receiver_input}) {
        if (slot < 0) continue;
        for (int value : values_of(op.inputs, slot)) reads.push_back(value);
      }
      const int task = add({send.to_device, Lane::kCopyIn,
                            fmt::format("{} (send {}: {} -> {})", label, s, send.from_device, send.to_device),
                            std::move(work)},
                           {span + send.delivers_to, send.touches_from >= 0 ? span + send.touches_from : -1}, reads);
      send_task[s] = task;
      writers[static_cast<size_t>(send.delivers_to)].push_back(task);
    }
    // A send's `then` lists name the sends that wait for it.
    for (size_t s = 0; s < schedule.sends.size(); ++s) {
      for (int next : schedule.sends[s].then) {
        tasks_.graph.add_dependency(send_task[s], send_task.at(static_cast<size_t>(next)));
      }
    }
    for (size_t d = 0; d < schedule.deliveries.size(); ++d) {
      SPLITSCOPE_CHECK(!writers[d].empty(), label + ": an output nothing writes");
      for (int value : values_of(op.outputs, static_cast<int>(d))) collective_writers_[value] = writers[d];
    }
  }

  const Plan& plan_;
  ValueBuffers& buffers_;
  WeightStore& weights_;
  std::optional<StragglerDelay> straggler_;
  PlanTasks tasks_;
  std::vector<int> first_span_;  ///< by op: its first span
  std::vector<int> writer_;      ///< by value: the task writing it (not for collective outputs)
  std::unordered_map<int, std::vector<int>> collective_writers_;  ///< collective outputs: every task writing into them
  std::unordered_map<int, CollectiveSchedule> schedules_;         ///< by collective op id
};

}  // namespace

PlanTasks build_plan_tasks(const Plan& plan, ValueBuffers& buffers, WeightStore& weights,
                           const std::optional<StragglerDelay>& straggler) {
  return TaskBuilder(plan, buffers, weights, straggler).run();
}

// A span's start is the earliest start of the tasks in or touching it; its
// end the latest end of the tasks doing its work (plan_tasks.hpp).
Timeline tasks_timeline(const PlanTasks& tasks, const std::vector<TaskTiming>& timings) {
  constexpr double kUnset = -1;
  Timeline timeline;
  timeline.spans.reserve(tasks.spans.size());
  for (const SpanSlot& slot : tasks.spans) {
    Span& span = append_unstarted_span(timeline.spans, slot);
    span.start_us = kUnset;
    span.end_us = kUnset;
  }
  const auto widen_start = [&](int index, double start) {
    Span& span = timeline.spans.at(static_cast<size_t>(index));
    span.start_us = span.start_us == kUnset ? start : std::min(span.start_us, start);
  };
  for (size_t task = 0; task < tasks.task_spans.size(); ++task) {
    const TaskSpans& in = tasks.task_spans[task];
    if (in.span >= 0) {
      widen_start(in.span, timings[task].start_us);
      Span& span = timeline.spans[static_cast<size_t>(in.span)];
      span.end_us = std::max(span.end_us, timings[task].end_us);
    }
    if (in.touches >= 0) widen_start(in.touches, timings[task].start_us);
  }
  for (const Span& span : timeline.spans) {
    SPLITSCOPE_CHECK(span.end_us != kUnset, fmt::format("op {} ran no task", span.op));
  }
  return timeline;
}

}  // namespace splitscope

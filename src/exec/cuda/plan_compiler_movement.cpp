// The plan compiler: epilogues, transfers and collectives.
#include "exec/cuda/plan_compiler_state.hpp"

namespace splitscope::gpu {

namespace plan_compilation {

void Compiler::epilogue(const PlanOp& op) {
  const int span = new_span(single_span(op));
  const ValueView sum = view(op.inputs.at(0));
  const ValueView y = view(op.outputs.at(0));
  SPLITSCOPE_CHECK(sum.batch == y.batch && sum.channels == y.channels, "epilogue changes the value's ranges");
  add_step(MapStep{y.batch.size(), y.row_stride(), sum.start(), sum.row_stride(), y.start(), y.row_stride(),
                   graph_.node(op.node).attrs.activation},
           compute_stream(op), span, {sum.buffer}, {y.buffer});
}

void Compiler::transfer(const PlanOp& op) {
  const ValueView src = view(op.inputs.at(0));
  const ValueView dst = view(op.outputs.at(0));
  SPLITSCOPE_CHECK(src.batch == dst.batch && src.channels == dst.channels && src.inner == dst.inner,
                   "a transfer changes the value's ranges (op " + std::to_string(op.id) + ")");
  SPLITSCOPE_CHECK(src.device == op.src_device && dst.device == op.device, "transfer devices disagree with values");
  const int span = new_span(single_span(op));
  copy_between(op, span, src.device, dst.device, src.start(), src.elements(), dst.start(), dst.elements(),
               src.elements(), 1);
}

void Compiler::collective(const PlanOp& op) {
  const CollectiveSchedule schedule = collective_schedule(plan_, op);
  const auto at = [&schedule](const std::vector<ValueView>& views, int slot, int segment) -> const ValueView& {
    return views.at(static_cast<size_t>(schedule.index(slot, segment)));
  };
  std::vector<ValueView> inputs;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    inputs.push_back(view(op.inputs[i]));
    SPLITSCOPE_CHECK(inputs.back().device == op.participants[i / static_cast<size_t>(schedule.segments)],
                     "collective input not on its participant");
  }
  std::vector<ValueView> outputs;  // op.outputs order: a delivery's segments in a row
  for (int id : op.outputs) outputs.push_back(view(id));
  std::vector<int> spans;
  for (size_t d = 0; d < schedule.deliveries.size(); ++d) {
    const CollectiveDelivery& delivery = schedule.deliveries[d];
    spans.push_back(new_span(delivery_span(op, delivery)));
    if (delivery.local_copy < 0) continue;
    for (int k = 0; k < schedule.segments; ++k) {
      const ValueView& own = at(inputs, delivery.local_copy, k);
      copy_slice(op, spans.back(), own, at(outputs, static_cast<int>(d), k), own.channels);
    }
  }
  std::map<int, int> receive_buffers;  // receiving delivery -> its buffer for reducing sends
  // A reduce-scatter's partial sums in transit: a copy of the whole tensor on each participant.
  std::vector<int> staging;
  for (size_t i = 0; schedule.staged && i < op.participants.size(); ++i) {
    BufferSpec spec;
    spec.kind = BufferKind::kReceive;
    spec.device = op.participants[i];
    spec.elements = schedule.segment_starts.back();
    spec.label = fmt::format("{} op {}: partial sums on device {}", to_string(op.collective), op.id, spec.device);
    staging.push_back(add_buffer(std::move(spec)));
  }
  for (const CollectiveSend& send : schedule.sends) {
    const int span = spans.at(static_cast<size_t>(send.delivers_to));
    if (send.slice >= 0) {
      const ValueView& source = send.from_input ? inputs.at(static_cast<size_t>(send.from))
                                                : outputs.at(static_cast<size_t>(send.touches_from));
      copy_slice(op, span, source, outputs.at(static_cast<size_t>(send.delivers_to)),
                 inputs.at(static_cast<size_t>(send.slice)).channels);
      continue;
    }
    // A chunk of a bucket may span several of its values: a copy (and a sum) for each; a
    // reduce-scatter of several rows repeats its chunk in each row (CollectiveSchedule::rows).
    const int64_t first = schedule.deliveries.at(static_cast<size_t>(send.delivers_to)).first_element;
    for (int64_t row = 0; row < schedule.rows; ++row) {
      const int64_t row_start = row * schedule.row_elements;
      for (const SegmentPiece& piece : schedule.pieces(send.elements)) {
        const Range part = piece.elements;
        const Range in_tensor{row_start + part.begin, row_start + part.end};
        const ValueView& source = send.from_input ? at(inputs, send.from, piece.segment)
                                                  : at(outputs, send.touches_from, piece.segment);
        const ValueView& target = at(outputs, send.delivers_to, piece.segment);
        const int64_t row_out = schedule.rows > 1 ? row * target.row_stride() : 0;
        // From the sender's staging or value, into the receiver's staging or (its chunk of) its output.
        SPLITSCOPE_CHECK((send.from_staging || in_tensor.end <= source.elements()) &&
                             (send.to_staging ||
                              (part.begin >= first && row_out + part.end - first <= target.elements())),
                         "collective chunk outside its values (op " + std::to_string(op.id) + ")");
        const Ref from = send.from_staging ? Ref{staging.at(static_cast<size_t>(send.from)), in_tensor.begin}
                                           : Ref{source.buffer, in_tensor.begin};
        const Ref into = send.to_staging ? Ref{staging.at(static_cast<size_t>(send.delivers_to)), in_tensor.begin}
                                         : Ref{target.buffer, row_out + part.begin - first};
        const int64_t count = part.size();
        if (!send.reduces) {
          copy_between(op, span, source.device, target.device, from, count, into, count, count, 1);
          continue;
        }
        auto [slot, fresh] = receive_buffers.try_emplace(send.delivers_to, -1);
        if (fresh) {
          int64_t largest = 0;  // the longest chunk any reducing send carries, of every row
          for (const CollectiveSend& other : schedule.sends) {
            if (other.reduces) largest = std::max(largest, other.elements.size());
          }
          BufferSpec spec;
          spec.kind = BufferKind::kReceive;
          spec.device = target.device;
          spec.elements = largest * schedule.rows;
          spec.label = fmt::format("{} op {}: receives on device {}", to_string(op.collective), op.id, target.device);
          slot->second = add_buffer(std::move(spec));
        }
        const int receive = slot->second;
        const Ref landed{receive, row * send.elements.size() + piece.offset};
        copy_between(op, span, source.device, target.device, from, count, landed, count, count, 1);
        const ValueView& own = at(inputs, send.needs_receiver_input, piece.segment);
        SumStep sum;
        sum.elements = count;
        sum.y = into;
        sum.inputs = {Ref{own.buffer, in_tensor.begin}, landed};
        add_step(std::move(sum), StreamId{target.device, StreamLane::kCopyIn}, span, {own.buffer, receive},
                 {into.buffer});
      }
    }
  }
}

void Compiler::copy_slice(const PlanOp& op, int span, const ValueView& source, const ValueView& target, Range channels) {
  check_rows(source, target.batch);
  SPLITSCOPE_CHECK(source.channels.contains(channels) && target.channels.contains(channels) &&
                       source.inner == target.inner,
                   "gathered slice outside the gathered value (op " + std::to_string(op.id) + ")");
  copy_between(op, span, source.device, target.device, source.at_channel(channels.begin), source.row_stride(),
               target.at_channel(channels.begin), target.row_stride(), channels.size() * target.inner,
               target.batch.size());
}

}  // namespace plan_compilation

}  // namespace splitscope::gpu

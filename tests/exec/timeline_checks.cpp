#include "timeline_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

namespace splitscope::testing_support {

void expect_timeline_follows_plan(const Plan& plan, const Timeline& timeline) {
  std::multimap<int, const Span*> spans_of;  // op id -> its spans
  for (const Span& span : timeline.spans) {
    EXPECT_GE(span.start_us, 0.0);
    EXPECT_GE(span.end_us, span.start_us);
    spans_of.emplace(span.op, &span);
  }
  size_t expected = 0;
  for (const PlanOp& op : plan.ops) {
    const auto [first, last] = spans_of.equal_range(op.id);
    const size_t count = static_cast<size_t>(std::distance(first, last));
    const std::string label = op_label(plan, op);
    switch (op.role) {
      case OpRole::kCompute:
      case OpRole::kEpilogue:
      case OpRole::kUpdate:
        ASSERT_EQ(count, 1u) << label;
        EXPECT_EQ(first->second->device, op.device) << label;
        EXPECT_EQ(first->second->lane, Lane::kCompute) << label;
        EXPECT_EQ(first->second->kind, SpanKind::kCompute) << label;
        EXPECT_EQ(first->second->flops, op.flops) << label;
        break;
      case OpRole::kTransfer:
        ASSERT_EQ(count, 1u) << label;
        EXPECT_EQ(first->second->device, op.device) << label;
        EXPECT_EQ(first->second->lane, Lane::kCopyIn) << label;
        EXPECT_EQ(first->second->kind, SpanKind::kTransfer) << label;
        EXPECT_EQ(first->second->bytes, op.bytes_moved) << label;
        break;
      case OpRole::kCollective: {
        ASSERT_EQ(count, op.outputs.size()) << label;
        int64_t bytes = 0;
        std::set<int> devices;
        for (auto it = first; it != last; ++it) {
          EXPECT_EQ(it->second->lane, Lane::kCopyIn) << label;
          EXPECT_EQ(it->second->kind, SpanKind::kCollective) << label;
          bytes += it->second->bytes;
          devices.insert(it->second->device);
        }
        std::set<int> output_devices;
        for (int value : op.outputs) output_devices.insert(plan.value(value).device);
        EXPECT_EQ(devices, output_devices) << label;
        EXPECT_EQ(bytes, op.bytes_moved) << label;
        break;
      }
    }
    expected += count;
    // Inputs first: the span that wrote each input (for a collective, the one
    // on the value's device). A collective's sends start as their own data
    // exists, so each of its spans starts after some input was written and
    // ends after every input was.
    double first_input_end = -1;
    for (int input : op.inputs) {
      if (input < 0 || plan.value(input).producer < 0) {
        first_input_end = 0;
        continue;
      }
      const Value& value = plan.value(input);
      const auto [p_first, p_last] = spans_of.equal_range(value.producer);
      const Span* writer = nullptr;
      for (auto it = p_first; it != p_last; ++it) {
        if (p_last == std::next(p_first) || it->second->device == value.device) writer = it->second;
      }
      ASSERT_NE(writer, nullptr) << label << " input " << input;
      first_input_end = first_input_end < 0 ? writer->end_us : std::min(first_input_end, writer->end_us);
      for (auto it = first; it != last; ++it) {
        if (op.role == OpRole::kCollective) {
          EXPECT_GE(it->second->end_us, writer->end_us) << label << " ended before its input " << input << " was written";
        } else {
          EXPECT_GE(it->second->start_us, writer->end_us) << label << " started before its input " << input << " was written";
        }
      }
    }
    if (op.role == OpRole::kCollective && first_input_end >= 0) {
      for (auto it = first; it != last; ++it) {
        EXPECT_GE(it->second->start_us, first_input_end) << label << " started before any input was written";
      }
    }
  }
  EXPECT_EQ(timeline.spans.size(), expected);
  for (const auto& schedule : plan.schedule) {
    for (size_t i = 1; i < schedule.size(); ++i) {
      const Span* before = spans_of.find(schedule[i - 1])->second;
      const Span* after = spans_of.find(schedule[i])->second;
      EXPECT_GE(after->start_us, before->end_us) << op_label(plan, plan.op(schedule[i]));
    }
  }
}

}  // namespace splitscope::testing_support

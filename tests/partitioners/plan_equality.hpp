#pragma once
// Field by field equality of two plans, for the tests that hold one way of
// building a plan to another (replicas held once against every replica written).

#include <gtest/gtest.h>

#include "plan/plan.hpp"

namespace splitscope::testing {

inline void expect_same_slice(const Slice& a, const Slice& b, int op) {
  EXPECT_EQ(a.batch, b.batch) << "op " << op;
  EXPECT_EQ(a.out, b.out) << "op " << op;
  EXPECT_EQ(a.reduce, b.reduce) << "op " << op;
  EXPECT_EQ(a.features, b.features) << "op " << op;
}

/// Every op, value, schedule, memory figure and list of `got` as `want`'s.
inline void expect_same_plan(const Plan& got, const Plan& want) {
  EXPECT_EQ(got.strategy, want.strategy);
  EXPECT_EQ(got.devices, want.devices);
  EXPECT_EQ(got.microbatches, want.microbatches);
  EXPECT_EQ(got.notes, want.notes);
  EXPECT_FALSE(got.replicas.has_value());
  ASSERT_EQ(got.values.size(), want.values.size());
  for (size_t i = 0; i < want.values.size(); ++i) {
    const Value& a = got.values[i];
    const Value& b = want.values[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.role, b.role) << "value " << i;
    EXPECT_EQ(a.device, b.device) << "value " << i;
    EXPECT_EQ(a.node, b.node) << "value " << i;
    EXPECT_EQ(a.output, b.output) << "value " << i;
    EXPECT_EQ(a.microbatch, b.microbatch) << "value " << i;
    EXPECT_EQ(a.batch, b.batch) << "value " << i;
    EXPECT_EQ(a.channels, b.channels) << "value " << i;
    EXPECT_EQ(a.reduce, b.reduce) << "value " << i;
    EXPECT_EQ(a.features, b.features) << "value " << i;
    EXPECT_EQ(a.partial, b.partial) << "value " << i;
    EXPECT_EQ(a.pre_activation, b.pre_activation) << "value " << i;
    EXPECT_EQ(a.producer, b.producer) << "value " << i;
    EXPECT_EQ(a.bytes, b.bytes) << "value " << i;
  }
  ASSERT_EQ(got.ops.size(), want.ops.size());
  for (size_t i = 0; i < want.ops.size(); ++i) {
    const PlanOp& a = got.ops[i];
    const PlanOp& b = want.ops[i];
    const int id = static_cast<int>(i);
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.role, b.role) << "op " << i;
    EXPECT_EQ(a.node, b.node) << "op " << i;
    EXPECT_EQ(a.microbatch, b.microbatch) << "op " << i;
    EXPECT_EQ(a.device, b.device) << "op " << i;
    EXPECT_EQ(a.src_device, b.src_device) << "op " << i;
    EXPECT_EQ(a.collective, b.collective) << "op " << i;
    EXPECT_EQ(a.algorithm, b.algorithm) << "op " << i;
    EXPECT_EQ(a.participants, b.participants) << "op " << i;
    expect_same_slice(a.slice, b.slice, id);
    EXPECT_EQ(a.inputs, b.inputs) << "op " << i;
    EXPECT_EQ(a.outputs, b.outputs) << "op " << i;
    EXPECT_EQ(a.params, b.params) << "op " << i;
    EXPECT_EQ(a.flops, b.flops) << "op " << i;
    EXPECT_EQ(a.bytes_read, b.bytes_read) << "op " << i;
    EXPECT_EQ(a.bytes_written, b.bytes_written) << "op " << i;
    EXPECT_EQ(a.param_count, b.param_count) << "op " << i;
    EXPECT_EQ(a.bytes_moved, b.bytes_moved) << "op " << i;
    EXPECT_EQ(a.payload_bytes, b.payload_bytes) << "op " << i;
    EXPECT_EQ(a.recomputes, b.recomputes) << "op " << i;
    EXPECT_EQ(a.spans_replicas, b.spans_replicas) << "op " << i;
  }
  EXPECT_EQ(got.schedule, want.schedule);
  ASSERT_EQ(got.memory.size(), want.memory.size());
  for (size_t d = 0; d < want.memory.size(); ++d) {
    EXPECT_EQ(got.memory[d].params, want.memory[d].params) << "device " << d;
    EXPECT_EQ(got.memory[d].activations_peak, want.memory[d].activations_peak) << "device " << d;
    EXPECT_EQ(got.memory[d].transfer_buffers, want.memory[d].transfer_buffers) << "device " << d;
    EXPECT_EQ(got.memory[d].peak, want.memory[d].peak) << "device " << d;
    EXPECT_EQ(got.memory[d].gradients, want.memory[d].gradients) << "device " << d;
    EXPECT_EQ(got.memory[d].optimizer_state, want.memory[d].optimizer_state) << "device " << d;
  }
  EXPECT_EQ(got.inputs, want.inputs);
  EXPECT_EQ(got.parameters, want.parameters);
  EXPECT_EQ(got.outputs, want.outputs);
}

}  // namespace splitscope::testing

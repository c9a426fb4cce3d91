#include "plan/plan_check.hpp"

#include "plan/plan_replicas.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <stdexcept>

#include "plan/collective_schedule.hpp"
#include "plan/plan_walk.hpp"

namespace splitscope {
namespace {

/// Rows x output channels x reductions: up to 2^80 for the largest ops the
/// model limits allow (an output and a reduction of 2^40 elements each),
/// past int64_t (a dense layer of 10^10 units reducing as many inputs
/// overflowed it; found by the plans fuzzer).
__extension__ typedef __int128 Volume;

/// A compute slice as a box in (rows, output channels, reduction) space.
struct Box {
  Range rows;
  Range out;
  Range reduce;
  /// The head-wise split's share of the features (whole elsewhere): the
  /// slices of one op cut them alike, so their ranges tile one block.
  FeatureCut features;
  int device = -1;  ///< where it runs (a replica of a slice on another device is no more work)
  Volume volume() const { return static_cast<Volume>(rows.size()) * out.size() * reduce.size(); }
  bool same_work(const Box& other) const {
    return rows == other.rows && out == other.out && reduce == other.reduce && features == other.features;
  }
};

/// Whether `box` repeats, on another device, work already in `counted` (an
/// op that several devices run whole, as tensor's layer norms on a
/// transformer): one op's work done twice in parallel, counted once. The
/// same work twice on one device stays counted twice, for the check to catch.
bool replica_of_counted(const std::vector<Box>& counted, const Box& box) {
  bool elsewhere = false;
  for (const Box& other : counted) {
    if (!other.same_work(box)) continue;
    if (other.device == box.device) return false;
    elsewhere = true;
  }
  return elsewhere;
}

/// The work of `slice`: rows x outputs x reductions. A kind with its own
/// partial-sum rule (OpDef::partial: a convolution's input gradient) writes
/// the channels its reduction range determines, whatever range of them it
/// holds, so its slices tile rows x reductions alone.
Box work_of(const OpNode& node, const Slice& slice) {
  if (op_def(node.kind).partial != nullptr) return {slice.batch, {0, 1}, slice.reduce, slice.features, -1};
  return {slice.batch, slice.out, slice.reduce, slice.features, -1};
}

bool overlaps(const Range& a, const Range& b) { return a.begin < b.end && b.begin < a.end; }
bool overlaps(const Box& a, const Box& b) {
  const bool features = a.features.whole() || b.features.whole() || overlaps(a.features.range, b.features.range);
  return overlaps(a.rows, b.rows) && overlaps(a.out, b.out) && overlaps(a.reduce, b.reduce) && features;
}

Box placed_work(const OpNode& node, const PlanOp& op) {
  Box box = work_of(node, op.slice);
  box.device = op.device;
  return box;
}

class Checker {
 public:
  explicit Checker(const Plan& plan) : plan_(plan), graph_(*plan.graph) {}

  std::vector<std::string> run() {
    check_values();
    for (const PlanOp& op : plan_.ops) check_op(op);
    check_tiling();
    check_outputs();
    check_schedule();
    return std::move(problems_);
  }

 private:
  template <typename... Args>
  void fail(fmt::format_string<Args...> format, Args&&... args) {
    problems_.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  std::string name(const PlanOp& op) const { return fmt::format("op {} ({})", op.id, op_label(plan_, op)); }

  bool valid_value(int id) const { return id >= 0 && id < static_cast<int>(plan_.values.size()); }

  void check_values() {
    writes_.assign(plan_.values.size(), 0);
    for (int input : plan_.inputs) {
      if (!valid_value(input)) {
        fail("input value {} does not exist", input);
        continue;
      }
      writes_[static_cast<size_t>(input)] += 1;
      if (plan_.value(input).producer != -1) fail("input value {} has a producer", input);
      if (plan_.value(input).role != ValueRole::kActivation) fail("input value {} is not an activation", input);
    }
    for (int id : plan_.parameters) {
      if (!valid_value(id)) {
        fail("parameter value {} does not exist", id);
        continue;
      }
      writes_[static_cast<size_t>(id)] += 1;
      const Value& value = plan_.value(id);
      if (value.producer != -1 || value.role != ValueRole::kParameter) {
        fail("parameter value {} is not a parameter resident before the run", id);
      }
    }
    for (const PlanOp& op : plan_.ops) {
      if (op.id != static_cast<int>(&op - plan_.ops.data())) fail("op at index {} has id {}", &op - plan_.ops.data(), op.id);
      for (int output : op.outputs) {
        if (!valid_value(output)) {
          fail("{} writes a value that does not exist", name(op));
          continue;
        }
        writes_[static_cast<size_t>(output)] += 1;
        if (plan_.value(output).producer != op.id) fail("{} writes value {} owned by op {}", name(op), output, plan_.value(output).producer);
      }
    }
    for (const Value& value : plan_.values) {
      if (writes_[static_cast<size_t>(value.id)] != 1) {
        fail("value {} ({}) is written {} times", value.id, graph_.node(value.node).name, writes_[static_cast<size_t>(value.id)]);
      }
      if (value.device < 0 || value.device >= plan_.devices) fail("value {} is on unknown device {}", value.id, value.device);
      const Shape& shape = graph_.node(value.node).output_shapes.at(static_cast<size_t>(value.output));
      if (const int64_t holds = value_elements(graph_, value) * value_element_bytes(plan_, value);
          value.bytes != holds) {
        fail("value {} counts {} bytes, its slice holds {}", value.id, value.bytes, holds);
      }
      if (value.channels.begin < 0 || value.channels.end > shape.at(0) || value.channels.empty()) {
        fail("value {} has channels {} outside {}", value.id, value.channels.to_string(), to_string(shape));
      }
    }
  }

  /// Inputs exist, hold activations, and are written before `op`.
  bool inputs_ready(const PlanOp& op) {
    bool ok = true;
    for (int input : op.inputs) {
      if (input < 0) continue;
      if (!valid_value(input)) {
        fail("{} reads value {} which does not exist", name(op), input);
        ok = false;
      } else if (plan_.value(input).role == ValueRole::kParameter) {
        fail("{} reads parameter value {} as an input (parameters are read through PlanOp::params)", name(op),
             input);
        ok = false;
      } else if (plan_.value(input).producer >= op.id) {
        fail("{} reads value {} before op {} writes it", name(op), input, plan_.value(input).producer);
        ok = false;
      }
    }
    return ok;
  }

  void check_op(const PlanOp& op) {
    if (!inputs_ready(op)) return;
    switch (op.role) {
      case OpRole::kCompute: check_compute(op); break;
      case OpRole::kEpilogue: check_epilogue(op); break;
      case OpRole::kTransfer: check_transfer(op); break;
      case OpRole::kCollective: check_collective(op); break;
      case OpRole::kUpdate: check_update(op); break;
    }
  }

  /// A weight-gradient op writes one gradient value of its slice's weights,
  /// reading the previous micro-batch's sum (if any) as an extra last input.
  void check_gradient_output(const PlanOp& op, size_t slots) {
    if (op.outputs.size() != 1) {
      fail("{} writes {} values, a weight gradient op one", name(op), op.outputs.size());
      return;
    }
    const Value& out = plan_.value(op.outputs[0]);
    const auto [forward, slice] = weight_slice_of(graph_, op.node, op.slice);
    // A recurrent layer's steps share one weight set, held by one parameter value.
    if (out.role != ValueRole::kGradient || out.device != op.device ||
        graph_.node(out.node).param_key != graph_.node(forward).param_key ||
        out.channels != slice.out || out.reduce != slice.reduce || !out.batch.contains(op.slice.batch)) {
      fail("{} writes value {} that is not the gradient of its slice's weights", name(op), op.outputs[0]);
    }
    if (op.inputs.size() == slots + 1) {
      const Value& previous = plan_.value(op.inputs.back());
      if (previous.role != ValueRole::kGradient || previous.device != op.device || previous.node != out.node ||
          previous.channels != out.channels || previous.reduce != out.reduce) {
        fail("{} adds to value {}, which is not an earlier gradient of the same weights", name(op), op.inputs.back());
      }
    }
  }

  void check_update(const PlanOp& op) {
    if (!graph_.is_training()) fail("{} updates weights in a plan that does not train", name(op));
    if (op.inputs.size() != 1 || !op.outputs.empty() || !valid_value(op.params)) {
      fail("{} must read one gradient and update one parameter value in place", name(op));
      return;
    }
    const Value& gradient = plan_.value(op.inputs[0]);
    const Value& params = plan_.value(op.params);
    if (gradient.role != ValueRole::kGradient || params.role != ValueRole::kParameter ||
        gradient.device != op.device || params.device != op.device || gradient.node != params.node ||
        gradient.channels != params.channels || gradient.reduce != params.reduce) {
      fail("{} does not pair a gradient with its weights on device {}", name(op), op.device);
    }
    if (gradient.is_partial()) fail("{} applies a gradient of only rows {}", name(op), gradient.batch.to_string());
    const int64_t elements = value_elements(graph_, params);
    if (op.flops != graph_.training()->optimizer.update_flops(elements)) {
      fail("{} counts {} FLOPs for {} weights", name(op), op.flops, elements);
    }
  }

  /// A compute op with weights reads the parameter value of its own slice on its own device.
  void check_params(const PlanOp& op, const SliceCost& cost) {
    if (cost.param_count == 0) {
      if (op.params != -1) fail("{} reads parameters its slice does not have", name(op));
      return;
    }
    if (!valid_value(op.params) || plan_.value(op.params).role != ValueRole::kParameter) {
      fail("{} has weights but reads no parameter value", name(op));
      return;
    }
    const Value& params = plan_.value(op.params);
    const Slice weights = weight_slice_of(graph_, op.node, op.slice).second;
    if (params.device != op.device || graph_.node(params.node).param_key != graph_.node(op.node).param_key ||
        params.channels != weights.out || params.reduce != weights.reduce) {
      fail("{} reads parameter value {}, which holds another slice or lives on device {}", name(op), op.params,
           params.device);
    }
  }

  void check_compute(const PlanOp& op) {
    const OpNode& node = graph_.node(op.node);
    if (op.recomputes >= 0) {
      check_recompute(op);
      return;
    }
    const auto slots = graph_.inputs(op.node);
    const bool writes_gradient = op_def(node.kind).writes_gradient;
    if (op.inputs.size() != slots.size() && !(writes_gradient && op.inputs.size() == slots.size() + 1)) {
      fail("{} has {} inputs, its node {}", name(op), op.inputs.size(), slots.size());
      return;
    }
    for (size_t slot = 0; slot < slots.size(); ++slot) {
      const int input = op.inputs[slot];
      if (!slots[slot]) {
        if (input >= 0) fail("{} reads a value into unconnected slot {}", name(op), slot);
        continue;
      }
      if (input < 0) {
        // Only a slice that reads none of that input (part of a concat) may leave it empty.
        if (needed_input_channels(graph_, op.node, op.slice, static_cast<int>(slot)).size() != 0) {
          fail("{} leaves connected slot {} empty", name(op), slot);
        }
        continue;
      }
      const Value& value = plan_.value(input);
      if (value.node != slots[slot]->node || value.output != slots[slot]->output || value.microbatch != op.microbatch) {
        fail("{} slot {} reads the wrong tensor ({})", name(op), slot, graph_.node(value.node).name);
      }
      if (value.device != op.device) {
        fail("{} on device {} reads value {} on device {}: a cross-device edge without a transfer",
             name(op), op.device, input, value.device);
      }
      if (value.batch != op.slice.batch) fail("{} slot {} reads rows {} for its rows {}", name(op), slot, value.batch.to_string(), op.slice.batch.to_string());
      const Range need = needed_input_channels(graph_, op.node, op.slice, static_cast<int>(slot));
      if (!value.channels.contains(need)) {
        fail("{} slot {} needs channels {} but reads {}", name(op), slot, need.to_string(), value.channels.to_string());
      }
      if (value.is_partial() || value.pre_activation) fail("{} reads an unfinished sum (value {})", name(op), input);
    }
    const SliceCost cost = slice_cost(graph_, op.node, op.slice);
    if (writes_gradient) {
      check_gradient_output(op, slots.size());
      check_params(op, cost);
      boxes_[{op.node, op.microbatch}].push_back(placed_work(node, op));
      return;
    }
    if (op.outputs.size() != node.output_shapes.size()) {
      fail("{} writes {} values, its node has {} outputs", name(op), op.outputs.size(), node.output_shapes.size());
      return;
    }
    for (int output : op.outputs) {
      const Value& value = plan_.value(output);
      if (value.device != op.device || value.batch != op.slice.batch || value.channels != op.slice.out ||
          value.is_partial() != op.slice.is_partial(node) || value.node != op.node) {
        fail("{} writes value {} that does not match its slice", name(op), output);
      }
    }
    if (cost.flops != op.flops) fail("{} counts {} FLOPs, its slice has {}", name(op), op.flops, cost.flops);
    check_params(op, cost);
    boxes_[{op.node, op.microbatch}].push_back(placed_work(node, op));
  }

  void check_epilogue(const PlanOp& op) {
    if (op.inputs.size() != 1 || op.outputs.size() != 1) {
      fail("{} must read one value and write one", name(op));
      return;
    }
    const Value& in = plan_.value(op.inputs[0]);
    const Value& out = plan_.value(op.outputs[0]);
    if (!in.pre_activation) fail("{} activates a value that is not an all-reduced sum", name(op));
    if (in.device != op.device || out.device != op.device) fail("{} crosses devices", name(op));
    if (out.pre_activation || out.is_partial() || out.channels != in.channels || out.batch != in.batch) {
      fail("{} changes its value's ranges", name(op));
    }
    if (op.flops != 0) fail("{} counts FLOPs for an activation", name(op));
  }

  void check_transfer(const PlanOp& op) {
    if (op.inputs.size() != 1 || op.outputs.size() != 1) {
      fail("{} must move one value", name(op));
      return;
    }
    const Value& from = plan_.value(op.inputs[0]);
    const Value& to = plan_.value(op.outputs[0]);
    if (op.src_device == op.device) fail("{} moves a value to its own device", name(op));
    if (from.device != op.src_device || to.device != op.device) fail("{} has values on the wrong devices", name(op));
    if (from.node != to.node || from.output != to.output || from.batch != to.batch || from.channels != to.channels ||
        from.partial != to.partial || from.pre_activation != to.pre_activation) {
      fail("{} changes what it moves", name(op));
    }
    if (op.bytes_moved != from.bytes) fail("{} moves {} bytes of a {}-byte value", name(op), op.bytes_moved, from.bytes);
  }

  /// The root's tensor, unchanged, on every participant (the root first).
  void check_broadcast(const PlanOp& op) {
    const size_t n = op.participants.size();
    if (n == 0 || op.inputs.size() != 1 || op.outputs.size() != n || op.participants.front() != op.device) {
      fail("{} needs the root's input, the root first and an output per participant", name(op));
      return;
    }
    const Value& whole = plan_.value(op.inputs.front());
    if (whole.device != op.device || whole.is_partial()) fail("{} sends no final tensor from its root", name(op));
    for (size_t i = 0; i < n; ++i) {
      const Value& out = plan_.value(op.outputs[i]);
      if (out.device != op.participants[i] || out.channels != whole.channels || out.batch != whole.batch ||
          out.is_partial()) {
        fail("{} output {} is not the root's tensor on participant {}", name(op), i, op.participants[i]);
      }
    }
    const int64_t moved = static_cast<int64_t>(n - 1) * whole.bytes;
    if (op.bytes_moved != moved) fail("{} counts {} bytes moved, its copies make {}", name(op), op.bytes_moved, moved);
  }

  void check_collective(const PlanOp& op) {
    if (op.collective == CollectiveKind::kBroadcast) {
      check_broadcast(op);
      return;
    }
    const size_t n = op.participants.size();
    const bool reduce = op.collective == CollectiveKind::kAllReduce;
    // A bucketed all-reduce holds as many values (segments) on every participant, participant-major.
    if (n == 0 || op.inputs.empty() || (reduce ? op.inputs.size() % n != 0 : op.inputs.size() != n)) {
      fail("{} needs one input per participant{}", name(op), reduce ? " (a bucket: as many on each)" : "");
      return;
    }
    const size_t segments = op.inputs.size() / n;
    if (!algorithm_fits(op.collective, op.algorithm)) {
      fail("{} cannot run as {}", name(op), to_string(op.algorithm));
    }
    std::vector<int> seen;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Value& value = plan_.value(op.inputs[i]);
      const int participant = op.participants[i / segments];
      if (value.device != participant) fail("{} input {} is not on participant {}", name(op), i, participant);
      if (i % segments != 0) continue;
      if (std::find(seen.begin(), seen.end(), value.device) != seen.end()) fail("{} has device {} twice", name(op), value.device);
      seen.push_back(value.device);
    }
    const Value& first = plan_.value(op.inputs.front());
    int64_t moved = 0;
    if (op.collective == CollectiveKind::kReduceScatter) {
      // Participant i's chunk of the sum: the i-th even channel range; every participant receives the others'.
      const std::vector<Range> chunks = split_evenly(first.channels.size(), static_cast<int64_t>(n));
      for (int input : op.inputs) {
        const Value& value = plan_.value(input);
        if (!value.is_partial() || value.channels != first.channels || value.batch != first.batch) {
          fail("{} reduces values that are not matching partial sums", name(op));
        }
      }
      if (op.outputs.size() != n) {
        fail("{} must give every participant its chunk", name(op));
        return;
      }
      for (size_t i = 0; i < n; ++i) {
        const Value& out = plan_.value(op.outputs[i]);
        const Range chunk{first.channels.begin + chunks[i].begin, first.channels.begin + chunks[i].end};
        if (out.is_partial() || out.device != op.participants[i] || out.channels != chunk || out.batch != first.batch) {
          fail("{} output {} is not participant {}'s chunk of the sum", name(op), i, op.participants[i]);
        }
        moved += first.bytes - out.bytes;
      }
    } else if (reduce) {
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        const Value& value = plan_.value(op.inputs[i]);
        const Value& segment = plan_.value(op.inputs[i % segments]);
        // Replicas' gradients sum over different rows of the batch.
        const bool same_rows = value.batch == segment.batch || value.role == ValueRole::kGradient;
        if (!value.is_partial() || value.node != segment.node || value.channels != segment.channels ||
            value.reduce != segment.reduce || !same_rows || value.role != first.role) {
          fail("{} reduces values that are not matching partial sums", name(op));
        }
      }
      if (op.outputs.size() != op.inputs.size()) fail("{} must give every participant the sum", name(op));
      for (size_t k = 0; k < segments; ++k) moved += 2 * static_cast<int64_t>(n - 1) * plan_.value(op.inputs[k]).bytes;
      for (size_t i = 0; i < op.outputs.size() && i < op.inputs.size(); ++i) {
        const Value& out = plan_.value(op.outputs[i]);
        const Value& segment = plan_.value(op.inputs[i % segments]);
        const int participant = op.participants[i / segments];
        // A replica's sum of its gradients over some positions (sequence
        // parallelism) still covers only its rows of the batch.
        const bool rows_left = out.partial == PartialSum::kBatch && segment.partial == PartialSum::kPositions;
        if ((out.is_partial() && !rows_left) || out.device != participant || out.node != segment.node ||
            out.channels != segment.channels) {
          fail("{} output {} is not the sum on participant {}", name(op), i, participant);
        }
      }
    } else {
      Range all{first.channels.begin, first.channels.begin};
      for (int input : op.inputs) {
        const Value& value = plan_.value(input);
        if (value.channels.begin != all.end || value.is_partial() || value.batch != first.batch) {
          fail("{} gathers slices that are not contiguous and final", name(op));
        }
        all.end = value.channels.end;
      }
      const bool to_all = op.collective == CollectiveKind::kAllGather;
      const std::vector<int> receivers = to_all ? op.participants : std::vector<int>{op.device};
      if (op.outputs.size() != receivers.size()) {
        fail("{} writes {} values for {} receivers", name(op), op.outputs.size(), receivers.size());
        return;
      }
      for (size_t i = 0; i < receivers.size(); ++i) {
        const Value& out = plan_.value(op.outputs[i]);
        if (out.device != receivers[i] || out.channels != all || out.batch != first.batch) {
          fail("{} output {} is not the assembled tensor on device {}", name(op), i, receivers[i]);
        }
        moved += out.bytes;
        for (int input : op.inputs) {
          if (plan_.value(input).device == receivers[i]) moved -= plan_.value(input).bytes;
        }
      }
    }
    if (op.bytes_moved != moved) fail("{} counts {} bytes moved, its slices make {}", name(op), op.bytes_moved, moved);
  }

  // A re-run (recompute.hpp) is its forward op again, on its device, for the
  // same micro-batch and slice, reading the same tensors and writing new
  // values of the same ones; it counts in no tiling.
  void check_recompute(const PlanOp& op) {
    if (op.recomputes >= op.id || plan_.op(op.recomputes).role != OpRole::kCompute) {
      fail("{} re-runs op {}, which is no earlier compute op", name(op), op.recomputes);
      return;
    }
    const PlanOp& original = plan_.op(op.recomputes);
    if (original.recomputes >= 0 || graph_.node(original.node).pass != Pass::kForward) {
      fail("{} re-runs op {}, which is no forward op of its own", name(op), original.id);
    }
    if (op.node != original.node || op.microbatch != original.microbatch || op.device != original.device ||
        op.slice.batch != original.slice.batch || op.slice.out != original.slice.out ||
        op.slice.reduce != original.slice.reduce || op.params != original.params ||
        op.inputs.size() != original.inputs.size() || op.outputs.size() != original.outputs.size()) {
      fail("{} is not the op {} it re-runs", name(op), original.id);
      return;
    }
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if ((op.inputs[i] < 0) != (original.inputs[i] < 0)) fail("{} slot {} differs from op {}'s", name(op), i, original.id);
      if (op.inputs[i] < 0 || op.inputs[i] == original.inputs[i]) continue;
      const Value& mine = plan_.value(op.inputs[i]);
      const Value& theirs = plan_.value(original.inputs[i]);
      if (mine.node != theirs.node || mine.output != theirs.output || mine.batch != theirs.batch ||
          mine.channels != theirs.channels || mine.device != op.device) {
        fail("{} slot {} reads another tensor than op {}", name(op), i, original.id);
      }
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const Value& mine = plan_.value(op.outputs[i]);
      const Value& theirs = plan_.value(original.outputs[i]);
      if (mine.producer != op.id || mine.node != theirs.node || mine.output != theirs.output ||
          mine.batch != theirs.batch || mine.channels != theirs.channels || mine.device != op.device) {
        fail("{} output {} is not a copy of op {}'s", name(op), i, original.id);
      }
    }
  }

  void check_tiling() {
    int64_t flops = 0;
    std::map<std::pair<NodeId, int>, std::vector<Box>> counted;
    for (const PlanOp& op : plan_.ops) {
      if (op.role != OpRole::kCompute || op.recomputes >= 0) continue;
      auto& seen = counted[{op.node, op.microbatch}];
      Box box = work_of(graph_.node(op.node), op.slice);
      box.device = op.device;
      if (replica_of_counted(seen, box)) continue;
      seen.push_back(box);
      flops += op.flops;
    }
    if (flops != graph_.total_flops()) fail("compute slices count {} FLOPs, the network {}", flops, graph_.total_flops());
    std::map<NodeId, std::vector<Box>> per_node;
    for (auto& [key, boxes] : boxes_) {
      auto& all = per_node[key.first];
      for (const Box& box : boxes) {
        if (!replica_of_counted(all, box)) all.push_back(box);
      }
    }
    for (NodeId id = 0; id < graph_.num_nodes(); ++id) {
      const OpNode& node = graph_.node(id);
      if (node.kind == OpKind::kInput) continue;
      const auto& boxes = per_node[id];
      const Box full = work_of(node, full_slice(node, {0, graph_.batch()}));
      Volume volume = 0;
      // Feature-cut slices tile the features of one block: [0, the last end).
      int64_t feature_block = 0;
      for (const Box& box : boxes) feature_block = std::max(feature_block, box.features.range.end);
      for (size_t i = 0; i < boxes.size(); ++i) {
        volume += boxes[i].features.whole() ? boxes[i].volume() * std::max<int64_t>(feature_block, 1)
                                            : boxes[i].volume() * boxes[i].features.range.size();
        if (!full.rows.contains(boxes[i].rows) || !full.out.contains(boxes[i].out) || !full.reduce.contains(boxes[i].reduce)) {
          fail("a slice of {} lies outside the op", node.name);
        }
        for (size_t j = 0; j < i && boxes.size() <= 256; ++j) {
          if (overlaps(boxes[i], boxes[j])) fail("two slices of {} overlap", node.name);
        }
      }
      if (volume != full.volume() * std::max<int64_t>(feature_block, 1)) {
        fail("the slices of {} cover {} of its {} elements x reductions", node.name, static_cast<double>(volume),
             static_cast<double>(full.volume()));
      }
    }
  }

  void check_outputs() {
    const TensorRef out = graph_.output();
    const OpNode& node = graph_.node(out.node);
    const Shape& shape = node.output_shapes.at(static_cast<size_t>(out.output));
    const int64_t channels = shape.at(0);
    const int64_t feature_count = shape.size() < 2 ? 1 : shape.back();
    std::vector<Box> boxes;
    Volume volume = 0;
    for (int id : plan_.outputs) {
      if (!valid_value(id)) {
        fail("output value {} does not exist", id);
        continue;
      }
      const Value& value = plan_.value(id);
      if (value.node != out.node || value.output != out.output || value.is_partial() || value.pre_activation) {
        fail("output value {} is not the finished network output", id);
      }
      // A vocabulary shard (tensor's output layer) holds part of the features.
      const Box box{value.batch, value.channels, {0, 1}, value.features, -1};
      for (const Box& other : boxes) {
        if (overlaps(box, other)) fail("output values overlap");
      }
      boxes.push_back(box);
      volume += box.volume() * value.features.count(feature_count);
    }
    if (volume != static_cast<Volume>(graph_.batch()) * channels * feature_count) {
      fail("the outputs cover {} of {} rows x channels x features", static_cast<double>(volume),
           graph_.batch() * channels * feature_count);
    }
  }

  void check_schedule() {
    if (plan_.schedule.size() != static_cast<size_t>(plan_.devices)) {
      fail("the schedule lists {} devices, the plan has {}", plan_.schedule.size(), plan_.devices);
      return;
    }
    // The schedule is authoritative: any order of each device's compute ops
    // that the data flow allows (plan_walk.hpp's rules, which every runner obeys).
    try {
      walk_plan(plan_);
    } catch (const std::logic_error& e) {
      fail("{}", e.what());
    }
    if (plan_.memory.size() != static_cast<size_t>(plan_.devices)) fail("memory is given for {} devices", plan_.memory.size());
  }

  const Plan& plan_;
  const Graph& graph_;
  std::vector<int> writes_;
  std::map<std::pair<NodeId, int>, std::vector<Box>> boxes_;
  std::vector<std::string> problems_;
};

}  // namespace

namespace {

/// A plan holding its replicas once: the shape of its replica set.
std::vector<std::string> replica_set_problems(const Plan& plan) {
  std::vector<std::string> problems;
  const ReplicaSet& set = *plan.replicas;
  const auto fail = [&](std::string text) { problems.push_back(std::move(text)); };
  if (set.count < 2 || set.devices_each < 1 || plan.devices != set.count * set.devices_each) {
    fail(fmt::format("{} replicas of {} devices each on a plan of {} devices", set.count, set.devices_each, plan.devices));
  }
  if (set.rows.size() != static_cast<size_t>(set.count)) fail("the replica set's rows are not one range per replica");
  int64_t row = 0;
  for (const Range& rows : set.rows) {
    if (rows.begin != row || rows.size() < 1) fail("the replicas' rows do not tile the batch in order");
    row = rows.end;
  }
  if (row != plan.graph->batch()) fail(fmt::format("the replicas' rows cover {} of {} rows", row, plan.graph->batch()));
  if (set.short_from < set.count && (set.short_replica == nullptr || set.short_replica->ops.size() != plan.ops.size() ||
                                     set.short_replica->values.size() != plan.values.size())) {
    fail("the short replicas' plan is not shaped as replica 0's");
  }
  if (plan.schedule.size() != static_cast<size_t>(set.devices_each) || plan.memory.size() != plan.schedule.size()) {
    fail("a plan holding its replicas once schedules replica 0's devices only");
  }
  const auto ascending_from_zero = [](const std::vector<int>& runs, size_t size) {
    if (size == 0) return runs.empty();
    if (runs.empty() || runs.front() != 0 || runs.back() >= static_cast<int>(size)) return false;
    return std::adjacent_find(runs.begin(), runs.end(), [](int a, int b) { return a >= b; }) == runs.end();
  };
  if (!ascending_from_zero(set.op_runs, plan.ops.size()) || !ascending_from_zero(set.value_runs, plan.values.size())) {
    fail("the replica runs do not start at 0 and rise within the plan");
  }
  for (const PlanOp& op : plan.ops) {
    if (!op.spans_replicas) continue;
    if (op.role != OpRole::kCollective || op.collective != CollectiveKind::kAllReduce) {
      fail(fmt::format("op {} spans the replicas but is no all-reduce", op.id));
    }
    if (!std::binary_search(set.op_runs.begin(), set.op_runs.end(), op.id) ||
        (op.id + 1 < static_cast<int>(plan.ops.size()) &&
         !std::binary_search(set.op_runs.begin(), set.op_runs.end(), op.id + 1))) {
      fail(fmt::format("spanning op {} is not a run of its own", op.id));
    }
  }
  return problems;
}

}  // namespace

std::vector<std::string> plan_problems(const Plan& plan) {
  if (!plan.replicas) return Checker(plan).run();
  std::vector<std::string> problems = replica_set_problems(plan);
  if (!problems.empty()) return problems;
  // Every invariant of the whole plan, where it is small enough to write
  // out at run time; past that, the shape above (the whole plan of a
  // partitioner's replica held once is checked at small sizes in tests).
  if (expanded_op_count(plan) <= kMaxCheckedExpandedOps) return Checker(expand_replicas(plan)).run();
  return problems;
}

void check(const Plan& plan) {
  const auto problems = plan_problems(plan);
  if (problems.empty()) return;
  std::string message = fmt::format("the {} plan breaks {} invariant(s):", plan.strategy, problems.size());
  for (size_t i = 0; i < problems.size() && i < 10; ++i) message += "\n  - " + problems[i];
  if (problems.size() > 10) message += fmt::format("\n  ... and {} more", problems.size() - 10);
  throw std::logic_error(message);
}

}  // namespace splitscope

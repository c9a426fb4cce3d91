#pragma once
/// \file
/// PlanBuilder: the data movement every strategy shares. A strategy only says
/// where each slice of each op runs (place()); the builder then, in two passes,
///   1. looks ahead at every slice's inputs to learn which tensors several
///      devices will need whole (those get an all-gather, the others a concat
///      of just the slices needed), and
///   2. walks the placements in order, giving each slice its inputs on its own
///      device: a value already there, a transfer, an all-gather, a concat, or
///      an all-reduce of partial sums followed by the activation (epilogue),
/// and finally sets the outputs, each device's schedule and its memory.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/keyed_lists.hpp"
#include "plan/plan.hpp"

namespace splitscope {

class PlanBuilder {
 public:
  PlanBuilder(std::shared_ptr<const Graph> graph, std::string strategy, StrategyTraits traits, int devices,
              int microbatches);

  /// Runs `slice` of `node` for micro-batch `microbatch` on `device`. Calls must
  /// be in dependency order, and each device's calls in the order it should
  /// run them (the order becomes its schedule).
  void place(NodeId node, int microbatch, const Slice& slice, int device);

  /// A sentence for Plan::notes (e.g. why an op was not split).
  void note(std::string text);

  /// Training pipelines: each device (stage) runs its micro-batches' forward
  /// and backward ops in the order of `schedule` (pipeline_schedule.hpp)
  /// rather than in placement order. A stage is `devices_per_stage`
  /// consecutive devices (a hybrid's tensor group), which all run its order.
  void set_pipeline_schedule(PipelineSchedule schedule, int devices_per_stage = 1);

  /// Training: replicas of a weight slice all-reduce their gradients in
  /// buckets of `bytes` (gradient_all_reduce.hpp); 0 (the default): one
  /// all-reduce per weight slice.
  void set_gradient_buckets(int64_t bytes);

  /// Sequence parallelism: partial sums that each of their holders reads a
  /// different share of the channels of (the positions of a sequence) are
  /// reduce-scattered (each holder gets the sum of its share, the i-th of
  /// even channel ranges) rather than all-reduced. Off by default.
  void reduce_scatter_partial_sums() { scatter_sums_ = true; }
  /// Data parallelism held once (Plan::replicas): the placements are one
  /// replica's, on its own devices, of `count` alike replicas; a gradient
  /// over only its rows is all-reduced across all of them by a collective
  /// that spans them (PlanOp::spans_replicas). The plan built records the
  /// runs expand_replicas() writes per replica (one per placement, then one
  /// per op); the caller sets ReplicaSet::rows and the whole plan's devices.
  void hold_replicas(int count);

  /// Wires the data movement and returns the finished plan (not yet checked).
  Plan build();

 private:
  struct Placement {
    NodeId node;
    int microbatch;
    Slice slice;
    int device;
  };
  /// One tensor of one micro-batch: (node, output, micro-batch), numbered densely from 0.
  using TensorKey = size_t;

  TensorKey key(NodeId node, int output, int microbatch) const;
  /// Weight set `param_key` on `device`, numbered densely from 0.
  size_t weights_key(int param_key, int device) const;
  void look_ahead();
  void wire(const Placement& placement);
  int obtain(NodeId node, int output, int microbatch, Range batch, Range channels, int device,
             const FeatureCut& features = {});
  int find_local(TensorKey tensor, Range batch, Range channels, int device, const FeatureCut& features = {}) const;
  int add_value(int device, NodeId node, int output, int microbatch, Range batch, Range channels,
                PartialSum partial, bool pre_activation, int producer, const FeatureCut& features = {});
  int add_op(PlanOp&& op);
  int parameter(int device, NodeId node, const Slice& slice);
  int transfer(int value, int device);
  void all_reduce(const std::vector<int>& partials);
  /// True when it reduce-scattered `partials` (reduce_scatter_partial_sums()
  /// is on and `device`, one of their holders, asks for its even share `channels`).
  bool reduce_scatter(const std::vector<int>& partials, Range channels, int device);
  int epilogue(int value);
  int gradient(PlanOp& op, const Placement& placement);
  void add_updates();
  void update(int gradient);
  void order_schedules();
  int gather(const std::vector<int>& slices, int device, bool to_all);
  void set_outputs();
  void start_run();
  void finish_runs();
  static void mark_run(std::vector<int>& runs, size_t at);

  Plan plan_;
  size_t outputs_per_node_ = 1;  ///< the most outputs any node has, so tensor keys never collide
  int64_t bucket_bytes_ = 0;
  int replicas_ = 1;  ///< hold_replicas()
  int devices_per_stage_ = 1;
  bool scatter_sums_ = false;
  std::vector<Placement> placements_;
  /// Each node's input slots (Graph::inputs() builds a fresh vector per call;
  /// the builder asks once per slice, twice).
  std::vector<std::vector<std::optional<TensorRef>>> inputs_;
  KeyedLists values_of_;   ///< by tensor key: every value of the tensor
  SparseKeyedLists local_values_;  ///< by local_key(): the tensor's values on one device
  size_t local_key(TensorKey tensor, int device) const {
    return tensor * static_cast<size_t>(plan_.devices) + static_cast<size_t>(device);
  }
  KeyedLists primary_of_;  ///< by tensor key: the values written by compute slices
  /// Which devices need a tensor whole; obtain() only asks whether several do.
  struct WholeDemand {
    int device = -1;       ///< the first device that needs it, -1 for none
    bool several = false;  ///< another device needs it too
  };
  std::vector<WholeDemand> whole_demand_;  ///< by tensor key
  /// Parameter values by weights_key(); one per distinct (out, reduce) range pair.
  KeyedLists parameters_;
  /// The latest gradient value of each parameter value's weights, by the parameter value.
  std::map<int, int> gradient_of_;
};

}  // namespace splitscope

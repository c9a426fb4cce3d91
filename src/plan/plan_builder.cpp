#include "plan/plan_builder.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "plan/collective_schedule.hpp"
#include "plan/gradient_all_reduce.hpp"
#include "plan/pipeline_schedule.hpp"
#include "plan/plan_limits.hpp"
#include "plan/plan_memory.hpp"
#include "util/check.hpp"
#include "util/huge_pages.hpp"

namespace splitscope {
namespace {

bool contains(const std::vector<int>& list, int item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

/// One more than the highest OpNode::param_key (weight sets are numbered from 0).
int weight_sets(const Graph& graph) {
  int sets = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) sets = std::max(sets, graph.node(id).param_key + 1);
  return sets;
}

}  // namespace

PlanBuilder::PlanBuilder(std::shared_ptr<const Graph> graph, std::string strategy, StrategyTraits traits,
                         int devices, int microbatches) {
  SPLITSCOPE_CHECK(graph != nullptr && devices > 0 && microbatches > 0, "bad plan parameters");
  plan_.strategy = std::move(strategy);
  plan_.traits = traits;
  plan_.devices = devices;
  plan_.microbatches = microbatches;
  plan_.graph = std::move(graph);
  const Graph& built = *plan_.graph;
  inputs_.reserve(built.num_nodes());
  for (NodeId id = 0; id < built.num_nodes(); ++id) {
    outputs_per_node_ = std::max(outputs_per_node_, built.node(id).output_shapes.size());
    inputs_.push_back(built.inputs(id));
  }
  const size_t tensors = built.num_nodes() * outputs_per_node_ * static_cast<size_t>(microbatches);
  values_of_ = KeyedLists(tensors);
  primary_of_ = KeyedLists(tensors);
  whole_demand_.resize(tensors);
  parameters_ = KeyedLists(static_cast<size_t>(weight_sets(built)) * static_cast<size_t>(devices));
}

void PlanBuilder::place(NodeId node, int microbatch, const Slice& slice, int device) {
  SPLITSCOPE_CHECK(device >= 0 && device < plan_.devices, "placement on an unknown device");
  SPLITSCOPE_CHECK(microbatch >= 0 && microbatch < plan_.microbatches, "placement of an unknown micro-batch");
  SPLITSCOPE_CHECK(plan_.graph->node(node).kind != OpKind::kInput, "inputs are provided, not placed");
  check_plan_ops(plan_, static_cast<int64_t>(placements_.size()) + 1);  // each placement is an op at least
  placements_.push_back({node, microbatch, slice, device});
}

void PlanBuilder::note(std::string text) { plan_.notes.push_back(std::move(text)); }

void PlanBuilder::set_pipeline_schedule(PipelineSchedule schedule, int devices_per_stage) {
  SPLITSCOPE_CHECK(devices_per_stage > 0 && plan_.devices % devices_per_stage == 0, "stages of unequal device groups");
  plan_.pipeline_schedule = schedule;
  devices_per_stage_ = devices_per_stage;
}

void PlanBuilder::set_gradient_buckets(int64_t bytes) { bucket_bytes_ = bytes; }

void PlanBuilder::hold_replicas(int count) {
  SPLITSCOPE_CHECK(count >= 1, "no replicas");
  replicas_ = count;
  if (count == 1) return;
  plan_.replicas = ReplicaSet{};
  plan_.replicas->count = count;
  plan_.replicas->devices_each = plan_.devices;
  plan_.replicas->short_from = count;
}

// A run (ReplicaSet::op_runs, value_runs) starting at `at`, unless one does.
void PlanBuilder::mark_run(std::vector<int>& runs, size_t at) {
  if (runs.empty() || runs.back() != static_cast<int>(at)) runs.push_back(static_cast<int>(at));
}

// A run of ops and of values that the whole plan writes once per replica
// starts here (a placement's, an update's).
void PlanBuilder::start_run() {
  if (!plan_.replicas) return;
  mark_run(plan_.replicas->op_runs, plan_.ops.size());
  mark_run(plan_.replicas->value_runs, plan_.values.size());
}

// Runs that the last marks left empty are none.
void PlanBuilder::finish_runs() {
  if (!plan_.replicas) return;
  ReplicaSet& set = *plan_.replicas;
  while (!set.op_runs.empty() && set.op_runs.back() >= static_cast<int>(plan_.ops.size())) set.op_runs.pop_back();
  while (!set.value_runs.empty() && set.value_runs.back() >= static_cast<int>(plan_.values.size())) {
    set.value_runs.pop_back();
  }
}

PlanBuilder::TensorKey PlanBuilder::key(NodeId node, int output, int microbatch) const {
  return (node * outputs_per_node_ + static_cast<size_t>(output)) * static_cast<size_t>(plan_.microbatches) +
         static_cast<size_t>(microbatch);
}

size_t PlanBuilder::weights_key(int param_key, int device) const {
  SPLITSCOPE_CHECK(param_key >= 0, "weights read by an op without a weight set");
  return static_cast<size_t>(param_key) * static_cast<size_t>(plan_.devices) + static_cast<size_t>(device);
}

Plan PlanBuilder::build() {
  // Every slice is an op, and the moves add up to about one more per slice
  // in a pipeline: room for twice as many spares most moves of a growing
  // list, and capacity never written costs nothing. A large
  // plan's lists go on huge pages: a simulation reads them through, and on
  // a virtual machine a TLB miss every 4 KiB made reading a million-op
  // plan's ops up to 5x slower, from one run to the next.
  const size_t ops_room = 2 * placements_.size();
  reserve_on_huge_pages(plan_.ops, ops_room);
  reserve_on_huge_pages(plan_.values, plan_.values.size() + 2 * ops_room);
  const PlanOp* const ops_reserved = plan_.ops.data();
  const Value* const values_reserved = plan_.values.data();
  look_ahead();
  for (const Placement& placement : placements_) {
    start_run();
    wire(placement);
  }
  start_run();
  set_outputs();
  if (plan_.graph->is_training() && !plan_.traits.parameter_server) add_updates();
  finish_runs();
  plan_.schedule.assign(static_cast<size_t>(plan_.devices), {});
  for (const PlanOp& op : plan_.ops) {
    if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue || op.role == OpRole::kUpdate) {
      plan_.schedule[static_cast<size_t>(op.device)].push_back(op.id);
    }
  }
  order_schedules();
  if (plan_.ops.data() != ops_reserved) move_onto_huge_pages(plan_.ops);
  if (plan_.values.data() != values_reserved) move_onto_huge_pages(plan_.values);
  plan_.memory = compute_memory(plan_);
  return std::move(plan_);
}

// Pass 1: which tensors will several devices need whole? Those are worth an
// all-gather; a tensor only one device needs whole is concatenated there.
void PlanBuilder::look_ahead() {
  const Graph& graph = *plan_.graph;
  KeyedLists slices_of(whole_demand_.size());  // placement indices by key(node, 0, micro-batch)
  for (size_t i = 0; i < placements_.size(); ++i) {
    slices_of.append(key(placements_[i].node, 0, placements_[i].microbatch), static_cast<int>(i));
  }
  for (const Placement& placement : placements_) {
    const auto& inputs = inputs_[placement.node];
    for (size_t slot = 0; slot < inputs.size(); ++slot) {
      if (!inputs[slot] || graph.node(inputs[slot]->node).kind == OpKind::kInput) continue;
      const TensorRef source = *inputs[slot];
      const Range need =
          needed_input_channels(graph, placement.node, placement.slice, static_cast<int>(slot));
      // A head-wise slice reads what its own device wrote: nothing to gather.
      if (!needed_input_features(graph, placement.node, placement.slice, static_cast<int>(slot)).whole()) continue;
      const Range whole{0, graph.node(source.node).output_shapes.at(static_cast<size_t>(source.output)).at(0)};
      if (need != whole) continue;
      bool one_slice_covers = false;
      for (int index : slices_of[key(source.node, 0, placement.microbatch)]) {
        const Placement& producer = placements_[static_cast<size_t>(index)];
        const OpNode& producer_node = graph.node(producer.node);
        if (producer.slice.is_partial(producer_node)) {
          one_slice_covers = true;  // partial sums are all-reduced, never gathered
          break;
        }
        if (producer.slice.out.contains(need)) {
          one_slice_covers = true;  // one is enough: data parallelism's replicas each cover it
          break;
        }
      }
      if (one_slice_covers) continue;
      WholeDemand& demand = whole_demand_[key(source.node, source.output, placement.microbatch)];
      if (demand.device < 0) {
        demand.device = placement.device;
      } else if (demand.device != placement.device) {
        demand.several = true;
      }
    }
  }
}

// Pass 2, for one slice: its inputs on its device, then the slice itself.
void PlanBuilder::wire(const Placement& placement) {
  const Graph& graph = *plan_.graph;
  const OpNode& node = graph.node(placement.node);
  PlanOp op;
  op.role = OpRole::kCompute;
  op.node = placement.node;
  op.microbatch = placement.microbatch;
  op.device = placement.device;
  op.slice = placement.slice;
  const auto& inputs = inputs_[placement.node];
  op.inputs.reserve(inputs.size());
  for (size_t slot = 0; slot < inputs.size(); ++slot) {
    if (!inputs[slot]) {
      op.inputs.push_back(-1);
      continue;
    }
    const Range need = needed_input_channels(graph, placement.node, placement.slice, static_cast<int>(slot));
    if (need.size() == 0) {
      op.inputs.push_back(-1);  // this slice reads nothing of that input (part of a concat)
      continue;
    }
    op.inputs.push_back(obtain(inputs[slot]->node, inputs[slot]->output, placement.microbatch,
                               placement.slice.batch, need, placement.device,
                               needed_input_features(graph, placement.node, placement.slice, static_cast<int>(slot))));
  }
  const SliceCost cost = slice_cost(graph, placement.node, placement.slice);
  op.flops = cost.flops;
  op.bytes_read = cost.bytes_read;
  op.bytes_written = cost.bytes_written;
  op.param_count = cost.param_count;
  if (cost.param_count > 0) op.params = parameter(placement.device, placement.node, placement.slice);
  op.id = static_cast<int>(plan_.ops.size());
  if (op_def(node.kind).writes_gradient) {
    op.outputs.push_back(gradient(op, placement));
    add_op(std::move(op));
    return;
  }
  const PartialSum partial = placement.slice.is_partial(node) ? PartialSum::kReduction : PartialSum::kNone;
  const FeatureCut features = output_features(node, placement.slice);
  for (size_t output = 0; output < node.output_shapes.size(); ++output) {
    const int value = add_value(placement.device, placement.node, static_cast<int>(output),
                                placement.microbatch, placement.slice.batch, placement.slice.out,
                                partial, false, op.id, features);
    op.outputs.push_back(value);
    primary_of_.append(key(placement.node, static_cast<int>(output), placement.microbatch), value);
  }
  add_op(std::move(op));
}

int PlanBuilder::find_local(TensorKey tensor, Range batch, Range channels, int device,
                            const FeatureCut& features) const {
  // The tensor's values on `device` alone, in the order values_of_ lists
  // them: a tensor of N replicas has N values, and every replica asks.
  for (int id : local_values_[local_key(tensor, device)]) {
    const Value& value = plan_.value(id);
    if (value.device == device && !value.is_partial() && !value.pre_activation && value.batch == batch &&
        value.channels.contains(channels) && value.features == features) {
      return id;
    }
  }
  return -1;
}

// The value of (node, output, micro-batch) over `batch` x `channels` on
// `device`, making whatever moves data to get it there.
int PlanBuilder::obtain(NodeId node, int output, int microbatch, Range batch, Range channels,
                        int device, const FeatureCut& features) {
  const Graph& graph = *plan_.graph;
  const TensorKey tensor = key(node, output, microbatch);
  if (const int local = find_local(tensor, batch, channels, device, features); local >= 0) return local;
  if (!features.whole()) {
    // The head-wise split keeps a cut of the features on the device that
    // wrote it; a hybrid's next stage takes it over from there, the i-th
    // device of one tensor group's cut to the i-th of the next.
    for (int id : values_of_[tensor]) {
      const Value& value = plan_.value(id);
      if (!value.is_partial() && !value.pre_activation && value.batch == batch && value.channels.contains(channels) &&
          value.features == features) {
        return transfer(id, device);
      }
    }
    SPLITSCOPE_CHECK(false, graph.node(node).name + ":" + features.to_string() + " is on no device");
  }

  const Range whole{0, graph.node(node).output_shapes.at(static_cast<size_t>(output)).at(0)};
  if (graph.node(node).kind == OpKind::kInput) {
    // Network inputs are data each device loads itself, not traffic.
    const int value = add_value(device, node, output, microbatch, batch, whole, PartialSum::kNone, false, -1);
    plan_.inputs.push_back(value);
    return value;
  }

  // Partial sums not yet all-reduced, and all-reduced sums awaiting their
  // activation (the first, and the one on `device`).
  const KeyedLists::List values = values_of_[tensor];
  bool partial = false;
  bool summed = false;
  int first_reduced = -1;
  int reduced_here = -1;
  for (int id : values) {
    const Value& value = plan_.value(id);
    if (value.batch != batch || !value.features.whole()) continue;
    partial = partial || value.is_partial();
    summed = summed || !value.is_partial();
    if (value.pre_activation) {
      if (first_reduced < 0) first_reduced = id;
      if (reduced_here < 0 && value.device == device) reduced_here = id;
    }
  }
  if (partial && !summed) {
    std::vector<int> partials;
    for (int id : values) {
      if (plan_.value(id).batch == batch && plan_.value(id).is_partial()) partials.push_back(id);
    }
    if (!reduce_scatter(partials, channels, device)) all_reduce(partials);
    return obtain(node, output, microbatch, batch, channels, device);
  }
  if (reduced_here >= 0) return epilogue(reduced_here);
  if (first_reduced >= 0) {
    const int holder = plan_.value(first_reduced).device;
    return transfer(obtain(node, output, microbatch, batch, channels, holder), device);
  }

  // One value elsewhere has it all: copy it over (slices written by compute first).
  for (int id : values) {
    const Value& value = plan_.value(id);
    if (!value.is_partial() && !value.pre_activation && value.batch == batch && value.channels.contains(channels) &&
        value.features.whole()) {
      return transfer(id, device);
    }
  }

  // Several slices hold it: all-gather when several devices need it whole,
  // else concatenate just the slices needed on this device.
  std::vector<int> slices;
  for (int id : primary_of_[tensor]) {
    const Value& value = plan_.value(id);
    if (value.batch == batch && value.channels.begin < channels.end && channels.begin < value.channels.end &&
        value.features.whole() && !value.is_partial()) {
      slices.push_back(id);
    }
  }
  std::sort(slices.begin(), slices.end(), [&](int a, int b) {
    return plan_.value(a).channels.begin < plan_.value(b).channels.begin;
  });
  SPLITSCOPE_CHECK(!slices.empty(), "no slices of " + graph.node(node).name + " to assemble");
  const bool to_all = channels == whole && whole_demand_[tensor].several;
  if (to_all) {
    const int gathered = gather(slices, device, true);
    if (gathered >= 0) return gathered;
    return obtain(node, output, microbatch, batch, channels, device);  // now a transfer
  }
  return gather(slices, device, false);
}

int PlanBuilder::add_value(int device, NodeId node, int output, int microbatch, Range batch,
                           Range channels, PartialSum partial, bool pre_activation, int producer,
                           const FeatureCut& features) {
  SPLITSCOPE_CHECK(device >= 0 && device < plan_.devices,
                   "a value on device " + std::to_string(device) + " of " + std::to_string(plan_.devices));
  Value value;
  value.id = static_cast<int>(plan_.values.size());
  value.device = device;
  value.node = node;
  value.output = output;
  value.microbatch = microbatch;
  value.batch = batch;
  value.channels = channels;
  value.features = features;
  value.partial = partial;
  value.pre_activation = pre_activation;
  value.producer = producer;
  value.bytes = value_bytes(*plan_.graph, value);
  plan_.values.push_back(value);
  values_of_.append(key(node, output, microbatch), value.id);
  local_values_.append(local_key(key(node, output, microbatch), device), value.id);
  return value.id;
}

// The weights `slice` of `node` reads on `device`, one value per distinct
// slice of a weight set, shared by every op reading it (backward ops read
// their forward op's).
int PlanBuilder::parameter(int device, NodeId reader, const Slice& reader_slice) {
  const auto [node, slice] = weight_slice_of(*plan_.graph, reader, reader_slice);
  const int param_key = plan_.graph->node(node).param_key;
  for (int id : parameters_[weights_key(param_key, device)]) {
    const Value& weights = plan_.value(id);
    if (weights.channels == slice.out && weights.reduce == slice.reduce && weights.features == slice.features) return id;
  }
  const int id = add_parameter_value(plan_, device, node, slice);
  parameters_.append(weights_key(param_key, device), id);
  return id;
}

int PlanBuilder::add_op(PlanOp&& op) {
  op.id = static_cast<int>(plan_.ops.size());
  check_plan_ops(plan_, op.id + int64_t{1});
  plan_.ops.push_back(std::move(op));
  return plan_.ops.back().id;
}

int PlanBuilder::transfer(int source, int device) {
  const Value from = plan_.value(source);
  SPLITSCOPE_CHECK(from.device != device, "a transfer to the device that has the value");
  PlanOp op;
  op.role = OpRole::kTransfer;
  op.node = from.node;
  op.microbatch = from.microbatch;
  op.device = device;
  op.src_device = from.device;
  op.inputs = {source};
  op.id = static_cast<int>(plan_.ops.size());
  const int copy = add_value(device, from.node, from.output, from.microbatch, from.batch, from.channels,
                             from.partial, from.pre_activation, op.id, from.features);
  op.outputs = {copy};
  op.bytes_moved = from.bytes;
  op.payload_bytes = from.bytes;
  add_op(std::move(op));
  return copy;
}

// Megatron's all-reduce: every holder of a partial sum gets the total; if the
// layer has an activation, it is applied afterwards (epilogue) where needed.
void PlanBuilder::all_reduce(const std::vector<int>& partials) {
  const Value first = plan_.value(partials.front());
  const Activation activation = plan_.graph->node(first.node).attrs.activation;
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = CollectiveKind::kAllReduce;
  op.algorithm = default_algorithm(op.collective);
  op.node = first.node;
  op.microbatch = first.microbatch;
  op.device = -1;
  op.inputs = partials;
  op.id = static_cast<int>(plan_.ops.size());
  for (int id : partials) {
    const Value& partial = plan_.value(id);
    SPLITSCOPE_CHECK(partial.channels == first.channels, "all-reduce over different ranges");
    SPLITSCOPE_CHECK(!contains(op.participants, partial.device), "two partial sums on one device");
    op.participants.push_back(partial.device);
  }
  for (int device : op.participants) {
    op.outputs.push_back(add_value(device, first.node, first.output, first.microbatch, first.batch,
                                   first.channels, PartialSum::kNone, activation != Activation::kNone, op.id,
                                   first.features));
  }
  const int64_t n = static_cast<int64_t>(partials.size());
  op.payload_bytes = first.bytes;
  op.bytes_moved = 2 * (n - 1) * first.bytes;  // 2(N-1)/N·B per device, N devices
  add_op(std::move(op));
}

// Sequence parallelism's reduce-scatter: each holder of a partial sum gets
// the sum of its own share of the channels (the positions it runs).
bool PlanBuilder::reduce_scatter(const std::vector<int>& partials, Range channels, int device) {
  if (!scatter_sums_ || partials.size() < 2) return false;
  const Value first = plan_.value(partials.front());
  if (channels == first.channels) return false;
  const int64_t n = static_cast<int64_t>(partials.size());
  const std::vector<Range> chunks = split_evenly(first.channels.size(), n);
  const auto chunk = [&](size_t i) {
    return Range{first.channels.begin + chunks[i].begin, first.channels.begin + chunks[i].end};
  };
  bool asked = false;
  for (size_t i = 0; i < partials.size(); ++i) {
    const Value& partial = plan_.value(partials[i]);
    if (partial.channels != first.channels || !partial.features.whole()) return false;
    asked = asked || (partial.device == device && chunk(i) == channels);
  }
  if (!asked) return false;
  const Activation activation = plan_.graph->node(first.node).attrs.activation;
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = CollectiveKind::kReduceScatter;
  op.algorithm = default_algorithm(op.collective);
  op.node = first.node;
  op.microbatch = first.microbatch;
  op.device = -1;
  op.inputs = partials;
  op.id = static_cast<int>(plan_.ops.size());
  for (size_t i = 0; i < partials.size(); ++i) {
    const Value& partial = plan_.value(partials[i]);
    SPLITSCOPE_CHECK(!contains(op.participants, partial.device), "two partial sums on one device");
    op.participants.push_back(partial.device);
    const int sum = add_value(partial.device, first.node, first.output, first.microbatch, first.batch, chunk(i),
                              PartialSum::kNone, activation != Activation::kNone, op.id);
    op.outputs.push_back(sum);
    primary_of_.append(key(first.node, first.output, first.microbatch), sum);
  }
  op.payload_bytes = first.bytes;
  int64_t moved = 0;  // each participant receives every chunk but its own: (N-1)/N·B
  for (int sum : op.outputs) moved += first.bytes - plan_.value(sum).bytes;
  op.bytes_moved = moved;
  add_op(std::move(op));
  return true;
}

int PlanBuilder::epilogue(int value) {
  const Value sum = plan_.value(value);
  PlanOp op;
  op.role = OpRole::kEpilogue;
  op.node = sum.node;
  op.microbatch = sum.microbatch;
  op.device = sum.device;
  op.slice = Slice{sum.batch, sum.channels, {0, plan_.graph->node(sum.node).input_shapes.at(0).at(0)}, {}};
  op.inputs = {value};
  op.bytes_read = sum.bytes;
  op.bytes_written = sum.bytes;
  op.id = static_cast<int>(plan_.ops.size());
  const int result = add_value(sum.device, sum.node, sum.output, sum.microbatch, sum.batch,
                               sum.channels, PartialSum::kNone, false, op.id);
  op.outputs = {result};
  add_op(std::move(op));
  return result;
}

// All-gather (to_all) or concat onto `device` of channel slices sorted by
// their first channel. Returns the value on `device`, or -1 when `device`
// took no part in an all-gather.
int PlanBuilder::gather(const std::vector<int>& slices, int device, bool to_all) {
  const Value first = plan_.value(slices.front());
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = to_all ? CollectiveKind::kAllGather : CollectiveKind::kConcat;
  op.algorithm = default_algorithm(op.collective);
  op.node = first.node;
  op.microbatch = first.microbatch;
  op.device = to_all ? -1 : device;
  op.inputs = slices;
  Range channels{first.channels.begin, first.channels.begin};
  for (int id : slices) {
    const Value& slice = plan_.value(id);
    SPLITSCOPE_CHECK(slice.channels.begin == channels.end, "slices to gather are not contiguous");
    SPLITSCOPE_CHECK(!contains(op.participants, slice.device), "two slices to gather on one device");
    channels.end = slice.channels.end;
    op.participants.push_back(slice.device);
  }
  op.id = static_cast<int>(plan_.ops.size());
  const std::vector<int> receivers = to_all ? op.participants : std::vector<int>{device};
  int on_device = -1;
  int64_t moved = 0;
  for (int receiver : receivers) {
    const int value = add_value(receiver, first.node, first.output, first.microbatch, first.batch,
                                channels, PartialSum::kNone, false, op.id);
    op.outputs.push_back(value);
    if (receiver == device) on_device = value;
    moved += plan_.value(value).bytes;
    for (int id : slices) {
      if (plan_.value(id).device == receiver) moved -= plan_.value(id).bytes;
    }
  }
  op.payload_bytes = plan_.value(op.outputs.front()).bytes;
  op.bytes_moved = moved;
  add_op(std::move(op));
  return on_device;
}

// The gradient value a weight-gradient op writes: its rows' gradient added
// to the previous micro-batch's on the same device (read as an extra, last
// input), so that one running sum per weight slice reaches the update.
int PlanBuilder::gradient(PlanOp& op, const Placement& placement) {
  const int params = parameter(placement.device, placement.node, placement.slice);
  const Value& weights = plan_.value(params);
  Value value;
  value.id = static_cast<int>(plan_.values.size());
  value.role = ValueRole::kGradient;
  value.device = placement.device;
  value.node = weights.node;
  value.microbatch = placement.microbatch;
  value.batch = placement.slice.batch;
  value.channels = weights.channels;
  value.reduce = weights.reduce;
  value.features = weights.features;
  value.producer = op.id;
  const auto previous = gradient_of_.find(params);
  if (previous != gradient_of_.end()) {
    // Another micro-batch's rows, or another time step over the same rows.
    const Range rows = plan_.value(previous->second).batch;
    SPLITSCOPE_CHECK(rows == value.batch || rows.end == value.batch.begin || value.batch.end == rows.begin ||
                         rows.contains(value.batch),
                     "gradients of " + plan_.graph->node(weights.node).name + " over rows that do not join");
    value.batch = Range{std::min(rows.begin, value.batch.begin), std::max(rows.end, value.batch.end)};
    op.inputs.push_back(previous->second);
  }
  value.partial = value.batch.size() == plan_.graph->batch() ? PartialSum::kNone : PartialSum::kBatch;
  const OpNode& writer = plan_.graph->node(placement.node);
  if (op_def(writer.kind).sums_over_positions && placement.slice.out.size() < writer.output_shapes.at(0).at(0)) {
    value.partial = PartialSum::kPositions;  // a sequence-parallel share of the positions
  }
  value.bytes = value_bytes(*plan_.graph, value);
  plan_.values.push_back(value);
  gradient_of_[params] = value.id;
  return value.id;
}

// One optimizer update per parameter value that has a gradient, on its
// device, after every placement (so last in the device's schedule). Replicas
// of one weight slice (data parallelism) first all-reduce their gradients.
void PlanBuilder::add_updates() {
  // (weight set, out, reduce, features) -> gradients
  std::map<std::tuple<int, Range, Range, FeatureCut>, std::vector<int>> replicas;
  for (const auto& [params, gradient] : gradient_of_) {
    const Value& weights = plan_.value(params);
    replicas[{plan_.graph->node(weights.node).param_key, weights.channels, weights.reduce, weights.features}]
        .push_back(gradient);
  }
  std::vector<std::vector<int>> replicated;
  for (const auto& [slice, gradients] : replicas) {
    // Replicas that each saw the whole batch (tensor's replicated layer
    // norms and embeddings) hold the same gradient already: nothing to sum.
    // Held once, a replica's gradient over its own rows is summed across the replicas.
    if ((gradients.size() > 1 || replicas_ > 1) && plan_.value(gradients.front()).is_partial()) {
      replicated.push_back(gradients);
    } else {
      for (int gradient : gradients) update(gradient);
    }
  }
  const size_t before = plan_.ops.size();
  const std::vector<std::vector<int>> sums = add_gradient_all_reduces(plan_, replicated, bucket_bytes_, replicas_);
  if (plan_.replicas) {
    // Each bucket's all-reduce is a run (written once), its sums a run per replica.
    for (size_t id = before; id < plan_.ops.size(); ++id) {
      mark_run(plan_.replicas->op_runs, id);
      mark_run(plan_.replicas->value_runs, static_cast<size_t>(plan_.ops[id].outputs.front()));
    }
  }
  for (const std::vector<int>& slice_sums : sums) {
    for (int gradient : slice_sums) {
      start_run();
      update(gradient);
    }
  }
}

// The optimizer step of the parameter value on `gradient`'s device.
void PlanBuilder::update(int gradient) {
  const Value& sum = plan_.value(gradient);
  SPLITSCOPE_CHECK(sum.partial == PartialSum::kNone,
                   "the gradient of " + plan_.graph->node(sum.node).name + " does not cover the batch");
  int params = -1;
  for (int id : parameters_[weights_key(plan_.graph->node(sum.node).param_key, sum.device)]) {
    const Value& weights = plan_.value(id);
    if (weights.node == sum.node && weights.channels == sum.channels && weights.reduce == sum.reduce &&
        weights.features == sum.features) {
      params = id;
      break;
    }
  }
  SPLITSCOPE_CHECK(params >= 0, "a gradient without its weights on device " + std::to_string(sum.device));
  const Value& weights = plan_.value(params);
  const Optimizer& optimizer = plan_.graph->training()->optimizer;
  PlanOp op;
  op.role = OpRole::kUpdate;
  op.node = weights.node;
  op.device = weights.device;
  op.inputs = {gradient};
  op.params = weights.id;
  const int64_t elements = value_elements(*plan_.graph, weights);
  op.flops = optimizer.update_flops(elements);
  op.bytes_read = optimizer.update_bytes_read(elements);
  op.bytes_written = optimizer.update_bytes_written(elements);
  add_op(std::move(op));
}

// 1F1B: each stage's compute ops in the order of its forward/backward
// sequence (the updates stay last); GPipe's is the placement order.
void PlanBuilder::order_schedules() {
  if (plan_.pipeline_schedule == PipelineSchedule::kGpipe || !plan_.graph->is_training()) return;
  const Graph& graph = *plan_.graph;
  for (size_t device = 0; device < plan_.schedule.size(); ++device) {
    const auto sequence = stage_sequence(plan_.pipeline_schedule, static_cast<int>(device) / devices_per_stage_,
                                         plan_.devices / devices_per_stage_, plan_.microbatches);
    const auto rank = [&](int id) -> size_t {
      const PlanOp& op = plan_.op(id);
      if (op.role == OpRole::kUpdate) return sequence.size();
      const StagePass pass{graph.node(op.node).pass, op.microbatch};
      const auto at = std::find(sequence.begin(), sequence.end(), pass);
      SPLITSCOPE_CHECK(at != sequence.end(), "an op outside its stage's sequence");
      return static_cast<size_t>(at - sequence.begin());
    };
    auto& schedule = plan_.schedule[device];
    std::stable_sort(schedule.begin(), schedule.end(), [&](int a, int b) { return rank(a) < rank(b); });
  }
}

void PlanBuilder::set_outputs() {
  const Graph& graph = *plan_.graph;
  const TensorRef out = graph.output();
  const int64_t channels = graph.node(out.node).output_shapes.at(static_cast<size_t>(out.output)).at(0);
  for (int mb = 0; mb < plan_.microbatches; ++mb) {
    std::vector<int> slices;
    const KeyedLists::List producers = primary_of_[key(out.node, out.output, mb)];
    for (int id : producers) {
      if (!plan_.value(id).is_partial()) slices.push_back(id);
    }
    std::sort(slices.begin(), slices.end(), [&](int a, int b) {
      return plan_.value(a).channels.begin < plan_.value(b).channels.begin;
    });
    int64_t covered = 0;
    for (int id : slices) {
      if (plan_.value(id).channels.begin == covered) covered = plan_.value(id).channels.end;
    }
    if (!slices.empty() && covered == channels) {
      plan_.outputs.insert(plan_.outputs.end(), slices.begin(), slices.end());
      continue;
    }
    // Partial sums (a row-split last layer): reduce them first.
    SPLITSCOPE_CHECK(!producers.empty(), "the network output was never computed");
    const Value& any = plan_.value(producers.front());
    plan_.outputs.push_back(obtain(out.node, out.output, mb, any.batch, {0, channels}, any.device));
  }
}

}  // namespace splitscope

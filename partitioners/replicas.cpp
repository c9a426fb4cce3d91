#include "partitioners/replicas.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "plan/gradient_all_reduce.hpp"
#include "plan/plan_limits.hpp"
#include "plan/plan_memory.hpp"
#include "plan/plan_replicas.hpp"
#include "partitioners/stage_units.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// Where one replica's plan lands in the whole: its value and device offsets, its rows.
struct ReplicaPlace {
  int first_value = 0;
  int first_device = 0;
  int64_t first_row = 0;
};

class ReplicasPartitioner : public Partitioner {
 public:
  ReplicasPartitioner(std::unique_ptr<Partitioner> inner, int replicas)
      : inner_(std::move(inner)),
        replicas_(replicas),
        name_(std::string(inner_->name()) + " x" + std::to_string(replicas)),
        summary_(std::to_string(replicas) + " data-parallel replicas of " + std::string(inner_->name()) +
                 ", gradients all-reduced across them") {}

  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return summary_; }
  StrategyTraits traits() const override {
    StrategyTraits traits = inner_->traits();
    traits.baseline = false;
    return traits;
  }
  int max_devices(const Graph& graph) const override { return inner_->max_devices(graph) * replicas_; }
  bool applies(const Graph& graph, int devices) const override {
    return devices % replicas_ == 0 && inner_->applies(graph, devices / replicas_);
  }

  Plan partition(std::shared_ptr<const Graph> graph, const PartitionOptions& options) const override {
    if (replicas_ < 2) throw InputError("--replicas", "", "must be 2 or more, got " + std::to_string(replicas_));
    if (options.devices % replicas_ != 0) {
      throw InputError("--replicas", "",
                       std::to_string(replicas_) + " replicas need a multiple of " + std::to_string(replicas_) +
                           " devices (each gets the same number); got --devices " + std::to_string(options.devices));
    }
    if (graph->batch() < replicas_) {
      throw InputError("--replicas", "",
                       "each replica needs a row of the batch; the batch has " + std::to_string(graph->batch()));
    }
    PartitionOptions each = options;
    each.devices = options.devices / replicas_;
    each.compact_replicas = false;
    const std::vector<Range> rows = split_evenly(graph->batch(), replicas_);
    // Replicas of equal rows get the same inner plan: one for the longer
    // rows, one for the shorter (the last B mod R... none where R divides B).
    int short_from = 1;
    while (short_from < replicas_ && rows[static_cast<size_t>(short_from)].size() == rows[0].size()) ++short_from;
    const auto inner_plan = [&](int r, const PartitionOptions& inner_options) {
      return inner_->partition(std::make_shared<const Graph>(graph->with_batch(rows[static_cast<size_t>(r)].size())),
                               inner_options);
    };
    const Plan longer = inner_plan(0, each);
    // The shorter replicas keep the longer's stage cuts: balanced on one row
    // fewer, a layer split may cut elsewhere, and every replica must hold the
    // same weight slices on the same devices for their gradients to be
    // summed (the strategies that cut no stages do not read them).
    PartitionOptions shorter_options = each;
    if (shorter_options.stage_starts.empty()) shorter_options.stage_starts = plan_stage_starts(longer, each.devices);
    const std::optional<Plan> shorter =
        short_from < replicas_ ? std::optional<Plan>(inner_plan(short_from, shorter_options)) : std::nullopt;
    if (!options.compact_replicas || (shorter && !same_shape(longer, *shorter))) {
      // Every replica written (held once only where asked and the short replicas' plan lists the same ops).
      std::vector<const Plan*> parts;
      for (int r = 0; r < replicas_; ++r) parts.push_back(r < short_from ? &longer : &*shorter);
      return combine(graph, parts, rows, each.devices, options.bucket_bytes);
    }
    const Whole whole{graph, rows, each.devices, options.bucket_bytes};
    Plan plan = held_once(whole, longer, 0);
    plan.replicas->short_from = short_from;
    if (shorter) plan.replicas->short_replica = std::make_shared<const Plan>(held_once(whole, *shorter, short_from));
    return plan;
  }

 private:
  /// What every replica shares.
  struct Whole {
    std::shared_ptr<const Graph> graph;
    std::vector<Range> rows;
    int devices_each = 1;
    int64_t bucket_bytes = 0;
  };

  /// Whether two replicas' plans list the same ops and values, in the same
  /// order, on the same devices (their rows, FLOPs and bytes apart).
  static bool same_shape(const Plan& a, const Plan& b) {
    if (a.ops.size() != b.ops.size() || a.values.size() != b.values.size() || a.schedule != b.schedule ||
        a.inputs != b.inputs || a.parameters != b.parameters || a.outputs != b.outputs) {
      return false;
    }
    for (size_t i = 0; i < a.ops.size(); ++i) {
      const PlanOp& x = a.ops[i];
      const PlanOp& y = b.ops[i];
      if (x.role != y.role || x.node != y.node || x.device != y.device || x.src_device != y.src_device ||
          x.participants != y.participants || x.inputs != y.inputs || x.outputs != y.outputs || x.params != y.params) {
        return false;
      }
    }
    for (size_t i = 0; i < a.values.size(); ++i) {
      if (a.values[i].device != b.values[i].device || a.values[i].producer != b.values[i].producer ||
          a.values[i].role != b.values[i].role) {
        return false;
      }
    }
    return true;
  }

  /// Replica `r` (of plan `part`) held once: its ops but its updates (a run
  /// the whole plan writes replica by replica), the gradient all-reduces
  /// spanning every replica, then its updates (a run each): the whole
  /// plan's order, combine()'s below, which expand_replicas() writes again.
  Plan held_once(const Whole& whole, const Plan& part, int r) const {
    Plan plan;
    plan.strategy = name_;
    plan.traits = traits();
    plan.devices = whole.devices_each;
    plan.microbatches = part.microbatches;
    plan.graph = whole.graph;
    plan.pipeline_schedule = part.pipeline_schedule;
    plan.notes = part.notes;
    plan.notes.push_back(replicas_note(whole.devices_each));
    plan.schedule.assign(static_cast<size_t>(whole.devices_each), {});
    ReplicaSet set;
    set.count = replicas_;
    set.devices_each = whole.devices_each;
    set.rows = whole.rows;
    set.lists_by_replica = true;
    set.short_from = replicas_;
    set.op_runs = {0};
    set.value_runs = {0};

    const ReplicaPlace place{0, 0, whole.rows[static_cast<size_t>(r)].begin};
    for (const Value& value : part.values) plan.values.push_back(moved(value, place));
    std::vector<int> op_id(part.ops.size(), -1);
    for (const PlanOp& op : part.ops) {
      if (op.role == OpRole::kUpdate) continue;
      op_id[static_cast<size_t>(op.id)] = add(plan, moved(op, place));
    }
    std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t, int>, int> updates;
    for (const PlanOp& op : part.ops) {
      if (op.role != OpRole::kUpdate) continue;
      const Value& weights = part.value(op.params);
      updates[{whole.graph->node(weights.node).param_key, weights.channels.begin, weights.channels.end,
               weights.reduce.begin, weights.reduce.end, op.device}] = op.id;
    }
    std::vector<std::vector<int>> slices;
    for (const auto& [key, id] : updates) slices.push_back({part.op(id).inputs.at(0)});
    const size_t before = plan.ops.size();
    const std::vector<std::vector<int>> sums = add_gradient_all_reduces(plan, slices, whole.bucket_bytes, replicas_);
    for (size_t id = before; id < plan.ops.size(); ++id) {
      set.op_runs.push_back(static_cast<int>(id));
      set.value_runs.push_back(plan.ops[id].outputs.front());
    }
    size_t slice = 0;
    for (const auto& [key, id] : updates) {
      PlanOp update = moved(part.op(id), place);
      update.inputs = {sums[slice++][0]};
      set.op_runs.push_back(static_cast<int>(plan.ops.size()));
      op_id[static_cast<size_t>(id)] = add(plan, std::move(update));
    }
    for (const Value& value : part.values) {
      if (value.producer >= 0) plan.values[static_cast<size_t>(value.id)].producer = op_id.at(static_cast<size_t>(value.producer));
    }
    for (int d = 0; d < whole.devices_each; ++d) {
      for (int id : part.schedule.at(static_cast<size_t>(d))) {
        plan.schedule[static_cast<size_t>(d)].push_back(op_id.at(static_cast<size_t>(id)));
      }
    }
    plan.inputs = part.inputs;
    plan.parameters = part.parameters;
    plan.outputs = part.outputs;
    plan.memory = compute_memory(plan);
    // Runs that hold nothing (an inner plan with no values past the sums) are none.
    while (!set.op_runs.empty() && set.op_runs.back() >= static_cast<int>(plan.ops.size())) set.op_runs.pop_back();
    while (!set.value_runs.empty() && set.value_runs.back() >= static_cast<int>(plan.values.size())) {
      set.value_runs.pop_back();
    }
    set.value_runs.erase(std::unique(set.value_runs.begin(), set.value_runs.end()), set.value_runs.end());
    set.op_runs.erase(std::unique(set.op_runs.begin(), set.op_runs.end()), set.op_runs.end());
    plan.replicas = std::move(set);
    plan.devices = whole.devices_each * replicas_;
    return plan;
  }

  Plan combine(const std::shared_ptr<const Graph>& graph, const std::vector<const Plan*>& part_plans,
               const std::vector<Range>& rows, int devices_each, int64_t bucket_bytes) const {
    // The replicas' plans, several of them the same one.
    struct Parts {
      const std::vector<const Plan*>& plans;
      size_t size() const { return plans.size(); }
      const Plan& operator[](size_t r) const { return *plans[r]; }
      const Plan& front() const { return *plans.front(); }
    } parts{part_plans};
    Plan plan;
    plan.strategy = name_;
    plan.traits = traits();
    plan.devices = devices_each * replicas_;
    plan.microbatches = parts.front().microbatches;
    plan.graph = graph;
    plan.pipeline_schedule = parts.front().pipeline_schedule;
    plan.notes = parts.front().notes;
    plan.notes.push_back(replicas_note(devices_each));
    plan.schedule.assign(static_cast<size_t>(plan.devices), {});

    // Ids: every replica's ops but its updates, replica by replica; then
    // the gradients' all-reduces; then the updates (each device's last ops).
    std::vector<ReplicaPlace> places;
    std::vector<std::vector<int>> op_id(parts.size());
    for (size_t r = 0; r < parts.size(); ++r) {
      const ReplicaPlace place{static_cast<int>(plan.values.size()), static_cast<int>(r) * devices_each,
                               rows[r].begin};
      places.push_back(place);
      for (const Value& value : parts[r].values) plan.values.push_back(moved(value, place));
      op_id[r].assign(parts[r].ops.size(), -1);
      for (const PlanOp& op : parts[r].ops) {
        if (op.role == OpRole::kUpdate) continue;
        op_id[r][static_cast<size_t>(op.id)] = add(plan, moved(op, place));
      }
    }
    // Each weight slice's updates, one per replica, by (weight set, ranges, device within the replica).
    std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t, int>, std::vector<std::pair<int, int>>> updates;
    for (size_t r = 0; r < parts.size(); ++r) {
      for (const PlanOp& op : parts[r].ops) {
        if (op.role != OpRole::kUpdate) continue;
        const Value& weights = parts[r].value(op.params);
        updates[{graph->node(weights.node).param_key, weights.channels.begin, weights.channels.end,
                 weights.reduce.begin, weights.reduce.end, op.device}]
            .emplace_back(static_cast<int>(r), op.id);
      }
    }
    // The gradients' producers are still the replicas' own op ids here: alike
    // in every replica, so they order the buckets as well as the plan's would.
    std::vector<std::vector<int>> slices;
    for (const auto& [key, group] : updates) {
      if (group.size() != parts.size()) {
        throw std::logic_error("replicas: the replicas' plans update different weight slices");
      }
      std::vector<int>& gradients = slices.emplace_back();
      for (const auto& [r, id] : group) {
        gradients.push_back(parts[static_cast<size_t>(r)].op(id).inputs.at(0) + places[static_cast<size_t>(r)].first_value);
      }
    }
    const std::vector<std::vector<int>> sums = add_gradient_all_reduces(plan, slices, bucket_bytes);
    std::vector<std::pair<PlanOp, std::pair<int, int>>> deferred;  // update ops, by (replica, inner id)
    size_t slice = 0;
    for (const auto& [key, group] : updates) {
      for (size_t i = 0; i < group.size(); ++i) {
        const auto [r, id] = group[i];
        PlanOp update = moved(parts[static_cast<size_t>(r)].op(id), places[static_cast<size_t>(r)]);
        update.inputs = {sums[slice][i]};
        deferred.push_back({std::move(update), group[i]});
      }
      ++slice;
    }
    for (auto& [update, origin] : deferred) {
      op_id[static_cast<size_t>(origin.first)][static_cast<size_t>(origin.second)] = add(plan, std::move(update));
    }
    // Producers, schedules and the plan's lists, in the new ids.
    for (size_t r = 0; r < parts.size(); ++r) {
      const ReplicaPlace& place = places[r];
      for (const Value& value : parts[r].values) {
        Value& copy = plan.values[static_cast<size_t>(value.id + place.first_value)];
        if (value.producer >= 0) copy.producer = op_id[r].at(static_cast<size_t>(value.producer));
      }
      for (int d = 0; d < devices_each; ++d) {
        for (int id : parts[r].schedule.at(static_cast<size_t>(d))) {
          plan.schedule[static_cast<size_t>(place.first_device + d)].push_back(op_id[r].at(static_cast<size_t>(id)));
        }
      }
      for (int id : parts[r].inputs) plan.inputs.push_back(id + place.first_value);
      for (int id : parts[r].parameters) plan.parameters.push_back(id + place.first_value);
      for (int id : parts[r].outputs) plan.outputs.push_back(id + place.first_value);
    }
    plan.memory = compute_memory(plan);
    return plan;
  }

  std::string replicas_note(int devices_each) const {
    return std::to_string(replicas_) + " replicas of " + std::string(inner_->name()) + " over " +
           std::to_string(devices_each) + (devices_each == 1 ? " device" : " devices") +
           " each (replica r on devices r*" + std::to_string(devices_each) +
           " onward), every weight slice's gradient all-reduced across them";
  }

  /// A replica's value in the whole: its device, its rows, and a gradient
  /// over the replica's rows only is a partial sum over the batch (one over
  /// some positions as well stays that, for the replica's own all-reduce).
  Value moved(Value value, const ReplicaPlace& place) const {
    value.id += place.first_value;
    value.device += place.first_device;
    if (value.role != ValueRole::kParameter) value.batch = shifted(value.batch, place.first_row);
    if (value.role == ValueRole::kGradient && value.partial != PartialSum::kPositions) {
      value.partial = PartialSum::kBatch;
    }
    return value;
  }

  PlanOp moved(PlanOp op, const ReplicaPlace& place) const {
    if (op.device >= 0) op.device += place.first_device;
    if (op.src_device >= 0) op.src_device += place.first_device;
    for (int& device : op.participants) device += place.first_device;
    for (int& id : op.inputs) {
      if (id >= 0) id += place.first_value;
    }
    for (int& id : op.outputs) id += place.first_value;
    if (op.params >= 0) op.params += place.first_value;
    if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue) op.slice.batch = shifted(op.slice.batch, place.first_row);
    return op;
  }

  static Range shifted(Range range, int64_t by) { return Range{range.begin + by, range.end + by}; }

  static int add(Plan& plan, PlanOp op) {
    op.id = static_cast<int>(plan.ops.size());
    check_plan_ops(plan, op.id + int64_t{1});
    plan.ops.push_back(std::move(op));
    return plan.ops.back().id;
  }

  std::unique_ptr<Partitioner> inner_;
  int replicas_;
  std::string name_;
  std::string summary_;
};

}  // namespace

std::unique_ptr<Partitioner> with_replicas(std::unique_ptr<Partitioner> inner, int replicas) {
  return std::make_unique<ReplicasPartitioner>(std::move(inner), replicas);
}

}  // namespace splitscope

#include "plan/plan_replicas.hpp"

#include <algorithm>

#include "plan/plan_limits.hpp"
#include "util/check.hpp"
#include "util/huge_pages.hpp"

namespace splitscope {
namespace {

/// Where a run of compact ids (ReplicaSet::op_runs, value_runs) lands in the whole plan.
struct RunPlace {
  int first = 0;          ///< its first compact id
  int size = 0;
  int64_t whole_first = 0;  ///< replica 0's first id in the whole plan
  bool once = false;      ///< a spanning collective: written once, not per replica
};

/// The runs starting at `starts` of `total` compact ids, and the run of each id.
class Runs {
 public:
  Runs(const std::vector<int>& starts, int total, int replicas, const std::vector<PlanOp>* ops)
      : run_of_(static_cast<size_t>(total), -1) {
    SPLITSCOPE_CHECK(total == 0 || (!starts.empty() && starts.front() == 0), "replica runs must start at id 0");
    int64_t whole = 0;
    for (size_t k = 0; k < starts.size(); ++k) {
      RunPlace run;
      run.first = starts[k];
      run.size = (k + 1 < starts.size() ? starts[k + 1] : total) - run.first;
      SPLITSCOPE_CHECK(run.size > 0, "an empty or unordered replica run");
      run.once = ops != nullptr && (*ops)[static_cast<size_t>(run.first)].spans_replicas;
      SPLITSCOPE_CHECK(!run.once || run.size == 1, "a spanning collective shares its run");
      run.whole_first = whole;
      whole += run.once ? 1 : int64_t{replicas} * run.size;
      for (int id = run.first; id < run.first + run.size; ++id) run_of_[static_cast<size_t>(id)] = static_cast<int>(k);
      runs_.push_back(run);
    }
    whole_ = whole;
  }

  /// Replica r's copy of compact id `id` in the whole plan (-1 stays -1).
  int whole_id(int id, int r) const {
    if (id < 0) return id;
    const RunPlace& run = runs_[static_cast<size_t>(run_of_.at(static_cast<size_t>(id)))];
    return static_cast<int>(run.whole_first + (run.once ? 0 : int64_t{r} * run.size) + (id - run.first));
  }
  const std::vector<RunPlace>& runs() const { return runs_; }
  int64_t whole() const { return whole_; }

 private:
  std::vector<RunPlace> runs_;
  std::vector<int> run_of_;
  int64_t whole_ = 0;
};

const Plan& replica_body(const Plan& plan, int r) {
  const ReplicaSet& set = *plan.replicas;
  return r >= set.short_from ? *set.short_replica : plan;
}

/// The first row the body replica `r` copies was built over.
int64_t body_first_row(const ReplicaSet& set, int r) {
  return set.rows.at(static_cast<size_t>(r >= set.short_from ? set.short_from : 0)).begin;
}

Range shifted(Range range, int64_t by) { return Range{range.begin + by, range.end + by}; }

/// Writes the whole plan, replica by replica within each run.
class Expansion {
 public:
  explicit Expansion(const Plan& plan)
      : plan_(plan),
        set_(*plan.replicas),
        ops_(set_.op_runs, static_cast<int>(plan.ops.size()), set_.count, &plan.ops),
        values_(set_.value_runs, static_cast<int>(plan.values.size()), set_.count, nullptr) {
    if (set_.short_from < set_.count) {
      const Plan& other = *set_.short_replica;
      SPLITSCOPE_CHECK(other.ops.size() == plan.ops.size() && other.values.size() == plan.values.size() &&
                           other.schedule.size() == plan.schedule.size(),
                       "the short replica differs from replica 0");
    }
  }

  Plan write() const {
    Plan whole = plan_;
    whole.replicas.reset();
    whole.ops.clear();
    whole.values.clear();
    reserve_on_huge_pages(whole.ops, static_cast<size_t>(ops_.whole()));
    reserve_on_huge_pages(whole.values, static_cast<size_t>(values_.whole()));
    for (const RunPlace& run : values_.runs()) {
      for (int r = 0; r < set_.count; ++r) {
        const Plan& body = replica_body(plan_, r);
        for (int id = run.first; id < run.first + run.size; ++id) whole.values.push_back(value(body, id, r));
      }
    }
    for (const RunPlace& run : ops_.runs()) {
      if (run.once) {
        whole.ops.push_back(spanning(plan_.ops[static_cast<size_t>(run.first)]));
        continue;
      }
      for (int r = 0; r < set_.count; ++r) {
        const Plan& body = replica_body(plan_, r);
        for (int id = run.first; id < run.first + run.size; ++id) whole.ops.push_back(op(body, id, r));
      }
    }
    const auto each = static_cast<size_t>(set_.devices_each);
    whole.schedule.assign(static_cast<size_t>(set_.count) * each, {});
    whole.memory.assign(static_cast<size_t>(set_.count) * each, DeviceMemory{});
    for (int r = 0; r < set_.count; ++r) {
      const Plan& body = replica_body(plan_, r);
      for (size_t d = 0; d < each; ++d) {
        std::vector<int>& schedule = whole.schedule[static_cast<size_t>(r) * each + d];
        if (d < body.schedule.size()) {
          for (int id : body.schedule[d]) schedule.push_back(ops_.whole_id(id, r));
        }
        if (d < body.memory.size()) whole.memory[static_cast<size_t>(r) * each + d] = body.memory[d];
      }
    }
    whole.inputs = list(&Plan::inputs);
    whole.parameters = list(&Plan::parameters);
    whole.outputs = list(&Plan::outputs);
    if (!set_.lists_by_replica) {
      // PlanBuilder::set_outputs' order: by first channel, over the replicas' slices in id order.
      std::sort(whole.outputs.begin(), whole.outputs.end(), [&](int a, int b) {
        return whole.value(a).channels.begin < whole.value(b).channels.begin;
      });
    }
    return whole;
  }

 private:
  Value value(const Plan& body, int id, int r) const {
    Value value = body.values[static_cast<size_t>(id)];
    value.id = values_.whole_id(id, r);
    value.device += r * set_.devices_each;
    const bool summed = value.producer >= 0 && body.ops[static_cast<size_t>(value.producer)].spans_replicas;
    if (value.role != ValueRole::kParameter && !summed) value.batch = shifted(value.batch, shift(r));
    value.producer = ops_.whole_id(value.producer, r);
    return value;
  }

  PlanOp op(const Plan& body, int id, int r) const {
    PlanOp op = body.ops[static_cast<size_t>(id)];
    const int offset = r * set_.devices_each;
    op.id = ops_.whole_id(id, r);
    if (op.device >= 0) op.device += offset;
    if (op.src_device >= 0) op.src_device += offset;
    for (int& device : op.participants) device += offset;
    for (int& value : op.inputs) value = values_.whole_id(value, r);
    for (int& value : op.outputs) value = values_.whole_id(value, r);
    op.params = values_.whole_id(op.params, r);
    op.recomputes = ops_.whole_id(op.recomputes, r);
    if (op.role == OpRole::kCompute || op.role == OpRole::kEpilogue) op.slice.batch = shifted(op.slice.batch, shift(r));
    return op;
  }

  /// A spanning collective over every replica: participant-major lists, replica by replica.
  PlanOp spanning(const PlanOp& compact) const {
    PlanOp op = compact;
    op.id = ops_.whole_id(compact.id, 0);
    op.spans_replicas = false;
    op.participants.clear();
    op.inputs.clear();
    op.outputs.clear();
    for (int r = 0; r < set_.count; ++r) {
      for (int device : compact.participants) op.participants.push_back(device + r * set_.devices_each);
      for (int value : compact.inputs) op.inputs.push_back(values_.whole_id(value, r));
      for (int value : compact.outputs) op.outputs.push_back(values_.whole_id(value, r));
    }
    return op;
  }

  std::vector<int> list(std::vector<int> Plan::*member) const {
    std::vector<int> whole;
    for (int r = 0; r < set_.count; ++r) {
      for (int id : replica_body(plan_, r).*member) whole.push_back(values_.whole_id(id, r));
    }
    if (!set_.lists_by_replica) std::sort(whole.begin(), whole.end());
    return whole;
  }

  int64_t shift(int r) const { return set_.rows.at(static_cast<size_t>(r)).begin - body_first_row(set_, r); }

  const Plan& plan_;
  const ReplicaSet& set_;
  Runs ops_;
  Runs values_;
};

}  // namespace

int64_t expanded_op_count(const Plan& plan) {
  if (!plan.replicas) return static_cast<int64_t>(plan.ops.size());
  int64_t count = 0;
  for (const PlanOp& op : plan.ops) count += op.spans_replicas ? 1 : plan.replicas->count;
  return count;
}

Plan expand_replicas(const Plan& plan) {
  if (!plan.replicas) return plan;
  check_plan_ops(plan, expanded_op_count(plan));
  return Expansion(plan).write();
}

const DeviceMemory& device_memory(const Plan& plan, int device) {
  if (!plan.replicas) return plan.memory.at(static_cast<size_t>(device));
  const int each = plan.replicas->devices_each;
  return replica_body(plan, device / each).memory.at(static_cast<size_t>(device % each));
}

bool replicas_alike(const Plan& plan) { return !plan.replicas || plan.replicas->short_from >= plan.replicas->count; }

}  // namespace splitscope

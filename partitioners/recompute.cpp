#include "partitioners/recompute.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "plan/plan_memory.hpp"

namespace splitscope {
namespace {

class Recomputation {
 public:
  explicit Recomputation(Plan& plan) : plan_(plan), graph_(*plan.graph) {
    for (int output : plan_.outputs) kept_.insert(output);
  }

  void run() {
    const int originals = static_cast<int>(plan_.ops.size());
    for (size_t device = 0; device < plan_.schedule.size(); ++device) rerun_on(static_cast<int>(device));
    restore_op_order(originals);
  }

 private:
  bool is_compute(const PlanOp& op, Pass pass) const {
    return op.role == OpRole::kCompute && op.recomputes < 0 && graph_.node(op.node).pass == pass;
  }

  /// The forward compute op that wrote `value` on `device` for `microbatch`,
  /// when the re-run must recompute it; -1 when the value is kept.
  int rerun_producer(int value, int device, int microbatch) const {
    if (value < 0 || kept_.count(value) != 0) return -1;
    const Value& v = plan_.value(value);
    if (v.producer < 0 || v.device != device || v.microbatch != microbatch) return -1;
    const PlanOp& producer = plan_.op(v.producer);
    return is_compute(producer, Pass::kForward) ? producer.id : -1;
  }

  void rerun_on(int device) {
    const std::vector<int> schedule = plan_.schedule[static_cast<size_t>(device)];
    // Per micro-batch: its forward ops the backward needs, and where its backward starts.
    std::map<int, std::unordered_set<int>> needed;
    std::map<int, size_t> first_backward;
    for (size_t at = 0; at < schedule.size(); ++at) {
      const PlanOp& op = plan_.op(schedule[at]);
      if (!is_compute(op, Pass::kBackward)) continue;
      first_backward.emplace(op.microbatch, at);
      for (int input : op.inputs) mark(rerun_producer(input, device, op.microbatch), needed[op.microbatch]);
    }

    std::vector<int> reordered;
    std::unordered_map<int, int> replacement;  // original value -> re-run value
    for (size_t at = 0; at < schedule.size(); ++at) {
      // Copied: a re-run grows plan_.ops, which would leave a reference dangling.
      const bool backward = is_compute(plan_.op(schedule[at]), Pass::kBackward);
      const int microbatch = plan_.op(schedule[at]).microbatch;
      if (backward && first_backward.at(microbatch) == at) {
        const std::unordered_set<int>& ops = needed[microbatch];
        for (int original : schedule) {
          if (ops.count(original) != 0) reordered.push_back(rerun(original, replacement));
        }
      }
      reordered.push_back(schedule[at]);
      if (backward) read_reruns(plan_.ops[static_cast<size_t>(schedule[at])].inputs, replacement);
    }
    plan_.schedule[static_cast<size_t>(device)] = std::move(reordered);
  }

  /// Points `inputs` at the re-run values of the originals `replacement` maps.
  static void read_reruns(std::vector<int>& inputs, const std::unordered_map<int, int>& replacement) {
    for (int& input : inputs) {
      if (const auto found = replacement.find(input); found != replacement.end()) input = found->second;
    }
  }

  /// Adds `op` and, through its inputs, the forward ops it reads to `ops`.
  void mark(int op, std::unordered_set<int>& ops) const {
    if (op < 0 || !ops.insert(op).second) return;
    const PlanOp& forward = plan_.op(op);
    for (int input : forward.inputs) mark(rerun_producer(input, forward.device, forward.microbatch), ops);
  }

  /// A copy of forward op `original` writing values of its own, reading the
  /// re-run values of earlier re-run ops; returns its id.
  int rerun(int original, std::unordered_map<int, int>& replacement) {
    PlanOp copy = plan_.op(original);
    copy.id = static_cast<int>(plan_.ops.size());
    copy.recomputes = original;
    read_reruns(copy.inputs, replacement);
    for (int& output : copy.outputs) {
      Value value = plan_.value(output);
      value.id = static_cast<int>(plan_.values.size());
      value.producer = copy.id;
      plan_.values.push_back(value);
      replacement[output] = value.id;
      output = value.id;
    }
    plan_.ops.push_back(std::move(copy));
    return plan_.ops.back().id;
  }

  // Plan::ops is in dependency order (each op's inputs written by earlier
  // ops), and the re-runs were appended: each moves to just before the first
  // op that reads what it writes (a re-run read only by other re-runs goes
  // before theirs), then every op id is renumbered.
  void restore_op_order(int originals) {
    const int total = static_cast<int>(plan_.ops.size());
    // Where each re-run goes: before its first original reader, or before
    // where its first re-run reader goes. Re-runs were appended in dependency
    // order, so walking them backwards settles every reader before its producer.
    std::vector<int> place(static_cast<size_t>(total), total);
    for (int id = 0; id < originals; ++id) place[static_cast<size_t>(id)] = id;
    const auto producer_of = [&](int value) { return value < 0 ? -1 : plan_.value(value).producer; };
    for (int id = 0; id < originals; ++id) {
      for (int input : plan_.op(id).inputs) {
        const int producer = producer_of(input);
        if (producer >= originals) place[static_cast<size_t>(producer)] = std::min(place[static_cast<size_t>(producer)], id);
      }
    }
    for (int id = total - 1; id >= originals; --id) {
      for (int input : plan_.op(id).inputs) {
        const int producer = producer_of(input);
        if (producer >= originals) {
          place[static_cast<size_t>(producer)] =
              std::min(place[static_cast<size_t>(producer)], place[static_cast<size_t>(id)]);
        }
      }
    }
    std::vector<int> order(static_cast<size_t>(total));
    for (int id = 0; id < total; ++id) order[static_cast<size_t>(id)] = id;
    // Re-runs before the op they go before; among themselves, in the order they were made.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const int pa = place[static_cast<size_t>(a)], pb = place[static_cast<size_t>(b)];
      if (pa != pb) return pa < pb;
      return (a >= originals) > (b >= originals);
    });
    std::vector<int> renumbered(static_cast<size_t>(total));
    for (int at = 0; at < total; ++at) renumbered[static_cast<size_t>(order[static_cast<size_t>(at)])] = at;
    std::vector<PlanOp> ops;
    ops.reserve(static_cast<size_t>(total));
    for (int id : order) {
      PlanOp op = std::move(plan_.ops[static_cast<size_t>(id)]);
      op.id = renumbered[static_cast<size_t>(id)];
      if (op.recomputes >= 0) op.recomputes = renumbered[static_cast<size_t>(op.recomputes)];
      ops.push_back(std::move(op));
    }
    plan_.ops = std::move(ops);
    for (Value& value : plan_.values) {
      if (value.producer >= 0) value.producer = renumbered[static_cast<size_t>(value.producer)];
    }
    for (std::vector<int>& schedule : plan_.schedule) {
      for (int& id : schedule) id = renumbered[static_cast<size_t>(id)];
    }
  }

  Plan& plan_;
  const Graph& graph_;
  std::unordered_set<int> kept_;
};

}  // namespace

Plan recompute_activations(Plan plan) {
  if (plan.graph == nullptr || !plan.graph->is_training()) {
    throw std::logic_error("re-materialisation needs a training plan");
  }
  Recomputation(plan).run();
  plan.memory = compute_memory(plan);
  return plan;
}

}  // namespace splitscope

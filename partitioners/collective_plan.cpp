#include "partitioners/collective_plan.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "plan/collective_schedule.hpp"
#include "plan/plan_memory.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr int64_t kFloat = 4;

/// A graph whose input is one tensor of `elements` floats: the values the
/// plan moves are slices of it (a flatten follows, never computed).
std::shared_ptr<const Graph> tensor_graph(int64_t elements) {
  const std::string network = fmt::format(
      R"({{"name": "collective", "batch": 1, "input": [{}], "layers": [{{"type": "flatten", "name": "unused"}}]}})",
      elements);
  return std::make_shared<const Graph>(lower(parse_model_text(network, "collective")));
}

struct Builder {
  Plan& plan;
  NodeId tensor = 0;

  int value(int device, Range channels, int producer, PartialSum partial = PartialSum::kNone) {
    Value value;
    value.id = static_cast<int>(plan.values.size());
    value.device = device;
    value.node = tensor;
    value.batch = {0, 1};
    value.channels = channels;
    value.partial = partial;
    value.producer = producer;
    value.bytes = value_bytes(*plan.graph, value);
    plan.values.push_back(value);
    if (producer < 0) plan.inputs.push_back(value.id);
    return value.id;
  }

  PlanOp& add(PlanOp op) {
    op.id = static_cast<int>(plan.ops.size());
    plan.ops.push_back(std::move(op));
    return plan.ops.back();
  }
};

CollectiveKind collective_kind(CollectiveTest test) {
  switch (test) {
    case CollectiveTest::kAllReduce: return CollectiveKind::kAllReduce;
    case CollectiveTest::kAllGather: return CollectiveKind::kAllGather;
    case CollectiveTest::kReduceScatter: return CollectiveKind::kReduceScatter;
    case CollectiveTest::kBroadcast: return CollectiveKind::kBroadcast;
    case CollectiveTest::kSendRecv: break;
  }
  throw std::logic_error("send-recv is transfers, not a collective op");
}

}  // namespace

std::string_view to_string(CollectiveTest test) {
  switch (test) {
    case CollectiveTest::kAllReduce: return "all-reduce";
    case CollectiveTest::kAllGather: return "all-gather";
    case CollectiveTest::kReduceScatter: return "reduce-scatter";
    case CollectiveTest::kBroadcast: return "broadcast";
    case CollectiveTest::kSendRecv: return "send-recv";
  }
  return "?";
}

CollectiveTest parse_collective_test(std::string_view name, const std::string& option) {
  for (CollectiveTest test : {CollectiveTest::kAllReduce, CollectiveTest::kAllGather, CollectiveTest::kReduceScatter,
                              CollectiveTest::kBroadcast, CollectiveTest::kSendRecv}) {
    if (name == to_string(test)) return test;
  }
  throw InputError(option, std::string(name),
                   "unknown collective; use all-reduce, all-gather, reduce-scatter, broadcast or send-recv");
}

int64_t collective_bytes(CollectiveTest test, int devices, int64_t bytes) {
  const int64_t elements = bytes / kFloat;
  if (test == CollectiveTest::kAllGather || test == CollectiveTest::kReduceScatter) {
    return elements / devices * devices * kFloat;
  }
  return elements * kFloat;
}

double bus_bandwidth_factor(CollectiveTest test, int devices) {
  const double n = devices;
  switch (test) {
    case CollectiveTest::kAllReduce: return 2 * (n - 1) / n;
    case CollectiveTest::kAllGather:
    case CollectiveTest::kReduceScatter: return (n - 1) / n;
    case CollectiveTest::kBroadcast:
    case CollectiveTest::kSendRecv: return 1;
  }
  return 1;
}

Plan collective_plan(CollectiveTest test, int devices, int64_t bytes) {
  SPLITSCOPE_CHECK(devices >= 2, "a collective needs two devices");
  const int64_t moved = collective_bytes(test, devices, bytes);
  SPLITSCOPE_CHECK(moved > 0, "a collective of no bytes");
  const int64_t elements = moved / kFloat;
  Plan plan;
  plan.strategy = fmt::format("collective {}", to_string(test));
  plan.devices = devices;
  plan.graph = tensor_graph(elements);
  plan.schedule.assign(static_cast<size_t>(devices), {});
  Builder b{plan, 0};
  while (plan.graph->node(b.tensor).kind != OpKind::kInput) ++b.tensor;
  const Range whole{0, elements};
  switch (test) {
    case CollectiveTest::kAllReduce:
    case CollectiveTest::kAllGather:
    case CollectiveTest::kReduceScatter:
    case CollectiveTest::kBroadcast: {
      PlanOp op;
      op.role = OpRole::kCollective;
      op.collective = collective_kind(test);
      op.algorithm = default_algorithm(op.collective);
      op.node = b.tensor;
      const bool broadcast = op.collective == CollectiveKind::kBroadcast;
      op.device = broadcast ? 0 : -1;  // a broadcast's root, first in the ring
      const int64_t slice = elements / devices;
      const auto own = [slice](int d) { return Range{d * slice, (d + 1) * slice}; };
      for (int d = 0; d < devices; ++d) {
        op.participants.push_back(d);
        if (op.collective == CollectiveKind::kAllGather) {
          op.inputs.push_back(b.value(d, own(d), -1));
        } else if (!broadcast || d == 0) {
          op.inputs.push_back(broadcast ? b.value(d, whole, -1) : b.value(d, whole, -1, PartialSum::kReduction));
        }
      }
      op.id = 0;
      for (int d = 0; d < devices; ++d) {
        op.outputs.push_back(b.value(d, op.collective == CollectiveKind::kReduceScatter ? own(d) : whole, 0));
      }
      op.payload_bytes = moved;
      // Summed over the devices: what each receives. Ring all-reduce 2(N-1)/N
      // of the tensor into each (as the plan builder counts it); the others
      // (N-1)/N (all-gather, reduce-scatter) or all of it (broadcast, but the root).
      op.bytes_moved = (op.collective == CollectiveKind::kAllReduce ? 2 : 1) * static_cast<int64_t>(devices - 1) * moved;
      b.add(std::move(op));
      break;
    }
    case CollectiveTest::kSendRecv:
      for (int d = 0; d < devices; ++d) {
        PlanOp copy;
        copy.role = OpRole::kTransfer;
        copy.node = b.tensor;
        copy.src_device = d;
        copy.device = (d + 1) % devices;
        copy.inputs = {b.value(d, whole, -1)};
        copy.outputs = {b.value(copy.device, whole, static_cast<int>(plan.ops.size()))};
        copy.bytes_moved = moved;
        copy.payload_bytes = moved;
        b.add(std::move(copy));
      }
      break;
  }
  for (const PlanOp& each : plan.ops) plan.outputs.insert(plan.outputs.end(), each.outputs.begin(), each.outputs.end());
  plan.memory = compute_memory(plan);
  return plan;
}

}  // namespace splitscope

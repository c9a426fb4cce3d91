// Chakra execution traces of real plans: every op of the plan appears on the
// devices it touches with its FLOPs, bytes, peers and predicted time, every
// dependency the plan's data flow and schedules imply is in the trace, and
// the files decode back to the same nodes.

#include "chakra/chakra_trace.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../cli/cli_test_support.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using ChakraProtoMsg::Node;

std::shared_ptr<const Graph> zoo_graph(const std::string& name, bool train) {
  auto forward = std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
  if (!train) return forward;
  return std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
}

Plan partition(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
               int microbatches = 1) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

const ChakraProtoMsg::AttributeProto* attr(const Node& node, const std::string& name) {
  for (const auto& a : node.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
int64_t op_of(const Node& node) { return attr(node, "splitscope_op")->int64_val(); }

/// Node ids per (op, type) on one device's trace.
std::multimap<int64_t, const Node*> by_op(const std::vector<Node>& nodes) {
  std::multimap<int64_t, const Node*> index;
  for (const Node& node : nodes) index.emplace(op_of(node), &node);
  return index;
}

/// What every trace must say of its plan.
void expect_trace_matches(const Plan& plan, const Timeline& predicted, const ChakraTraces& traces) {
  ASSERT_EQ(traces.devices.size(), static_cast<size_t>(plan.devices));
  std::map<int, double> compute_ns;
  for (const Span& span : predicted.spans) {
    if (span.op >= 0 && span.lane == Lane::kCompute) compute_ns[span.op] += span.duration_us() * 1000.0;
  }
  const auto predecessors = op_predecessors(plan);
  int64_t sent = 0;
  int64_t received = 0;
  for (int d = 0; d < plan.devices; ++d) {
    const auto& nodes = traces.devices[static_cast<size_t>(d)];
    const auto index = by_op(nodes);
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_EQ(nodes[i].id(), i);
      for (uint64_t dep : nodes[i].data_deps()) EXPECT_LT(dep, i) << "a dependency comes before its node";
      EXPECT_FALSE(attr(nodes[i], "is_cpu_op")->bool_val());
    }
    // Every compute op of the device is one compute node with its FLOPs,
    // bytes and simulated time.
    size_t compute_ops = 0;
    for (const PlanOp& op : plan.ops) {
      const bool compute = op.role == OpRole::kCompute || op.role == OpRole::kEpilogue || op.role == OpRole::kUpdate;
      if (!compute || op.device != d) continue;
      ++compute_ops;
      ASSERT_EQ(index.count(op.id), 1u) << op_label(plan, op);
      const Node& node = *index.find(op.id)->second;
      EXPECT_EQ(node.type(), ChakraProtoMsg::COMP_NODE);
      EXPECT_EQ(attr(node, "num_ops")->int64_val(), op.flops);
      EXPECT_EQ(attr(node, "tensor_size")->uint64_val(), static_cast<uint64_t>(op.bytes_read + op.bytes_written));
      EXPECT_EQ(attr(node, "splitscope_duration_ns")->uint64_val(), static_cast<uint64_t>(std::llround(compute_ns[op.id])));
      // Each producer it reads from on this device is among its dependencies.
      std::set<uint64_t> deps(node.data_deps().begin(), node.data_deps().end());
      for (int before : predecessors[static_cast<size_t>(op.id)]) {
        const PlanOp& producer = plan.op(before);
        if (producer.role == OpRole::kTransfer && producer.src_device == producer.device) continue;
        const auto [first, last] = index.equal_range(before);
        bool found = false;
        for (auto it = first; it != last; ++it) found = found || deps.count(it->second->id()) > 0;
        EXPECT_TRUE(found) << op_label(plan, op) << " waits on " << op_label(plan, producer) << " on device " << d;
      }
    }
    size_t compute_nodes = 0;
    for (const Node& node : nodes) {
      if (node.type() == ChakraProtoMsg::COMP_NODE) ++compute_nodes;
      if (node.type() == ChakraProtoMsg::COMM_SEND_NODE) {
        EXPECT_EQ(attr(node, "comm_src")->int32_val(), d);
        sent += attr(node, "comm_size")->int64_val();
      }
      if (node.type() == ChakraProtoMsg::COMM_RECV_NODE) {
        EXPECT_EQ(attr(node, "comm_dst")->int32_val(), d);
        received += attr(node, "comm_size")->int64_val();
      }
      if (node.type() == ChakraProtoMsg::COMM_COLL_NODE) {
        const PlanOp& op = plan.op(static_cast<int>(op_of(node)));
        EXPECT_EQ(attr(node, "comm_size")->int64_val(), op.payload_bytes);
        EXPECT_NE(std::find(op.participants.begin(), op.participants.end(), d), op.participants.end());
      }
    }
    EXPECT_EQ(compute_nodes, compute_ops);
  }
  // Point-to-point bytes: what the plan's transfers and concats move, each
  // byte once sent and once received.
  int64_t moved = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kTransfer && op.src_device != op.device) moved += op.bytes_moved;
    if (op.role == OpRole::kCollective && op.collective == CollectiveKind::kConcat) moved += op.bytes_moved;
  }
  EXPECT_EQ(sent, moved);
  EXPECT_EQ(received, moved);
}

TEST(ChakraTrace, EveryStrategyOfTheSmallZooMatchesItsPlan) {
  const Machine machine = load_machine("h100-nvlink-8");
  struct Case {
    std::string network;
    std::string strategy;
    int devices;
    int microbatches;
    bool train;
  };
  for (const Case& c : std::vector<Case>{{"mlp-small", "tensor", 2, 1, false},
                                         {"mlp-small", "vertical", 4, 1, false},
                                         {"mlp-small", "pipeline", 2, 4, true},
                                         {"mlp-small", "data", 4, 1, true},
                                         {"cnn-small", "vertical", 2, 1, true},
                                         {"lstm-small", "horizontal", 2, 1, false},
                                         {"two-tower-small", "branches", 2, 1, false}}) {
    SCOPED_TRACE(c.network + " " + c.strategy);
    const Plan plan = partition(zoo_graph(c.network, c.train), c.strategy, c.devices, c.microbatches);
    const Timeline predicted = simulate(plan, machine);
    expect_trace_matches(plan, predicted, chakra_traces(plan, predicted));
  }
}

TEST(ChakraTrace, ARingAllReduceOfDataParallelismIsOneCollectiveNodePerReplica) {
  const Plan plan = partition(zoo_graph("mlp-small", true), "data", 2);
  const ChakraTraces traces = chakra_traces(plan, simulate(plan, load_machine("h100-nvlink-8")));
  int64_t all_reduces = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCollective && op.collective == CollectiveKind::kAllReduce) ++all_reduces;
  }
  ASSERT_GT(all_reduces, 0);
  for (const auto& nodes : traces.devices) {
    int64_t collectives = 0;
    for (const Node& node : nodes) {
      if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      ++collectives;
      EXPECT_EQ(attr(node, "comm_type")->int64_val(), ChakraProtoMsg::ALL_REDUCE);
      EXPECT_EQ(attr(node, "pg_name"), nullptr) << "a collective over every device needs no group";
    }
    EXPECT_EQ(collectives, all_reduces);
  }
  EXPECT_TRUE(traces.groups.empty());
}

TEST(ChakraTrace, FilesDecodeToTheSameNodes) {
  const Plan plan = partition(zoo_graph("mlp-small", false), "tensor", 2);
  const ChakraTraces traces = chakra_traces(plan, simulate(plan, load_machine("h100-nvlink-8")));
  const auto dir = std::filesystem::path(::testing::TempDir()) / "chakra-round-trip";
  std::filesystem::remove_all(dir);
  const auto written = write_chakra_traces(traces, dir.string(), "splitscope");
  ASSERT_EQ(written.size(), 2u);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(written[static_cast<size_t>(d)], (dir / ("splitscope." + std::to_string(d) + ".et")).string());
    const auto nodes = read_chakra_trace(written[static_cast<size_t>(d)]);
    const auto& expected = traces.devices[static_cast<size_t>(d)];
    ASSERT_EQ(nodes.size(), expected.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_EQ(nodes[i].SerializeAsString(), expected[i].SerializeAsString()) << "node " << i;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ChakraTrace, AFileThatIsNotATraceIsBadInput) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "not-a-trace.et";
  std::ofstream(path) << "{\"this\": \"is json\"}\n";
  EXPECT_THROW(read_chakra_trace(path.string()), InputError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace splitscope

namespace splitscope::testing {
namespace {

TEST(PlanChakraOption, WritesOneDecodableTracePerDevice) {
  const std::string dir = fresh_temp_dir("plan-chakra");
  const CommandResult result =
      run_splitscope("plan mlp-small -s tensor -n 2 --machine h100-nvlink-8 --chakra " + dir + "/et");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("wrote 2 Chakra trace file(s)"), std::string::npos) << result.err;
  for (int d = 0; d < 2; ++d) {
    const auto nodes = read_chakra_trace(dir + "/et/splitscope." + std::to_string(d) + ".et");
    EXPECT_FALSE(nodes.empty());
  }
}

// search --chakra writes the best plan's traces: the same files as `plan --chakra` of the plan the search's
// plan file names (the same plan simulated on the same machine).
TEST(SearchChakraOption, WritesTheBestPlansTracesAsPlanWould) {
  const std::string dir = fresh_temp_dir("search-chakra");
  const CommandResult searched = run_splitscope("search mlp-small -n 4 --machine h100-nvlink-8 --out " + dir +
                                                "/best.json --chakra " + dir + "/searched");
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const auto file = nlohmann::json::parse(read_text_file(dir + "/best.json"));
  const auto& strategy = file["strategy"];
  std::string options = fmt::format("-s {} -n {}", strategy["name"].get<std::string>(), file["devices"].get<int>());
  if (strategy.contains("replicas")) options += fmt::format(" --replicas {}", strategy["replicas"].get<int>());
  if (strategy.contains("microbatches")) options += fmt::format(" -m {}", strategy["microbatches"].get<int>());
  if (strategy.contains("stage_starts") && strategy["stage_starts"].size() > 1) {
    std::string starts;
    for (const auto& start : strategy["stage_starts"]) starts += (starts.empty() ? "" : ",") + start.dump();
    options += " --stages " + starts;
  }
  const CommandResult planned =
      run_splitscope("plan mlp-small " + options + " --machine h100-nvlink-8 --chakra " + dir + "/planned");
  ASSERT_EQ(planned.exit_code, 0) << options << "\n" << planned.err;
  const int devices = file["devices"].get<int>();
  for (int d = 0; d < devices; ++d) {
    const std::string name = "/splitscope." + std::to_string(d) + ".et";
    SCOPED_TRACE(name);
    const std::string bytes = read_text_file(dir + "/searched" + name);
    EXPECT_FALSE(bytes.empty());
    EXPECT_EQ(bytes, read_text_file(dir + "/planned" + name));
  }
}

TEST(PlanChakraOption, NeedsAMachineToTimeTheNodes) {
  const std::string dir = fresh_temp_dir("plan-chakra-no-machine");
  const CommandResult result = run_splitscope("plan mlp-small -s tensor -n 2 --chakra " + dir + "/et");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--machine"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/et"));
}

}  // namespace
}  // namespace splitscope::testing

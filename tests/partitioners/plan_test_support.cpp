#include "plan_test_support.hpp"

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"

namespace splitscope::testing {

std::shared_ptr<const Graph> graph_from_text(const std::string& text) {
  return std::make_shared<const Graph>(lower(parse_model_text(text, "test.json")));
}

std::shared_ptr<const Graph> zoo_graph(const std::string& name) {
  return std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
}

std::shared_ptr<const Graph> zoo_training_graph(const std::string& name, int64_t batch) {
  Model model = load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name));
  model.batch = batch;
  return std::make_shared<const Graph>(training_graph(lower(model), Optimizer{}));
}

Plan make_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
               int microbatches) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  return make_partitioner(strategy)->partition(graph, options);
}

int count_ops(const Plan& plan, OpRole role) {
  int count = 0;
  for (const PlanOp& op : plan.ops) count += op.role == role;
  return count;
}

int count_collectives(const Plan& plan, CollectiveKind kind) {
  int count = 0;
  for (const PlanOp& op : plan.ops) count += op.role == OpRole::kCollective && op.collective == kind;
  return count;
}

}  // namespace splitscope::testing

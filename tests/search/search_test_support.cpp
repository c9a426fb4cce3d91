#include "search_test_support.hpp"

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope::testing {

std::shared_ptr<const Graph> zoo_network(const std::string& name, bool train) {
  const Graph forward = lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name)));
  if (!train) return std::make_shared<const Graph>(forward);
  return std::make_shared<const Graph>(training_graph(forward, Optimizer{}));
}

std::shared_ptr<const Graph> uneven_chain(bool train) {
  const char* kText = R"({"name": "uneven", "batch": 256, "input": [1024], "layers": [
    {"type": "dense", "units": 2048, "activation": "relu", "name": "fc0"},
    {"type": "dense", "units": 4096, "activation": "relu", "name": "fc1"},
    {"type": "dense", "units": 1024, "activation": "relu", "name": "fc2"},
    {"type": "dense", "units": 4096, "activation": "relu", "name": "fc3"},
    {"type": "dense", "units": 512, "activation": "relu", "name": "fc4"},
    {"type": "dense", "units": 4096, "activation": "relu", "name": "fc5"},
    {"type": "dense", "units": 2048, "activation": "relu", "name": "fc6"},
    {"type": "dense", "units": 1024, "activation": "relu", "name": "fc7"},
    {"type": "dense", "units": 4096, "activation": "relu", "name": "fc8"},
    {"type": "dense", "units": 10, "name": "classifier"}]})";
  const Graph forward = lower(parse_model_text(kText, "uneven.json"));
  if (!train) return std::make_shared<const Graph>(forward);
  return std::make_shared<const Graph>(training_graph(forward, Optimizer{}));
}

SearchProblem search_problem(const std::string& network, bool train, int devices, const std::string& machine) {
  return search_problem(network == "uneven" ? uneven_chain(train) : zoo_network(network, train), devices, machine);
}

SearchProblem search_problem(std::shared_ptr<const Graph> graph, int devices, const std::string& machine) {
  SearchProblem problem;
  problem.graph = std::move(graph);
  problem.devices = devices;
  problem.machine = load_machine(resolve_zoo_file(ZooShelf::kMachines, machine));
  problem.memory_limit_bytes = problem.machine.device.memory_bytes();
  problem.budget_s = 600;
  // compare's rule (strategy_choice.hpp): 4N micro-batches, no fewer than 8 rows each.
  problem.named_microbatches =
      static_cast<int>(std::min<int64_t>(4 * devices, std::max<int64_t>(1, problem.graph->batch() / 8)));
  return problem;
}

}  // namespace splitscope::testing

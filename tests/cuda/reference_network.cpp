#include "reference_network.hpp"

#include <algorithm>
#include <cmath>

#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/check.hpp"

namespace splitscope::testing {

HostTensor reference_output(const Graph& graph, uint64_t seed) { return testing_support::naive_forward(graph, seed); }

std::shared_ptr<const Graph> graph_from_text(const std::string& text) { return testing_support::graph_from_json(text); }

std::shared_ptr<const Graph> zoo_graph(const std::string& name) { return testing_support::zoo_graph(name); }

Plan make_plan(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices, int microbatches) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

double relative_error(const HostTensor& result, const HostTensor& reference) {
  SPLITSCOPE_CHECK(result.shape == reference.shape && result.data.size() == reference.data.size(),
                   "tensors of different shapes");
  double worst = 0;
  double scale = 0;
  for (size_t i = 0; i < reference.data.size(); ++i) {
    const double difference = std::abs(double(result.data[i]) - double(reference.data[i]));
    worst = std::isnan(difference) ? INFINITY : std::max(worst, difference);
    scale = std::max(scale, std::abs(double(reference.data[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace splitscope::testing

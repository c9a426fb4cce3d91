#include "prepared_run.hpp"

#include <string>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"

namespace splitscope::bench {

Graph mlp_of_width(int64_t width) {
  if (width == 8192) return lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "mlp")));
  std::string layers;
  for (int i = 0; i < 8; ++i) layers += R"({"type": "dense", "units": )" + std::to_string(width) + R"(, "activation": "relu"},)";
  const std::string json = R"({"name": "mlp-narrow", "batch": 64, "input": [)" + std::to_string(width) +
                           R"(], "layers": [)" + layers + R"({"type": "dense", "units": 1000}, {"type": "softmax"}]})";
  return lower(parse_model_text(json, "mlp-narrow"));
}

PreparedRun::PreparedRun(std::shared_ptr<const Graph> graph, const ThreadConfig& threads)
    : plan(make_partitioner("single")->partition(std::move(graph), {1, 1, nullptr})),
      buffers(plan),
      weights(*plan.graph, 1, setup_threads),
      tasks(build_plan_tasks(plan, buffers, weights)),
      scheduler({1, threads.inter_op, threads.intra_op, {Lane::kCopyIn}}) {
  fill_network_inputs(plan, 1, buffers);
}

}  // namespace splitscope::bench

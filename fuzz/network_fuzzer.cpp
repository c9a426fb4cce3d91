// Network files (docs/network-format.md): parsed, checked against the model limits and
// lowered to a graph with its totals, as `splitscope inspect` does.

#include "fuzz/fuzz_support.hpp"
#include "ir/layer_costs.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  fuzz::refusals_are_input_errors([&] {
    const Model model = parse_model_text(fuzz::as_text(data, size), "fuzz.json");
    const Graph graph = lower(model);
    int64_t sum = graph.total_params() + graph.total_flops() + static_cast<int64_t>(graph.num_nodes());
    for (const Layer& layer : model.layers) sum += layer_params(layer) + layer_flops(layer, model.batch);
    if (sum == -1) std::fprintf(stderr, "-1\n");  // keeps the work from being optimised away
  });
  return 0;
}

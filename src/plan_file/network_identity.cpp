#include "plan_file/network_identity.hpp"

#include <fmt/format.h>

namespace splitscope {

NetworkIdentity identify(const Graph& graph) {
  return {.name = graph.name(),
          .batch = graph.batch(),
          .training = graph.is_training(),
          .layers = static_cast<int64_t>(graph.model().layers.size()),
          .ops = static_cast<int64_t>(graph.num_nodes()),
          .flops = graph.total_flops(),
          .params = graph.total_params()};
}

std::vector<std::string> identity_differences(const NetworkIdentity& expected, const NetworkIdentity& actual) {
  std::vector<std::string> lines;
  if (expected.name != actual.name) {
    lines.push_back(fmt::format("network: the plan is for {}, not {}", expected.name, actual.name));
  }
  if (expected.batch != actual.batch) {
    lines.push_back(fmt::format("batch: the plan is for a batch of {}, not {} (give --batch {})", expected.batch,
                                actual.batch, expected.batch));
  }
  if (expected.training != actual.training) {
    lines.push_back(expected.training ? "training: the plan is a training step; add --train"
                                      : "training: the plan is a forward pass; drop --train");
  }
  // The fingerprint only once the above agree: a different name or batch explains it already.
  if (lines.empty()) {
    const auto field = [&](const char* what, int64_t want, int64_t have) {
      if (want != have) lines.push_back(fmt::format("{}: the plan's network has {}, this one {}", what, want, have));
    };
    field("layers", expected.layers, actual.layers);
    field("ops", expected.ops, actual.ops);
    field("flops", expected.flops, actual.flops);
    field("params", expected.params, actual.params);
  }
  return lines;
}

}  // namespace splitscope

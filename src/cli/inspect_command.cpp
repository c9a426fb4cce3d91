// `splitscope inspect MODEL [--json]`: the layer table and totals.

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/network_loading.hpp"
#include "ir/layer_costs.hpp"
#include "report/text_table.hpp"
#include "util/json_dump.hpp"
#include "util/strings.hpp"

namespace splitscope::cli {
namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
};

nlohmann::json inspect_json(const Graph& graph) {
  const Model& model = graph.model();
  nlohmann::json layers = nlohmann::json::array();
  for (const Layer& layer : model.layers) {
    layers.push_back({{"name", layer.name},
                      {"type", std::string(to_string(layer.kind))},
                      {"output_shape", layer.output_shape},
                      {"params", layer_params(layer)},
                      {"flops", layer_flops(layer, model.batch)}});
  }
  return {{"name", model.name},
          {"batch", model.batch},
          {"input", model.input},
          {"params", graph.total_params()},
          {"flops", graph.total_flops()},
          {"graph", {{"ops", graph.num_nodes()}, {"edges", graph.num_edges()}}},
          {"layers", layers}};
}

std::string inspect_text(const Graph& graph) {
  const Model& model = graph.model();
  using Align = TextTable::Align;
  TextTable table({"layer", "type", "output shape", "params", "FLOPs"},
                  {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight});
  table.add_row({"input", "", to_string(model.input), "", ""});
  for (const Layer& layer : model.layers) {
    std::string type(to_string(layer.kind));
    if (is_recurrent(layer.kind) && layer.stacked > 1) type += fmt::format(" x{}", layer.stacked);
    if (layer.kind == LayerKind::kConv2d && layer.groups > 1) type += fmt::format(" g{}", layer.groups);
    table.add_row({layer.name, type, to_string(layer.output_shape), si_count(double(layer_params(layer))),
                   si_count(double(layer_flops(layer, model.batch)))});
  }
  table.add_rule();
  table.add_row({"total", "", "", si_count(double(graph.total_params())),
                 si_count(double(graph.total_flops()))});
  return fmt::format("{} ({}), batch {}, input {}\n\n{}\n{} graph ops, {} edges; {} of weights; FLOPs are "
                     "forward, for the whole batch.\n",
                     printable(model.name), printable(model.source), model.batch, to_string(model.input),
                     table.render(),
                     graph.num_nodes(), graph.num_edges(),
                     binary_bytes(double(graph.total_params()) * sizeof(float)));
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand("inspect", "Show a network's layers: output shapes, parameters, FLOPs");
  sub->add_option("MODEL", options->model, "network file, or a name from models/networks")->required();
  sub->add_flag("--json", options->json, "print JSON (FORMATS.md) instead of a table");
  return {sub, [options](const std::vector<std::string>&) {
            const auto graph = load_network(options->model);
            if (options->json) {
              std::cout << dump_json(inspect_json(*graph), 2) << "\n";
            } else {
              std::cout << inspect_text(*graph);
            }
            return 0;
          }};
}

}  // namespace splitscope::cli

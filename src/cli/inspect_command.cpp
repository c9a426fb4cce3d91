// `splitscope inspect MODEL [--json]`: the layer table and totals.

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/network_loading.hpp"
#include "ir/layer_costs.hpp"
#include "report/text_table.hpp"
#include "ir/zoo.hpp"
#include "splitscope_config.h"
#include "util/json_dump.hpp"
#include "util/json_fields.hpp"
#include "util/strings.hpp"

#if SPLITSCOPE_HAVE_ONNX
#include "onnx/onnx_import.hpp"
#endif

namespace splitscope::cli {
namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
  bool network_json = false;
  std::optional<int64_t> batch;
};

/// `--network-json`: the network file MODEL is, as splitscope reads it; for
/// an .onnx file the one it maps to (docs/onnx.md), to edit and pass back.
nlohmann::json network_file_json(const InspectOptions& options) {
  const std::string path = resolve_zoo_file(ZooShelf::kNetworks, options.model);
  if (is_onnx_path(path)) {
#if SPLITSCOPE_HAVE_ONNX
    return onnx_network_document(path, options.batch);
#else
    load_onnx_network(path, options.batch);  // refuses, exit 3
#endif
  }
  load_network(options.model, options.batch);  // refuses a bad file with the parser's message
  nlohmann::json network = parse_json_text(read_input_file(path), path);
  if (options.batch) network["batch"] = *options.batch;
  return network;
}

nlohmann::json inspect_json(const Graph& graph) {
  const Model& model = graph.model();
  nlohmann::json layers = nlohmann::json::array();
  for (const Layer& layer : model.layers) {
    layers.push_back({{"name", layer.name},
                      {"type", std::string(layer_type(layer.kind))},
                      {"inputs", layer.inputs},
                      {"output_shape", layer.output_shape},
                      {"params", layer_params(layer)},
                      {"flops", layer_flops(layer, model.batch)}});
  }
  nlohmann::json inputs = nlohmann::json::object();
  for (const NetworkInput& input : model.inputs) inputs[input.name] = input.shape;
  return {{"name", model.name},
          {"batch", model.batch},
          {"input", model.input},
          {"inputs", inputs},
          {"params", graph.total_params()},
          {"flops", graph.total_flops()},
          {"graph", {{"ops", graph.num_nodes()}, {"edges", graph.num_edges()}}},
          {"layers", layers}};
}

/// True when some layer reads something other than the layer listed before it:
/// the network is a graph, and the table shows what each layer reads.
bool is_graph(const Model& model) {
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const std::string previous = i == 0 ? model.inputs.front().name : model.layers[i - 1].name;
    if (model.layers[i].inputs != std::vector<std::string>{previous}) return true;
  }
  return model.inputs.size() > 1;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// What a layer reads, as the table shows it: every name while they fit in
/// kReadsWidth characters, else the first ones and a count of the rest. The
/// table pads every row to its widest cell, so a concat of 10,000 branches
/// spelled out whole made every row 90 KB wide (690 MB of text); --json
/// lists them all.
constexpr size_t kReadsWidth = 60;

std::string reads_cell(const std::vector<std::string>& names) {
  std::string all = joined(names);
  if (all.size() <= kReadsWidth) return all;
  std::string text;
  size_t shown = 0;
  for (; shown < names.size(); ++shown) {
    const std::string next = (shown == 0 ? "" : ", ") + names[shown];
    if (text.size() + next.size() > kReadsWidth - 20) break;  // room for ", ... 99999 more"
    text += next;
  }
  return fmt::format("{}{}... {} more", text, shown == 0 ? "" : ", ", names.size() - shown);
}

std::string inspect_text(const Graph& graph) {
  const Model& model = graph.model();
  using Align = TextTable::Align;
  const bool graph_columns = is_graph(model);
  TextTable table = graph_columns
                        ? TextTable({"layer", "type", "reads", "output shape", "params", "FLOPs"},
                                    {Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight,
                                     Align::kRight})
                        : TextTable({"layer", "type", "output shape", "params", "FLOPs"},
                                    {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight});
  const auto add_row = [&](const std::string& name, const std::string& type, const std::string& reads,
                           const std::string& shape, const std::string& params, const std::string& flops) {
    if (graph_columns) {
      table.add_row({name, type, reads, shape, params, flops});
    } else {
      table.add_row({name, type, shape, params, flops});
    }
  };
  for (const NetworkInput& input : model.inputs) add_row(input.name, "", "", to_string(input.shape), "", "");
  for (const Layer& layer : model.layers) {
    std::string type(layer_type(layer.kind));
    if (is_recurrent(layer.kind) && layer.stacked > 1) type += fmt::format(" x{}", layer.stacked);
    if (layer.kind == OpKind::kConv2d && layer.attrs.groups > 1) type += fmt::format(" g{}", layer.attrs.groups);
    add_row(layer.name, type, reads_cell(layer.inputs), to_string(layer.output_shape),
            si_count(double(layer_params(layer))), si_count(double(layer_flops(layer, model.batch))));
  }
  table.add_rule();
  add_row("total", "", "", "", si_count(double(graph.total_params())), si_count(double(graph.total_flops())));
  std::string inputs;
  for (const NetworkInput& input : model.inputs) {
    inputs += (inputs.empty() ? "" : ", ") + (model.inputs.size() > 1 ? input.name + " " : "") + to_string(input.shape);
  }
  return fmt::format("{} ({}), batch {}, input{} {}\n\n{}\n{} graph ops, {} edges; {} of weights; FLOPs are "
                     "forward, for the whole batch.\n",
                     printable(model.name), printable(model.source), model.batch, model.inputs.size() > 1 ? "s" : "",
                     printable(inputs), table.render(),
                     graph.num_nodes(), graph.num_edges(),
                     binary_bytes(double(graph.total_params()) * sizeof(float)));
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand("inspect", "Show a network's layers: output shapes, parameters, FLOPs");
  sub->add_option("MODEL", options->model, "network file, or a name from models/networks")->required();
  sub->add_flag("--json", options->json, "print JSON (docs/reports.md) instead of a table");
  sub->add_flag("--network-json", options->network_json,
                "print the network file MODEL is (for an .onnx file, the one it maps to: docs/onnx.md)")
      ->excludes("--json");
  sub->add_option("--batch", options->batch, "samples in one run (overrides the file's; fills an ONNX file's dynamic batch)");
  return {sub, [options](const std::vector<std::string>&) {
            if (options->network_json) {
              std::cout << dump_json(network_file_json(*options), 2) << "\n";
              return 0;
            }
            const auto graph = load_network(options->model, options->batch);
            if (options->json) {
              std::cout << dump_json(inspect_json(*graph), 2) << "\n";
            } else {
              std::cout << inspect_text(*graph);
            }
            return 0;
          }};
}

}  // namespace splitscope::cli

#include "onnx/onnx_import.hpp"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <optional>
#include <memory>
#include <unordered_map>

#include "ir/model_parser.hpp"
#include "onnx/onnx_attributes.hpp"
#include "onnx/onnx_file.hpp"
#include "onnx/onnx_graph_inputs.hpp"
#include "onnx/onnx_import_state.hpp"
#include "onnx/onnx_node_rules.hpp"
#include "onnx/onnx_patterns.hpp"
#include "onnx/onnx_weights.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

std::vector<int64_t> value_info_dims(const ::onnx::ValueInfoProto& info) {
  std::vector<int64_t> dims;
  for (const auto& dim : info.type().tensor_type().shape().dim()) {
    dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  return dims;
}

/// Each node against its op's schema and each initializer against its dims,
/// with ONNX's checker, first: ONNX 1.12's shape inference trusts the schema
/// and crashed on a GRU given six inputs. (Not onnx.checker.check_model as a
/// whole: it also requires a shape on every graph output, which exporters
/// other than PyTorch leave out.) The window attributes inference also
/// trusts (a stride of 0 divides by zero in its Conv and pool inference) and
/// Transpose's perm are checked here.
void check_model_structure(const ::onnx::ModelProto& model, const OnnxImportState& state) {
  ::onnx::checker::CheckerContext context;
  context.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opsets;
  for (const auto& opset : model.opset_import()) opsets[opset.domain()] = static_cast<int>(opset.version());
  context.set_opset_imports(opsets);
  context.set_model_dir(std::filesystem::path(state.path).parent_path().string());
  ::onnx::checker::LexicalScopeContext scope;
  const auto& graph = model.graph();
  for (const auto& input : graph.input()) scope.add(input.name());
  for (const auto& tensor : graph.initializer()) scope.add(tensor.name());
  // A graph input whose tensor has no element type: ONNX's shape inference of
  // the op reading it dereferences the type it never got (SIGSEGV in 1.12;
  // fuzz/regressions/onnx/input-without-element-type.onnx).
  for (const auto& input : graph.input()) {
    const auto& type = input.type();
    if (type.value_case() == ::onnx::TypeProto::VALUE_NOT_SET ||
        (type.has_tensor_type() && type.tensor_type().elem_type() == ::onnx::TensorProto::UNDEFINED)) {
      throw InputError(state.path, "input '" + onnx_printable(input.name()) + "'",
                       "has no element type (float, int64, ...): the file is damaged; export the model again");
    }
  }
  std::string where;
  try {
    for (const auto& tensor : graph.initializer()) {
      where = "initializer '" + onnx_printable(tensor.name()) + "'";
      ::onnx::checker::check_tensor(tensor, context);
    }
    for (const auto& node : graph.node()) {
      where = onnx_node_label(node);
      const auto version = opsets.find(node.domain());
      // An op without a schema is refused below, before shape inference.
      if (version != opsets.end() &&
          ::onnx::OpSchemaRegistry::Schema(node.op_type(), version->second, node.domain()) != nullptr) {
        ::onnx::checker::check_node(node, context, scope);
      }
      for (const std::string& output : node.output()) scope.add(output);
    }
  } catch (const std::exception& error) {
    std::string what = error.what();  // several lines: one line of message here
    for (char& c : what) {
      if (c == '\n') c = ' ';
    }
    while (what.find("  ") != std::string::npos) what.replace(what.find("  "), 2, " ");
    throw InputError(state.path, where, "is not valid ONNX (onnx.checker: " + onnx_printable(what) +
                                            "); export the model again");
  }
  // An op ONNX has no definition of at the file's opset: its outputs get no type, and ONNX 1.12's shape
  // inference of the ops reading them dereferences the missing type (a GRU after a misspelt Transpose
  // crashed it: found by fuzz-smoke). Refused by name here, before inference.
  for (const auto& node : model.graph().node()) {
    const std::string key = node.domain() == "ai.onnx" ? "" : node.domain();  // the default domain's two names
    auto version = opsets.find(key);
    if (version == opsets.end() && key.empty()) version = opsets.find("ai.onnx");
    if (version == opsets.end() || ::onnx::OpSchemaRegistry::Schema(node.op_type(), version->second, key) == nullptr) {
      const std::string domain = node.domain().empty() ? "ai.onnx" : onnx_printable(node.domain());
      throw InputError(state.path, onnx_node_label(node),
                       "op type " + onnx_printable(node.op_type()) + " has no definition in domain " + domain +
                           (version == opsets.end() ? " (the file imports no opset of it)"
                                                    : " at opset " + std::to_string(version->second)) +
                           "; splitscope maps " + onnx_covered_op_list() + " (docs/onnx.md)");
    }
  }
  // A convolution or pool whose window attributes or filters disagree with each other on the spatial axes:
  // ONNX 1.12's convPoolShapeInference indexes past them (SIGSEGV, found by fuzz-smoke). Checked where the
  // filters are stored and the input is the graph's, the two ranks known before inference.
  std::map<std::string, int> known_ranks;
  for (const auto& tensor : model.graph().initializer()) known_ranks[tensor.name()] = tensor.dims_size();
  for (const auto& input : model.graph().input()) {
    if (input.type().tensor_type().has_shape()) known_ranks[input.name()] = input.type().tensor_type().shape().dim_size();
  }
  static const std::set<std::string> windowed{"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"};
  for (const auto& node : model.graph().node()) {
    if (!windowed.count(node.op_type())) continue;
    const std::string where = onnx_node_label(node);
    std::optional<int> spatial;  // the spatial axes the first known rank says
    const auto agree = [&](int axes, const std::string& what) {
      if (!spatial) spatial = axes;
      if (axes != *spatial) {
        throw InputError(state.path, where, what + " gives " + std::to_string(axes) + " spatial axes where another of " +
                                                "its inputs or attributes gives " + std::to_string(*spatial) +
                                                "; export the model again");
      }
    };
    for (int slot = 0; slot < std::min(node.input_size(), 2); ++slot) {
      const auto rank = known_ranks.find(node.input(slot));
      if (rank != known_ranks.end()) agree(rank->second - 2, slot == 0 ? "its input's rank" : "its filters' rank");
    }
    for (const char* name : {"kernel_shape", "strides", "dilations"}) {
      if (const auto* attribute = onnx_attribute(node, name)) agree(attribute->ints_size(), name);
    }
    if (const auto* pads = onnx_attribute(node, "pads")) agree(pads->ints_size() / 2, "pads");
  }
  for (const auto& node : model.graph().node()) {
    if (const auto* perm = onnx_attribute(node, "perm")) {
      std::vector<int64_t> sorted(perm->ints().begin(), perm->ints().end());
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i] != static_cast<int64_t>(i)) {
          throw InputError(state.path, onnx_node_label(node),
                           "perm is not a permutation of the axes 0 to " + std::to_string(sorted.size() - 1));
        }
      }
    }
    for (const auto& attribute : node.attribute()) {
      const bool positive = attribute.name() == "strides" || attribute.name() == "kernel_shape" ||
                            attribute.name() == "dilations";
      if (!positive && attribute.name() != "pads") continue;
      for (int64_t value : attribute.ints()) {
        if (value < 0 || (positive && value == 0)) {
          throw InputError(state.path, onnx_node_label(node),
                           attribute.name() + " holds " + std::to_string(value) + "; sizes and strides must be " +
                               (positive ? "positive" : "zero or more"));
        }
      }
    }
  }
}

void run_onnx_inference(::onnx::ModelProto& model, const OnnxImportState& state, bool data_propagation) {
  try {
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(false, 0, data_propagation));
  } catch (const std::exception& error) {
    throw InputError(state.path, "", std::string("ONNX shape inference failed: ") + error.what() +
                                         "; check the file with onnx.checker.check_model and export it again");
  }
}

/// libonnx 1.12 propagates a Shape or Size node's value by reading its input's
/// type unchecked, and crashes where the nodes before left that input
/// untyped (fuzz/regressions/onnx/shape-of-untyped-value.onnx: a Squeeze of
/// an axis that is not 1). A first inference without data propagation, which
/// does not crash there, finds such nodes, and they are refused before the
/// second; the first's results are dropped, so the second infers as before.
void refuse_shape_of_untyped(::onnx::ModelProto& model, const OnnxImportState& state) {
  auto& infos = *model.mutable_graph()->mutable_value_info();
  const int given = infos.size();
  run_onnx_inference(model, state, false);
  std::set<std::string> shaped;
  for (const auto& tensor : model.graph().initializer()) shaped.insert(tensor.name());
  for (const auto* list : {&model.graph().input(), &model.graph().value_info()}) {
    for (const auto& info : *list) {
      if (info.type().has_tensor_type() && info.type().tensor_type().has_shape()) shaped.insert(info.name());
    }
  }
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "Shape" && node.op_type() != "Size") continue;
    if (node.input_size() < 1 || shaped.count(node.input(0))) continue;
    throw InputError(state.path, onnx_node_label(node),
                     "reads '" + onnx_printable(node.input(0)) + "', whose shape ONNX's shape inference cannot "
                     "infer from the nodes before it (a node there does not fit its inputs); check the file with "
                     "onnx.checker.check_model(model, full_check=True) and export it again");
  }
  infos.DeleteSubrange(given, infos.size() - given);
}

/// ONNX's shape inference, with data propagation so that a Reshape's target
/// computed from Shape nodes is known too.
void infer_shapes(::onnx::ModelProto& model, OnnxImportState& state) {
  refuse_shape_of_untyped(model, state);
  run_onnx_inference(model, state, true);
  const auto& graph = model.graph();
  for (const auto& info : graph.input()) state.inferred[info.name()] = value_info_dims(info);
  for (const auto& info : graph.value_info()) {
    if (info.type().tensor_type().has_shape()) state.inferred[info.name()] = value_info_dims(info);
  }
  for (const auto& info : graph.output()) {
    if (info.type().tensor_type().has_shape()) state.inferred[info.name()] = value_info_dims(info);
  }
}

/// Every input a node reads must come from somewhere before it: a file cut
/// short at a field boundary still parses, and is caught here.
void check_node_order(const ::onnx::GraphProto& graph, const OnnxImportState& state) {
  std::set<std::string> known;
  for (const auto& tensor : graph.initializer()) known.insert(tensor.name());
  for (const auto& input : graph.input()) known.insert(input.name());
  for (const auto& node : graph.node()) {
    for (const std::string& name : node.input()) {
      if (!name.empty() && !known.count(name)) {
        throw InputError(state.path, onnx_node_label(node),
                         "reads '" + name + "', which no earlier node, input or initializer gives: the graph is out "
                         "of order, truncated or damaged; export it again");
      }
    }
    for (const std::string& name : node.output()) known.insert(name);
  }
}

OnnxFoldInputs fold_inputs(const OnnxImportState& state) {
  return {[&state](const std::string& name) -> const OnnxConstant* {
            const auto it = state.constants.find(name);
            return it == state.constants.end() ? nullptr : &it->second;
          },
          [&state](const std::string& name) -> std::optional<std::vector<int64_t>> {
            if (const auto value = state.values.find(name); value != state.values.end()) return value->second.dims;
            if (const auto constant = state.constants.find(name); constant != state.constants.end()) {
              return constant->second.dims;
            }
            if (const auto inferred = state.inferred.find(name); inferred != state.inferred.end()) return inferred->second;
            return std::nullopt;
          }};
}

/// The graph's one output must be a layer's: splitscope networks have one output.
void check_output(const ::onnx::GraphProto& graph, const OnnxImportState& state) {
  if (graph.output_size() != 1) {
    std::string names;
    for (const auto& output : graph.output()) names += (names.empty() ? "" : ", ") + output.name();
    throw InputError(state.path, "graph.output", "the graph has " + std::to_string(graph.output_size()) +
                                                     " outputs (" + names + "); a splitscope network has one: "
                                                     "export the model with one output");
  }
  const std::string& name = graph.output(0).name();
  const auto it = state.values.find(name);
  if (it == state.values.end() || state.network.type_of(it->second.layer).empty()) {
    throw InputError(state.path, "graph.output", "the output '" + name + "' is not computed by any layer");
  }
}

/// The file read, mapped and checked: its network file and where each weighted layer's tensors are.
struct OnnxImport {
  nlohmann::json document;
  std::shared_ptr<const ::onnx::ModelProto> model;
  std::map<std::string, OnnxLayerWeights> weights;
  std::vector<std::string> pattern_notes;
};

OnnxImport import_onnx(const std::string& path, std::optional<int64_t> batch) {
  if (batch && *batch <= 0) throw InputError("--batch", "", "must be positive, got " + std::to_string(*batch));
  ::onnx::ModelProto model = read_onnx_file(path);
  OnnxImportState state;
  state.path = path;
  state.opset = onnx_default_opset(model);
  const OnnxBatch inputs = resolve_onnx_batch(model, path, batch);
  state.batch = inputs.size;
  check_node_order(model.graph(), state);
  check_model_structure(model, state);
  infer_shapes(model, state);
  const auto& graph = model.graph();
  for (const auto& tensor : graph.initializer()) state.constants[tensor.name()] = onnx_constant_from_tensor(tensor);
  for (const OnnxGraphInput& input : inputs.inputs) {
    std::vector<int64_t> sample = input.dims;
    sample.erase(sample.begin() + static_cast<std::ptrdiff_t>(input.batch_axis));
    const std::string name = state.network.add_input(input.name, sample);
    state.values[input.name] = OnnxValue{name, input.dims, input.batch_axis, false};
  }
  for (const auto& node : graph.node()) {
    for (const std::string& name : node.input()) ++state.consumers[name];
  }
  for (const auto& output : graph.output()) ++state.consumers[output.name()];

  // Shape arithmetic first (it reads constants and inferred shapes only), so that the patterns see every
  // constant; then each node is a layer, part of a pattern (one layer at its last node), or refused.
  const OnnxFoldInputs folding = fold_inputs(state);
  std::vector<bool> folded(static_cast<size_t>(graph.node_size()), false);
  for (int i = 0; i < graph.node_size(); ++i) {
    if (auto constant = fold_onnx_node(graph.node(i), folding)) {
      state.constants[onnx_node_output(graph.node(i), 0)] = std::move(*constant);
      folded[static_cast<size_t>(i)] = true;
    }
  }
  const std::vector<OnnxPattern> patterns = find_onnx_patterns(
      graph, folding.constant,
      [&state](const std::string& name) {
        const auto it = state.inferred.find(name);
        return it == state.inferred.end() ? std::vector<int64_t>{} : it->second;
      },
      state.opset);
  std::map<int, const OnnxPattern*> pattern_of;  // node index -> the pattern it is part of
  for (const OnnxPattern& pattern : patterns) {
    for (int index : pattern.nodes) pattern_of[index] = &pattern;
  }
  OnnxImport out;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (folded[static_cast<size_t>(i)]) continue;
    const auto pattern = pattern_of.find(i);
    if (pattern == pattern_of.end()) {
      map_onnx_node(state, graph.node(i));
    } else if (i == pattern->second->nodes.back()) {
      map_onnx_pattern(state, *pattern->second);
      out.pattern_notes.push_back(pattern->second->description());
    }
  }
  check_output(graph, state);
  std::string description = "imported from " + std::filesystem::path(path).filename().string() + " (ONNX opset " +
                            std::to_string(state.opset);
  if (!model.producer_name().empty()) {
    description += ", written by " + onnx_printable(model.producer_name() + " " + model.producer_version());
  }
  description += ")";
  out.document = state.network.document(onnx_printable(std::filesystem::path(path).stem().string()),
                                        batch.value_or(state.batch), description);
  out.weights = std::move(state.weights);
  out.model = std::make_shared<const ::onnx::ModelProto>(std::move(model));
  return out;
}

}  // namespace

nlohmann::json onnx_network_document(const std::string& path, std::optional<int64_t> batch) {
  return import_onnx(path, batch).document;
}

OnnxModel import_onnx_model(const std::string& path, std::optional<int64_t> batch) {
  OnnxImport imported = import_onnx(path, batch);
  OnnxModel out{parse_model_text(imported.document.dump(), path), "", {}};
  out.weights_note = onnx_weights_problem(*imported.model, imported.weights);
  out.pattern_notes = std::move(imported.pattern_notes);
  if (out.weights_note.empty()) {
    out.model.weights = std::make_shared<const OnnxWeights>(std::move(imported.model), std::move(imported.weights));
  }
  return out;
}

Model load_onnx_model(const std::string& path, std::optional<int64_t> batch) {
  return import_onnx_model(path, batch).model;
}

}  // namespace splitscope

#include "onnx/onnx_patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "onnx/onnx_attributes.hpp"

namespace splitscope {
namespace onnx_pattern_matching {

using ::onnx::NodeProto;
using Dims = std::vector<int64_t>;

/// Who writes and who reads each tensor, and the constants and shapes known.
class PatternGraph {
 public:
  PatternGraph(const ::onnx::GraphProto& graph, const std::function<const OnnxConstant*(const std::string&)>& constant,
               const std::function<Dims(const std::string&)>& dims)
      : graph_(graph), constant_(constant), dims_(dims) {
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const std::string& out : graph.node(i).output()) producer_[out] = i;
      for (const std::string& in : graph.node(i).input()) readers_[in].push_back(i);
    }
    for (const auto& output : graph.output()) graph_outputs_.insert(output.name());
  }

  const NodeProto& node(int index) const { return graph_.node(index); }

  /// The node of `op` type that writes `tensor` (and is not folded to a constant), or -1.
  int producer(const std::string& tensor, const std::string& op) const {
    const auto it = producer_.find(tensor);
    if (it == producer_.end() || constant_(tensor) != nullptr) return -1;
    return graph_.node(it->second).op_type() == op ? it->second : -1;
  }

  /// The one node reading `tensor`, when it is of type `op`, or -1.
  int only_reader(const std::string& tensor, const std::string& op) const {
    const auto it = readers_.find(tensor);
    if (it == readers_.end() || it->second.size() != 1 || graph_outputs_.count(tensor)) return -1;
    return graph_.node(it->second[0]).op_type() == op ? it->second[0] : -1;
  }

  const OnnxConstant* constant(const std::string& tensor) const { return constant_(tensor); }
  Dims dims(const std::string& tensor) const { return dims_(tensor); }

  /// One known number (a scalar or a one-element tensor), or nullopt.
  std::optional<double> scalar(const std::string& tensor) const {
    const OnnxConstant* c = constant_(tensor);
    if (c == nullptr || !c->has_values || c->values.size() != 1) return std::nullopt;
    return c->values[0];
  }

  /// Every tensor a node of the group writes, but the output, is read inside the group only.
  bool closed(const std::vector<int>& group, const std::string& output) const {
    const std::set<int> members(group.begin(), group.end());
    for (int index : group) {
      for (const std::string& out : graph_.node(index).output()) {
        if (out.empty() || out == output) continue;
        if (graph_outputs_.count(out)) return false;
        const auto it = readers_.find(out);
        if (it == readers_.end()) continue;
        for (int reader : it->second) {
          if (!members.count(reader)) return false;
        }
      }
    }
    return true;
  }

 private:
  const ::onnx::GraphProto& graph_;
  const std::function<const OnnxConstant*(const std::string&)>& constant_;
  const std::function<Dims(const std::string&)>& dims_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> readers_;
  std::set<std::string> graph_outputs_;
};

/// The other input of a two-input node than `tensor`, or "" when `tensor` is not one of them.
std::string other_input(const NodeProto& node, const std::string& tensor) {
  if (node.input_size() != 2) return "";
  if (node.input(0) == tensor) return node.input(1);
  if (node.input(1) == tensor) return node.input(0);
  return "";
}

/// The input of a two-input node that is not a known constant, "" when not exactly one is.
std::string computed_input(const PatternGraph& g, const NodeProto& node) {
  if (node.input_size() != 2) return "";
  const bool first = g.constant(node.input(0)) != nullptr;
  const bool second = g.constant(node.input(1)) != nullptr;
  if (first == second) return "";
  return first ? node.input(1) : node.input(0);
}

bool near(double value, double expected, double tolerance) { return std::abs(value - expected) <= tolerance * std::abs(expected); }

/// The module path the group's nodes share ("/blocks.0/ln_1/ReduceMean" -> "blocks.0/ln_1"), then `kind`.
std::string common_name(const PatternGraph& g, const std::vector<int>& group, const std::string& kind) {
  std::string prefix = g.node(group.front()).name();
  for (int index : group) {
    const std::string& name = g.node(index).name();
    size_t same = 0;
    while (same < prefix.size() && same < name.size() && prefix[same] == name[same]) ++same;
    prefix.resize(same);
  }
  prefix.resize(prefix.rfind('/') == std::string::npos ? 0 : prefix.rfind('/'));
  while (!prefix.empty() && prefix.front() == '/') prefix.erase(prefix.begin());
  return prefix.empty() ? kind : prefix + "/" + kind;
}

/// ReduceMean over the last axis of `input`, keeping it (the attribute form, opsets below 18).
bool mean_over_last_axis(const PatternGraph& g, const NodeProto& node, const std::string& input) {
  if (node.input_size() != 1 || node.input(0) != input || onnx_int_attribute(node, "keepdims", 1) != 1) return false;
  const auto axes = onnx_ints_attribute(node, "axes");
  const auto rank = static_cast<int64_t>(g.dims(input).size());
  return axes && axes->size() == 1 && rank > 0 && ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
}

/// y = (x - mean) / sqrt(mean((x - mean)^2) + eps) [* gamma] [+ beta], anchored at the Div.
std::optional<OnnxPattern> match_layer_norm(const PatternGraph& g, int div_index) {
  const NodeProto& div = g.node(div_index);
  if (div.input_size() != 2) return std::nullopt;
  const int sub = g.producer(div.input(0), "Sub");
  const int sqrt = g.producer(div.input(1), "Sqrt");
  if (sub < 0 || sqrt < 0 || g.node(sub).input_size() != 2) return std::nullopt;
  const std::string x = g.node(sub).input(0);
  const std::string centred = div.input(0);
  const int mean = g.producer(g.node(sub).input(1), "ReduceMean");
  if (mean < 0 || !mean_over_last_axis(g, g.node(mean), x)) return std::nullopt;
  const int add_eps = g.producer(g.node(sqrt).input(0), "Add");
  if (add_eps < 0) return std::nullopt;
  const std::string variance = computed_input(g, g.node(add_eps));
  if (variance.empty()) return std::nullopt;
  const auto epsilon = g.scalar(other_input(g.node(add_eps), variance));
  const int mean_square = g.producer(variance, "ReduceMean");
  if (!epsilon || mean_square < 0) return std::nullopt;
  const int pow = g.producer(g.node(mean_square).input(0), "Pow");
  if (pow < 0 || !mean_over_last_axis(g, g.node(mean_square), g.node(pow).output(0))) return std::nullopt;
  if (g.node(pow).input_size() != 2 || g.node(pow).input(0) != centred || g.scalar(g.node(pow).input(1)) != 2.0) {
    return std::nullopt;
  }
  OnnxPattern p;
  p.kind = OnnxPattern::Kind::kLayerNorm;
  p.nodes = {mean, sub, pow, mean_square, add_eps, sqrt, div_index};
  p.input = x;
  p.output = div.output(0);
  p.epsilon = *epsilon;
  const Dims shape = g.dims(x);
  p.features = shape.empty() ? 0 : shape.back();
  // The gain and shift: a Mul and an Add of one constant value per feature.
  const auto per_feature = [&](const std::string& tensor) {
    const OnnxConstant* c = g.constant(tensor);
    return c != nullptr && c->element_count() == p.features && c->dims.size() == 1;
  };
  const int mul = g.only_reader(p.output, "Mul");
  if (mul >= 0 && per_feature(other_input(g.node(mul), p.output))) {
    p.gamma = other_input(g.node(mul), p.output);
    p.nodes.push_back(mul);
    p.output = g.node(mul).output(0);
  }
  const int add = g.only_reader(p.output, "Add");
  if (add >= 0 && per_feature(other_input(g.node(add), p.output))) {
    p.beta = other_input(g.node(add), p.output);
    p.nodes.push_back(add);
    p.output = g.node(add).output(0);
  }
  std::sort(p.nodes.begin(), p.nodes.end());
  if (!g.closed(p.nodes, p.output)) return std::nullopt;
  p.name = common_name(g, p.nodes, "LayerNorm");
  return p;
}

/// x * 0.5 * (1 + erf(x / sqrt(2))), anchored at the Erf, in PyTorch's order or with the half first.
std::optional<OnnxPattern> match_gelu(const PatternGraph& g, int erf_index) {
  const NodeProto& erf = g.node(erf_index);
  const std::string scaled = erf.input(0);
  int pre = g.producer(scaled, "Div");
  std::string x;
  if (pre >= 0) {
    x = computed_input(g, g.node(pre));
    if (x.empty() || g.node(pre).input(0) != x || !g.scalar(g.node(pre).input(1)) ||
        !near(*g.scalar(g.node(pre).input(1)), std::sqrt(2.0), 1e-6)) {
      return std::nullopt;
    }
  } else if ((pre = g.producer(scaled, "Mul")) >= 0) {
    x = computed_input(g, g.node(pre));
    if (x.empty() || !g.scalar(other_input(g.node(pre), x)) || !near(*g.scalar(other_input(g.node(pre), x)), std::sqrt(0.5), 1e-6)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  const int one = g.only_reader(erf.output(0), "Add");
  if (one < 0 || g.scalar(other_input(g.node(one), erf.output(0))) != 1.0) return std::nullopt;
  const std::string bracket = g.node(one).output(0);
  const int join = g.only_reader(bracket, "Mul");
  if (join < 0) return std::nullopt;
  const std::string partner = other_input(g.node(join), bracket);
  OnnxPattern p;
  p.kind = OnnxPattern::Kind::kGelu;
  p.input = x;
  if (partner == x) {
    // (x * (1 + erf)) * 0.5
    const int half = g.only_reader(g.node(join).output(0), "Mul");
    if (half < 0 || g.scalar(other_input(g.node(half), g.node(join).output(0))) != 0.5) return std::nullopt;
    p.nodes = {pre, erf_index, one, join, half};
    p.output = g.node(half).output(0);
  } else {
    // (x * 0.5) * (1 + erf)
    const int half = g.producer(partner, "Mul");
    if (half < 0 || other_input(g.node(half), x).empty() || g.scalar(other_input(g.node(half), x)) != 0.5) {
      return std::nullopt;
    }
    p.nodes = {half, pre, erf_index, one, join};
    p.output = g.node(join).output(0);
  }
  std::sort(p.nodes.begin(), p.nodes.end());
  if (!g.closed(p.nodes, p.output)) return std::nullopt;
  p.name = common_name(g, p.nodes, "Gelu");
  return p;
}

/// A tensor [batch, positions, heads·d] viewed as [batch, heads, positions, d]: Transpose(perm 0, 2, 1, 3) of a
/// Reshape to [batch, positions, heads, d]; the Reshape's input, or "".
std::string heads_view(const PatternGraph& g, const std::string& tensor, const Dims& perm, std::vector<int>& nodes,
                       Dims& head_dims) {
  const int transpose = g.producer(tensor, "Transpose");
  if (transpose < 0 || onnx_ints_attribute(g.node(transpose), "perm") != std::optional<Dims>(perm)) return "";
  const int reshape = g.producer(g.node(transpose).input(0), "Reshape");
  if (reshape < 0) return "";
  const Dims dims = g.dims(g.node(reshape).output(0));
  if (dims.size() != 4) return "";
  nodes.push_back(transpose);
  nodes.push_back(reshape);
  head_dims = dims;
  return g.node(reshape).input(0);
}

/// The keys transposed for q @ k^T: Transpose(0, 2, 3, 1) of the heads' Reshape, or Transpose(0, 1, 3, 2) of the heads' view.
std::string keys_view(const PatternGraph& g, const std::string& tensor, std::vector<int>& nodes, Dims& head_dims) {
  const std::string direct = heads_view(g, tensor, {0, 2, 3, 1}, nodes, head_dims);
  if (!direct.empty()) return direct;
  const int outer = g.producer(tensor, "Transpose");
  if (outer < 0 || onnx_ints_attribute(g.node(outer), "perm") != std::optional<Dims>(Dims{0, 1, 3, 2})) return "";
  const std::string inner = heads_view(g, g.node(outer).input(0), {0, 2, 1, 3}, nodes, head_dims);
  if (!inner.empty()) nodes.push_back(outer);
  return inner;
}

/// Whether a [T, T] mask (as a Where's condition: true where masked; as an Add: 0 or a large negative number)
/// hides exactly the positions after each query's.
bool is_causal(const OnnxConstant& mask, int64_t positions, bool condition) {
  if (!mask.has_values || mask.element_count() != positions * positions) return false;
  for (int64_t i = 0; i < positions; ++i) {
    for (int64_t j = 0; j < positions; ++j) {
      const double m = mask.values[static_cast<size_t>(i * positions + j)];
      const bool hidden = condition ? m != 0 : m <= -1e4;
      if (hidden != (j > i) || (!condition && !hidden && m != 0)) return false;
    }
  }
  return true;
}

/// x @ W (+ b): a MatMul of a computed tensor by a constant matrix, and the Add of a constant after it.
struct Projection {
  std::vector<int> nodes;
  std::string input;
  std::string weight;
  std::string bias;
};

std::optional<Projection> projection_of(const PatternGraph& g, const std::string& tensor) {
  Projection out;
  std::string product = tensor;
  if (const int add = g.producer(tensor, "Add"); add >= 0) {
    product = computed_input(g, g.node(add));
    if (product.empty()) return std::nullopt;
    out.bias = other_input(g.node(add), product);
    out.nodes.push_back(add);
  }
  const int matmul = g.producer(product, "MatMul");
  if (matmul < 0) return std::nullopt;
  const OnnxConstant* weight = g.constant(g.node(matmul).input(1));
  if (weight == nullptr || weight->dims.size() != 2 || g.constant(g.node(matmul).input(0)) != nullptr) return std::nullopt;
  if (!out.bias.empty() && g.constant(out.bias)->element_count() != weight->dims[1]) return std::nullopt;
  out.nodes.push_back(matmul);
  out.input = g.node(matmul).input(0);
  out.weight = g.node(matmul).input(1);
  return out;
}

/// softmax(q @ k^T * scale + mask) @ v per head, heads split by Reshape/Transpose from one Split of Q | K | V, joined
/// back by Transpose/Reshape; anchored at the Softmax.
std::optional<OnnxPattern> match_attention(const PatternGraph& g, int softmax_index, int64_t opset) {
  const NodeProto& softmax = g.node(softmax_index);
  const Dims score_dims = g.dims(softmax.input(0));
  const int64_t axis = onnx_int_attribute(softmax, "axis", opset < 13 ? 1 : -1);
  if (score_dims.size() != 4 || (axis != -1 && axis != 3)) return std::nullopt;
  OnnxPattern p;
  p.kind = OnnxPattern::Kind::kAttention;
  std::vector<int>& nodes = p.nodes;
  nodes.push_back(softmax_index);
  const int64_t positions = score_dims[3];
  std::string scores = softmax.input(0);
  std::string mask_problem;
  if (const int where = g.producer(scores, "Where"); where >= 0) {
    const OnnxConstant* condition = g.constant(g.node(where).input(0));
    const OnnxConstant* fill = g.constant(g.node(where).input(1));
    const bool large_negative = fill != nullptr && fill->has_values &&
                                std::all_of(fill->values.begin(), fill->values.end(), [](double v) { return v <= -1e4; });
    if (condition == nullptr || !large_negative || !is_causal(*condition, positions, true)) {
      mask_problem = "its mask is not the causal one (every position after the query's hidden)";
    }
    p.causal = true;
    nodes.push_back(where);
    scores = g.node(where).input(2);
  } else if (const int add = g.producer(scores, "Add"); add >= 0) {
    const std::string computed = computed_input(g, g.node(add));
    if (computed.empty()) return std::nullopt;
    const OnnxConstant* mask = g.constant(other_input(g.node(add), computed));
    if (!is_causal(*mask, positions, false)) mask_problem = "its additive mask is not the causal one";
    p.causal = true;
    nodes.push_back(add);
    scores = computed;
  }
  double scale = 1;
  std::string product = scores;
  if (const int mul = g.producer(scores, "Mul"); mul >= 0) {
    product = computed_input(g, g.node(mul));
    if (product.empty() || !g.scalar(other_input(g.node(mul), product))) return std::nullopt;
    scale = *g.scalar(other_input(g.node(mul), product));
    nodes.push_back(mul);
  } else if (const int div = g.producer(scores, "Div"); div >= 0) {
    product = g.node(div).input(0);
    if (!g.scalar(g.node(div).input(1)) || *g.scalar(g.node(div).input(1)) == 0) return std::nullopt;
    scale = 1.0 / *g.scalar(g.node(div).input(1));
    nodes.push_back(div);
  }
  const int scores_matmul = g.producer(product, "MatMul");
  if (scores_matmul < 0) return std::nullopt;
  nodes.push_back(scores_matmul);
  Dims q_dims, k_dims, v_dims;
  const std::string q = heads_view(g, g.node(scores_matmul).input(0), {0, 2, 1, 3}, nodes, q_dims);
  const std::string k = keys_view(g, g.node(scores_matmul).input(1), nodes, k_dims);
  const int context_matmul = g.only_reader(softmax.output(0), "MatMul");
  if (q.empty() || k.empty() || context_matmul < 0 || g.node(context_matmul).input(0) != softmax.output(0)) {
    return std::nullopt;
  }
  nodes.push_back(context_matmul);
  const std::string v = heads_view(g, g.node(context_matmul).input(1), {0, 2, 1, 3}, nodes, v_dims);
  const int back = g.only_reader(g.node(context_matmul).output(0), "Transpose");
  if (v.empty() || back < 0 || onnx_ints_attribute(g.node(back), "perm") != std::optional<Dims>(Dims{0, 2, 1, 3})) {
    return std::nullopt;
  }
  const int join = g.only_reader(g.node(back).output(0), "Reshape");
  if (join < 0) return std::nullopt;
  nodes.push_back(back);
  nodes.push_back(join);
  // Q, K and V: the three outputs of one Split of the projection, in that order; or three projections of one input.
  const auto split_of = [&](const std::string& tensor, int slot) {
    const int split = g.producer(tensor, "Split");
    return split >= 0 && g.node(split).output_size() == 3 && g.node(split).output(slot) == tensor ? split : -1;
  };
  const int split = split_of(q, 0);
  p.output = g.node(join).output(0);
  Dims qkv;
  int64_t split_axis = -1;
  const OnnxConstant* split_sizes = nullptr;
  if (split >= 0 && split_of(k, 1) == split && split_of(v, 2) == split) {
    nodes.push_back(split);
    const NodeProto& split_node = g.node(split);
    p.input = split_node.input(0);
    qkv = g.dims(p.input);
    split_axis = onnx_int_attribute(split_node, "axis", 0);
    split_sizes = split_node.input_size() > 1 ? g.constant(split_node.input(1)) : nullptr;
  } else {
    const auto q_projection = projection_of(g, q);
    const auto k_projection = projection_of(g, k);
    const auto v_projection = projection_of(g, v);
    if (!q_projection || !k_projection || !v_projection || q_projection->input != k_projection->input ||
        q_projection->input != v_projection->input) {
      return std::nullopt;
    }
    p.input = q_projection->input;
    for (const auto* projection : {&*q_projection, &*k_projection, &*v_projection}) {
      nodes.insert(nodes.end(), projection->nodes.begin(), projection->nodes.end());
      p.projections.push_back(projection->weight);
    }
    for (const auto* projection : {&*q_projection, &*k_projection, &*v_projection}) p.projections.push_back(projection->bias);
    const Dims q_out = g.dims(q);
    const OnnxConstant* wq = g.constant(q_projection->weight);
    const bool alike = std::all_of(p.projections.begin(), p.projections.begin() + 3, [&](const std::string& w) {
      return g.constant(w)->dims == wq->dims;
    });
    const bool biases = q_projection->bias.empty() == k_projection->bias.empty() &&
                        q_projection->bias.empty() == v_projection->bias.empty();
    if (q_out.size() == 3 && wq->dims.size() == 2 && alike && biases) {
      qkv = {q_out[0], q_out[1], 3 * q_out[2]};
      split_axis = 2;
    }
  }
  const Dims out = g.dims(p.output);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (!g.closed(nodes, p.output)) return std::nullopt;
  p.name = common_name(g, nodes, "Attention");
  // The shapes: [B, T, 3H] split in three equal parts on the last axis, each viewed as [B, T, heads, d], the
  // context back as [B, T, H].
  const bool shapes_fit = qkv.size() == 3 && (split_axis == -1 || split_axis == 2) && q_dims == k_dims &&
                          q_dims == v_dims && q_dims[0] == qkv[0] && q_dims[1] == qkv[1] &&
                          q_dims[2] * q_dims[3] * 3 == qkv[2] && out == Dims{qkv[0], qkv[1], qkv[2] / 3} &&
                          positions == qkv[1];
  if (!shapes_fit) {
    p.problem = "its Q, K and V are not one [batch, positions, 3·width] tensor split into three equal parts on the "
                "last axis (or three projections of one input alike in shape and bias), each viewed as [batch, "
                "positions, heads, width/heads], with the context viewed back as [batch, positions, width]; "
                "splitscope's attention reads Q | K | V end to end (one Linear of 3·width)";
    return p;
  }
  if (const OnnxConstant* sizes = split_sizes) {
    if (!sizes->has_values || sizes->values != std::vector<double>(3, static_cast<double>(qkv[2] / 3))) {
      p.problem = "its Split is not three equal parts";
      return p;
    }
  }
  p.heads = q_dims[2];
  const double expected = 1.0 / std::sqrt(static_cast<double>(q_dims[3]));
  if (!mask_problem.empty()) {
    p.problem = mask_problem + "; splitscope's attention is causal (GPT) or unmasked (BERT)";
  } else if (!near(scale, expected, 1e-5)) {
    p.problem = fmt::format("its scores are scaled by {:.7g}, not 1/sqrt({}) = {:.7g}; splitscope's attention "
                            "scales by 1/sqrt(d)", scale, q_dims[3], expected);
  }
  return p;
}

}  // namespace onnx_pattern_matching

std::string OnnxPattern::description() const {
  switch (kind) {
    case Kind::kLayerNorm:
      return "ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div" + std::string(gamma.empty() ? "" : ", Mul") +
             (beta.empty() ? "" : ", Add") + " recognised as one layer_norm ('" + name + "')";
    case Kind::kGelu: return "Div, Erf, Add, Mul, Mul (GELU's erf form) recognised as one gelu ('" + name + "')";
    case Kind::kAttention:
      return fmt::format("{}, Reshape, Transpose, MatMul, scale, {}Softmax, MatMul, Transpose, Reshape recognised "
                         "as {}one attention of {} heads{} ('{}')",
                         projections.empty() ? "Split" : "three MatMul (+ Add) projections", causal ? "causal mask, " : "",
                         projections.empty() ? "" : "one linear of Q | K | V and ", heads, causal ? ", causal" : "", name);
  }
  return "";
}

std::vector<OnnxPattern> find_onnx_patterns(
    const ::onnx::GraphProto& graph, const std::function<const OnnxConstant*(const std::string&)>& constant,
    const std::function<std::vector<int64_t>(const std::string&)>& dims, int64_t opset) {
  using namespace onnx_pattern_matching;
  const PatternGraph g(graph, constant, dims);
  std::vector<OnnxPattern> found;
  std::set<int> taken;
  for (int i = 0; i < graph.node_size(); ++i) {
    const std::string& op = graph.node(i).op_type();
    std::optional<OnnxPattern> pattern;
    if (op == "Div") pattern = match_layer_norm(g, i);
    if (op == "Erf") pattern = match_gelu(g, i);
    if (op == "Softmax") pattern = match_attention(g, i, opset);
    if (!pattern) continue;
    if (std::any_of(pattern->nodes.begin(), pattern->nodes.end(), [&](int n) { return taken.count(n) > 0; })) continue;
    taken.insert(pattern->nodes.begin(), pattern->nodes.end());
    found.push_back(std::move(*pattern));
  }
  return found;
}

}  // namespace splitscope

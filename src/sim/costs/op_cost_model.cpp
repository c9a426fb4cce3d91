#include "sim/costs/op_cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include "ir/op_signature.hpp"
#include "ir/ops/conv2d_rules.hpp"
#include "ir/ops/op_def.hpp"
#include "sim/costs/achieved_rates.hpp"
#include "sim/costs/bias_activation.hpp"
#include "sim/costs/conv_algorithm.hpp"
#include "sim/costs/cpu_kernel_cost.hpp"
#include "sim/costs/gemm_efficiency.hpp"
#include "sim/costs/rnn_step_cost.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// The forward convolution of `slice` of `node` (a conv2d, or its weight
/// gradient, which reads the same X), by the groups the slice's filters
/// cover, whose output planes are `out`'s.
ConvShape forward_conv_shape(const OpNode& node, const Slice& slice, const Shape& out) {
  const Shape& in = node.input_shapes.at(0);
  const OpAttrs& a = node.attrs;
  ConvShape s;
  s.rows = slice.batch.size();
  s.channels = in.at(0) / a.groups;
  s.groups = std::max<int64_t>(1, conv_input_channels(node, slice.out).size() / s.channels);
  s.filters = (slice.out.size() + s.groups - 1) / s.groups;
  s.height = in.at(1);
  s.width = in.at(2);
  s.kernel_h = a.kernel.h;
  s.kernel_w = a.kernel.w;
  s.stride_h = a.stride.h;
  s.stride_w = a.stride.w;
  s.pad_h = a.padding.h;
  s.pad_w = a.padding.w;
  s.out_h = out.at(1);
  s.out_w = out.at(2);
  return s;
}

/// The convolution that computes `slice` of a conv2d_grad_input `node`
/// where the forward layer has stride 1: dX is dZ, padded by k − 1 − p,
/// convolved with the filters flipped and transposed (filters and channels
/// swap), the adjoint of a stride-1 convolution. cuDNN's backward-data
/// algorithms are the forward ones on that shape: implicit GEMM, Winograd
/// fused and nonfused for 3×3 (stride 1), FFT (cuDNN API reference,
/// cudnnConvolutionBackwardData, and the forward's support table). Empty for
/// a strided layer, whose backward data has no Winograd or FFT form there
/// and stays priced as its per-sample products.
std::optional<ConvShape> data_gradient_shape(const OpNode& node, const Slice& slice) {
  const OpAttrs& a = node.attrs;
  if (a.stride.h != 1 || a.stride.w != 1 || a.padding.h >= a.kernel.h || a.padding.w >= a.kernel.w) return {};
  const Shape& dz = node.input_shapes.at(0);
  const Shape& dx = node.output_shapes.at(0);
  const int64_t filters_per_group = dz.at(0) / a.groups;
  const int64_t channels_per_group = dx.at(0) / a.groups;
  ConvShape s;
  s.rows = slice.batch.size();
  s.groups = std::max<int64_t>(1, group_channels(slice.reduce, filters_per_group, channels_per_group).size() /
                                      channels_per_group);
  s.channels = (slice.reduce.size() + s.groups - 1) / s.groups;  // its filters' gradients come in
  s.filters = (slice.out.size() + s.groups - 1) / s.groups;      // its channels' gradients go out
  s.height = dz.at(1);
  s.width = dz.at(2);
  s.kernel_h = a.kernel.h;
  s.kernel_w = a.kernel.w;
  s.pad_h = a.kernel.h - 1 - a.padding.h;
  s.pad_w = a.kernel.w - 1 - a.padding.w;
  s.out_h = dx.at(1);
  s.out_w = dx.at(2);
  return s;
}

/// The shape of `slice` of a recurrent cell `node`. The gates come from the
/// parameter count, G·H·(I + H) (+ G·H of bias), and LSTM is the cell with a
/// second output (c_t).
CellShape cell_shape(const OpNode& node, const Slice& slice) {
  CellShape s;
  s.rows = slice.batch.size();
  s.input = node.input_shapes.at(kCellInputSlot).at(0);
  s.hidden = node.attrs.hidden;
  s.units = slice.out.size();
  const int64_t per_gate = s.hidden * (s.input + s.hidden) + (node.attrs.bias ? s.hidden : 0);
  s.gates = per_gate > 0 ? std::max<int64_t>(1, node.param_count / per_gate) : 1;
  s.steps = std::max<int64_t>(1, node.attrs.steps);
  s.has_state = node.step > 0;
  s.lstm = node.output_shapes.size() > static_cast<size_t>(kCellStateOutput);
  return s;
}

}  // namespace

OpCostModel::OpCostModel(const Machine& machine, Precision precision)
    : flops_per_second_(machine.device.matrix_flops_per_second()),
      bytes_per_second_(machine.device.memory_bytes_per_second()),
      launch_seconds_(machine.device.launch_overhead_seconds()),
      device_(std::make_shared<const DeviceSpec>(machine.device)),
      facts_(device_facts(machine.device)),
      body_facts_(facts_),
      achieved_(machine.device.achieved_rates),
      tensor_math_(machine.device.matrix_math != kFp32),
      epilogue_efficiency_(machine.device.efficiency_of(kEpilogueEfficiency)),
      epilogue_rule_(machine.device.has_efficiency(kEpilogueEfficiency) ? Rule::kRoofline : Rule::kStreaming) {
  SPLITSCOPE_CHECK(flops_per_second_ > 0 && bytes_per_second_ > 0, "a device needs positive peaks");
  facts_.element_bytes = static_cast<double>(storage_bytes(precision).activation);
  body_facts_ = facts_;
  body_facts_.launch_seconds = 0;  // an achieved-rate rule prices the work apart from the calls
  if (!machine.device.gemm_rates.empty()) {
    gemm_curve_ = std::make_shared<const GemmRateCurve>(machine.device.gemm_rates);
    int busiest = 1;
    for (const GemmRatePoint& point : machine.device.gemm_rates) {
      if (point.threads == gemm_curve_->threads()) busiest = std::max(busiest, point.running);
    }
    if (busiest > 1) {
      gemm_busy_curve_ =
          std::make_shared<const GemmRateCurve>(machine.device.gemm_rates, gemm_curve_->threads(), busiest);
    }
  }
  // One row per op definition, so a kind added to the table is priced too.
  for (const OpDef* def : op_defs()) {
    // A kind the file does not list takes the efficiency of the kind it runs
    // like (OpDef::efficiency_like) where the file lists that one, before `default`.
    const bool own = machine.device.efficiency.count(std::string(def->name)) > 0;
    const bool borrowed = !own && !def->efficiency_like.empty() &&
                          machine.device.efficiency.count(std::string(def->efficiency_like)) > 0;
    kind_efficiency_.push_back(machine.device.efficiency_of(borrowed ? def->efficiency_like : def->name));
    Rule rule = Rule::kStreaming;
    // Timed sgemm rates price the kinds whose cpu kernels are products, unless the file gives the kind its own
    // efficiency (`default` does not count: it is fitted on the element-wise kinds).
    const bool cpu_product = def->layer_product ||
                             (def->cell && machine.device.cell_pointwise_ns.count(std::string(def->name)) > 0);
    // Timed windows price the pools, unless the file gives the kind its own efficiency.
    const bool cpu_pool = def->pooling &&
                          machine.device.kernel_passes.pool_ns_per_window_value.count(std::string(def->name)) > 0;
    if (gemm_curve_ != nullptr && cpu_product && !own) {
      rule = Rule::kCpuKernel;
    } else if (cpu_pool && !own) {
      rule = Rule::kCpuPool;
    } else if (machine.device.has_efficiency(def->name)) {
      rule = Rule::kRoofline;
    } else {
      rule = datasheet_rule(*def);
    }
    rules_.push_back(rule);
    kind_contention_.push_back(machine.device.contention_of(def->name));
    // A modelled price is the busy one: the busy grid's (no contention factor; its time alone is the alone
    // grid's, op_alone_seconds()), else the rule's times the contention; over the speedup unless the grid was
    // timed on the device's own threads.
    const bool busy_timed = rule == Rule::kCpuKernel && gemm_busy_curve_ != nullptr;
    const bool whole_device = rule == Rule::kCpuKernel && gemm_curve_->threads() > 1;
    kind_scale_.push_back((busy_timed ? 1.0 : kind_contention_.back()) /
                          (whole_device ? 1.0 : machine.device.speedup_of(def->name)));
  }
  epilogue_contention_ = machine.device.contention_of(kEpilogueEfficiency);
  epilogue_scale_ = epilogue_contention_ / machine.device.speedup_of(kEpilogueEfficiency);
  // An optimizer update streams like the epilogue but splits over the threads, as the products do.
  update_scale_ = epilogue_contention_ / machine.device.speedup_of(kDefaultEfficiency);
  auto table = std::make_shared<std::unordered_map<std::string, double>>();
  const std::string alone_suffix = alone_op_key("");
  contended_ = !machine.device.contention.empty() || gemm_busy_curve_ != nullptr;
  for (const auto& [signature, us] : machine.calibration.op_times_us) {
    table->emplace(signature, us * 1e-6);
    contended_ = contended_ || signature.ends_with(alone_suffix);
  }
  calibrated_ = std::move(table);
}

OpCostModel::Rule OpCostModel::datasheet_rule(const OpDef& def) {
  if (def.cell) return Rule::kCell;
  if (def.cost_class != CostClass::kMatrix) return Rule::kStreaming;
  switch (def.conv_pass) {
    case ConvPass::kForward: return Rule::kConv;
    case ConvPass::kDataGradient: return Rule::kConvGradInput;
    case ConvPass::kFilterGradient: return Rule::kConvGradWeight;
    case ConvPass::kNone: break;
  }
  return Rule::kGemm;
}

double OpCostModel::roofline(int64_t flops, int64_t bytes, double efficiency) const {
  if (flops == 0 && bytes == 0) return 0.0;
  const double compute = static_cast<double>(flops) / flops_per_second_;
  const double memory = static_cast<double>(bytes) / bytes_per_second_;
  return std::max(compute, memory) / efficiency + launch_seconds_;
}

double OpCostModel::roofline_seconds(std::string_view kind, int64_t flops, int64_t bytes) const {
  return roofline(flops, bytes, device_->efficiency_of(kind));
}

double OpCostModel::streaming_seconds(const DeviceFacts& facts, int64_t flops, int64_t bytes) {
  if (flops == 0 && bytes == 0) return 0.0;
  return std::max(static_cast<double>(flops) / facts.vector_flops_per_second,
                  static_cast<double>(bytes) / facts.dram_bytes_per_second) +
         facts.launch_seconds;
}

double OpCostModel::epilogue_seconds(int64_t flops, int64_t bytes) const {
  return epilogue_rule_ == Rule::kRoofline ? roofline(flops, bytes, epilogue_efficiency_)
                                           : streaming_seconds(facts_, flops, bytes);
}

double OpCostModel::rule_seconds(Rule rule, const OpNode& node, const Slice& slice, int64_t flops,
                                 int64_t bytes, bool streamed) const {
  if (flops == 0 && bytes == 0) return 0.0;
  if (const AchievedRateRule* learned = achieved_rule(rule, node, slice)) {
    return learned->seconds(datasheet_seconds(body_facts_, rule, node, slice, flops, bytes));
  }
  return datasheet_seconds(facts_, rule, node, slice, flops, bytes, streamed);
}

std::optional<double> OpCostModel::op_rule_error(const Plan& plan, const PlanOp& op) const {
  if (achieved_ == nullptr || op.role != OpRole::kCompute) return std::nullopt;
  if (!calibrated_->empty() && calibrated_seconds(op_signature(*plan.graph, op.node, op.slice)) != nullptr) {
    return std::nullopt;
  }
  const OpNode& node = plan.graph->node(op.node);
  const AchievedRateRule* rule = achieved_rule(rules_[static_cast<size_t>(node.kind)], node, op.slice);
  return rule != nullptr ? rule->median_error : std::nullopt;
}

double OpCostModel::product_work_seconds(const GemmShape& shape, int64_t bytes) const {
  // The datasheet facts, launches and all: a split-K reduction is a kernel the fused call launches too.
  return achieved_product_seconds(estimate_gemm(facts_, shape, bytes).seconds, shape.m);
}

double OpCostModel::achieved_product_seconds(double body_seconds, int64_t rows) const {
  const AchievedRateRule* rule =
      achieved_ == nullptr ? nullptr : achieved_->rule_for(product_families(rows, tensor_math_));
  return rule == nullptr || body_seconds <= 0 ? body_seconds : body_seconds / rule->fraction(body_seconds);
}

double OpCostModel::streaming_work_seconds(int64_t bytes) const {
  const double body = static_cast<double>(bytes) / facts_.dram_bytes_per_second;
  const AchievedRateRule* rule = achieved_ == nullptr ? nullptr : achieved_->rule_for({"elementwise"});
  return rule == nullptr || body <= 0 ? body : body / rule->fraction(body);
}

const AchievedRateRule* OpCostModel::achieved_rule(Rule rule, const OpNode& node, const Slice& slice) const {
  if (achieved_ == nullptr) return nullptr;
  switch (rule) {
    case Rule::kGemm:
    case Rule::kConv:
    case Rule::kConvGradInput:
    case Rule::kConvGradWeight:
    case Rule::kCell:
    case Rule::kStreaming: return achieved_->rule_for(achieved_rate_families(node, slice, tensor_math_));
    default: return nullptr;
  }
}

double OpCostModel::datasheet_seconds(const DeviceFacts& facts, Rule rule, const OpNode& node, const Slice& slice,
                                      int64_t flops, int64_t bytes, bool streamed) const {
  if (flops == 0 && bytes == 0) return 0.0;
  switch (rule) {
    case Rule::kConvGradInput:
      if (const auto shape = data_gradient_shape(node, slice)) return estimate_conv(facts, *shape).seconds;
      [[fallthrough]];
    case Rule::kGemm: {
      GemmShape shape{slice.batch.size(), slice.out.size(), slice.reduce.size(), 1};
      if (const auto dims = op_def(node.kind).gemm) {
        const GemmDims d = dims(node, slice);
        shape = GemmShape{d.m, d.n, d.k, d.count};
      }
      return estimate_gemm(facts, shape, bytes).seconds + facts.launch_seconds + layer_epilogue(facts, node, slice);
    }
    case Rule::kConv:
      return estimate_conv(facts, forward_conv_shape(node, slice, node.output_shapes.at(0))).seconds +
             layer_epilogue(facts, node, slice);
    case Rule::kConvGradWeight: {
      // db, where the layer has a bias, is a kernel of its own (cudnnConvolutionBackwardBias) that reads dZ.
      // Its slice is dW's filters; dZ [filters, Ho, Wo] is its second read.
      const ConvShape shape = forward_conv_shape(node, slice, node.input_shapes.at(1));
      const int64_t dz_values = shape.rows * shape.groups * shape.filters * shape.out_h * shape.out_w;
      const double bias = node.attrs.bias ? streaming_seconds(facts, dz_values, (dz_values + shape.groups * shape.filters) *
                                                                             static_cast<int64_t>(facts.element_bytes))
                                          : 0.0;
      return estimate_conv_weight_gradient(facts, shape).seconds + bias;
    }
    case Rule::kCell: return estimate_cell_step(facts, cell_shape(node, slice)).seconds;
    case Rule::kCpuKernel:  // the price with every device busy, where that was timed
      return cpu_kernel_seconds(gemm_busy_curve_ != nullptr ? *gemm_busy_curve_ : *gemm_curve_, node, slice,
                                streamed);
    case Rule::kCpuPool: {
      const CpuKernelRates rates{nullptr, bytes_per_second_, launch_seconds_, 1, &device_->kernel_passes, {}};
      return cpu_pool_seconds(rates, node, slice,
                              device_->kernel_passes.pool_ns_per_window_value.at(std::string(op_def(node.kind).name)));
    }
    case Rule::kStreaming:
    case Rule::kRoofline: break;
  }
  return streaming_seconds(facts, flops, bytes);
}

double OpCostModel::cpu_kernel_seconds(const GemmRateCurve& curve, const OpNode& node, const Slice& slice,
                                       bool streamed) const {
  CpuKernelRates rates{&curve, bytes_per_second_, launch_seconds_, curve.threads(),
                       device_->kernel_passes.measured() ? &device_->kernel_passes : nullptr, {}};
  if (streamed) {
    rates.weight_stream = WeightStreamCurve::of(device_->weight_stream, curve.threads(), curve.running());
  }
  if (op_def(node.kind).conv_pass == ConvPass::kForward) {
    return cpu_conv2d_seconds(rates, node, slice, forward_conv_shape(node, slice, node.output_shapes.at(0)));
  }
  if (op_def(node.kind).cell) {
    return cpu_cell_seconds(rates, node, cell_shape(node, slice),
                            device_->cell_pointwise_ns.at(std::string(op_def(node.kind).name)) * 1e-9);
  }
  return cpu_dense_seconds(rates, node, slice);
}

double OpCostModel::layer_epilogue(const DeviceFacts& facts, const OpNode& node, const Slice& slice) const {
  if (!op_def(node.kind).layer_product) return 0.0;
  return bias_activation_seconds(facts, bias_activation_of(node, slice));
}

double OpCostModel::modelled(const OpNode* node, OpKind kind, const Slice& slice, int64_t flops,
                             int64_t bytes, bool streamed) const {
  const Rule rule = rules_[static_cast<size_t>(kind)];
  if (rule == Rule::kRoofline) return roofline(flops, bytes, kind_efficiency_[static_cast<size_t>(kind)]);
  if (rule == Rule::kStreaming && (achieved_ == nullptr || node == nullptr)) {
    return streaming_seconds(facts_, flops, bytes);
  }
  SPLITSCOPE_CHECK(node != nullptr, "a shape rule needs the op's node");
  return rule_seconds(rule, *node, slice, flops, bytes, streamed);
}

bool OpCostModel::weights_streamed(const Plan& plan, int device) const {
  if (device_->last_level_cache_mib <= 0 || device_->weight_stream.empty()) return false;
  if (device < 0 || static_cast<size_t>(device) >= plan.memory.size()) return false;
  return static_cast<double>(plan.memory[static_cast<size_t>(device)].params) >
         device_->last_level_cache_mib * 1024.0 * 1024.0;
}

const double* OpCostModel::calibrated_seconds(const std::string& signature) const {
  const auto it = calibrated_->find(signature);
  return it == calibrated_->end() ? nullptr : &it->second;
}

double OpCostModel::op_seconds(const Plan& plan, const PlanOp& op, bool* calibrated) const {
  return op_seconds(plan, op, plan.graph->node(op.node).kind, calibrated);
}

double OpCostModel::op_seconds(const Plan& plan, const PlanOp& op, OpKind node_kind, bool* calibrated) const {
  if (calibrated != nullptr) *calibrated = false;
  const int64_t bytes = op.bytes_read + op.bytes_written;
  // An optimizer update streams its weights, gradients and state, like an activation.
  if (op.role == OpRole::kEpilogue || op.role == OpRole::kUpdate) {
    return epilogue_seconds(op.flops, bytes) * (op.role == OpRole::kUpdate ? update_scale_ : epilogue_scale_);
  }
  SPLITSCOPE_CHECK(op.role == OpRole::kCompute, "only compute, epilogue and update ops run on a compute lane");
  if (!calibrated_->empty()) {
    if (const double* measured = calibrated_seconds(op_signature(*plan.graph, op.node, op.slice))) {
      if (calibrated != nullptr) *calibrated = true;
      return *measured;
    }
  }
  const Rule rule = rules_[static_cast<size_t>(node_kind)];
  const bool needs_node = rule != Rule::kRoofline && (rule != Rule::kStreaming || achieved_ != nullptr);
  const OpNode* node = needs_node ? &plan.graph->node(op.node) : nullptr;
  const bool streamed = rule == Rule::kCpuKernel && weights_streamed(plan, op.device);
  return modelled(node, node_kind, op.slice, op.flops, bytes, streamed) * kind_scale_[static_cast<size_t>(node_kind)];
}

double OpCostModel::op_alone_seconds(const Plan& plan, const PlanOp& op, OpKind node_kind,
                                     double busy_seconds) const {
  if (!contended_) return busy_seconds;
  if (op.role != OpRole::kCompute) return busy_seconds / epilogue_contention_;
  const std::string signature = op_signature(*plan.graph, op.node, op.slice);
  if (const double* measured = calibrated_seconds(alone_op_key(signature))) return *measured;
  const auto kind = static_cast<size_t>(node_kind);
  // Not from the table: the busy price came from the busy grid; alone is the alone grid's.
  if (rules_[kind] == Rule::kCpuKernel && gemm_busy_curve_ != nullptr && calibrated_seconds(signature) == nullptr) {
    return cpu_kernel_seconds(*gemm_curve_, plan.graph->node(op.node), op.slice, weights_streamed(plan, op.device)) *
           kind_scale_[kind];
  }
  return busy_seconds / kind_contention_[kind];
}

double OpCostModel::slice_seconds(const Graph& graph, NodeId node, const Slice& slice) const {
  if (!calibrated_->empty()) {
    if (const double* measured = calibrated_seconds(op_signature(graph, node, slice))) {
      return *measured;
    }
  }
  const SliceCost cost = slice_cost(graph, node, slice);
  const OpNode& op_node = graph.node(node);
  // slice_cost() counts float32 bytes; the plans this prices store facts_.element_bytes a value.
  const auto bytes = static_cast<int64_t>(static_cast<double>(cost.bytes_read + cost.bytes_written) / 4.0 *
                                          facts_.element_bytes);
  return modelled(&op_node, op_node.kind, slice, cost.flops, bytes) *
         kind_scale_[static_cast<size_t>(op_node.kind)];
}

OpCostModel::RulePricing OpCostModel::rule_pricing(const Graph& graph, NodeId node, const Slice& slice) const {
  const SliceCost cost = slice_cost(graph, node, slice);
  const OpNode& op_node = graph.node(node);
  const int64_t bytes = cost.bytes_read + cost.bytes_written;
  RulePricing pricing;
  pricing.families = achieved_rate_families(op_node, slice, tensor_math_);
  pricing.seconds = modelled(&op_node, op_node.kind, slice, cost.flops, bytes) *
                    kind_scale_[static_cast<size_t>(op_node.kind)];
  const Rule rule = datasheet_rule(op_def(op_node.kind));
  pricing.datasheet_seconds = datasheet_seconds(facts_, rule, op_node, slice, cost.flops, bytes);
  pricing.body_seconds = datasheet_seconds(body_facts_, rule, op_node, slice, cost.flops, bytes);
  pricing.learned = rules_[static_cast<size_t>(op_node.kind)] != Rule::kRoofline &&
                    achieved_rule(rule, op_node, slice) != nullptr;
  return pricing;
}

/// The times of the shape rules' shapes.
struct OpCostModel::PlanPricing::Memo {
  /// What makes two ops of a rule cost the same: the rule and up to eight numbers.
  struct ShapeKey {
    int rule = 0;
    std::array<int64_t, 8> values{};
    bool operator==(const ShapeKey&) const = default;
  };

  struct ShapeKeyHash {
    size_t operator()(const ShapeKey& key) const {
      size_t hash = std::hash<int>{}(key.rule);
      for (int64_t value : key.values) hash = hash * 1'000'003u ^ std::hash<int64_t>{}(value);
      return hash;
    }
  };

  std::unordered_map<ShapeKey, double, ShapeKeyHash> by_shape;
};

OpCostModel::PlanPricing::PlanPricing(const OpCostModel& model, const Plan& plan)
    : model_(model), plan_(plan), memo_(std::make_unique<Memo>()) {
  const WorkClasses& classes = plan.graph->work_classes();
  class_of_ = classes.of_node.data();
  class_count_ = classes.of_node.size();
  devices_ = static_cast<size_t>(std::max(plan.devices, 1));
  by_class_.resize(static_cast<size_t>(classes.count) * devices_);
  for (size_t device = 0; device < devices_; ++device) {
    streamed_.push_back(model.weights_streamed(plan, static_cast<int>(device)) ? 1 : 0);
  }
}

OpCostModel::PlanPricing::~PlanPricing() = default;

void OpCostModel::PlanPricing::outside_plan(const PlanOp& op) {
  detail::check_failed("op.node < nodes && op.device < devices", __FILE__, __LINE__,
                       fmt::format("op {} names node {} on device {}, outside its plan", op.id, op.node, op.device));
}

double OpCostModel::PlanPricing::price(const PlanOp& op, Last& last, bool* calibrated) {
  const Slice& s = op.slice;
  const int64_t bytes = op.bytes_read + op.bytes_written;
  const bool streamed = streamed_[static_cast<size_t>(op.device)] != 0;
  const OpNode& node = plan_.graph->node(op.node);
  const Rule rule = op.role == OpRole::kCompute ? model_.rules_[static_cast<size_t>(node.kind)]
                                                : model_.epilogue_rule_;
  const bool shaped = rule != Rule::kRoofline && rule != Rule::kStreaming;
  double time = 0;
  bool from_table = false;
  if (!shaped || op.role != OpRole::kCompute || model_.has_calibration()) {
    time = model_.op_seconds(plan_, op, node.kind, &from_table);
  } else {
    Memo::ShapeKey key;
    key.rule = static_cast<int>(rule);
    // Nodes of one class cost the same on one slice (ir/work_classes.hpp).
    const int64_t work = class_of_[op.node];
    switch (rule) {
      case Rule::kGemm: {
        // The bias-and-activation pass differs between nodes and reduce slices of one shape.
        const BiasActivation pass = bias_activation_of(node, s);
        key.values = {s.batch.size(), s.out.size(), s.reduce.size(), bytes, op.flops == 0 ? 0 : 1,
                      static_cast<int64_t>(node.kind), (pass.bias ? 2 : 0) + (pass.activation ? 1 : 0)};
        break;
      }
        break;
      case Rule::kConv: key.values = {work, s.batch.size(), s.out.begin, s.out.end,
                                      bytes == 0 && op.flops == 0 ? 0 : 1};
        break;
      case Rule::kConvGradInput:
      case Rule::kConvGradWeight:
      case Rule::kCpuKernel:
      case Rule::kCpuPool:
        key.values = {work, s.batch.size(), s.out.begin, s.out.end, s.reduce.begin,
                      s.reduce.end, bytes == 0 && op.flops == 0 ? 0 : 1, streamed ? 1 : 0};
        break;
      default: {
        const CellShape c = cell_shape(node, s);
        key.values = {c.rows, c.input, c.hidden, c.units, c.steps, c.gates * 2 + (c.has_state ? 1 : 0),
                      c.lstm ? 1 : 0, bytes == 0 && op.flops == 0 ? 0 : 1};
      }
    }
    const auto [it, inserted] = memo_->by_shape.try_emplace(key, 0.0);
    if (inserted) {
      it->second = model_.rule_seconds(rule, node, s, op.flops, bytes, streamed && rule == Rule::kCpuKernel);
    }
    time = it->second * model_.kind_scale_[static_cast<size_t>(node.kind)];
  }
  const double alone = model_.op_alone_seconds(plan_, op, node.kind, time);
  last = Last{s.batch.size(), s.out, s.reduce, op.flops, bytes, op.role, from_table, time, alone};
  if (calibrated != nullptr) *calibrated = from_table;
  return time;
}

}  // namespace splitscope

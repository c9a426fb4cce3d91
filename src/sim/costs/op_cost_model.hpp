#pragma once
/// \file
/// What an op costs on a machine's device. Three sources, in this order:
///
/// 1. A measured time from the machine's calibration table, looked up by
///    op_signature(), replaces everything for the ops it covers.
/// 2. An op kind with an efficiency in the machine file (its own entry, or
///    `default` for every kind not listed) is priced by the plain roofline:
///
///      time = max(FLOPs / peak, bytes / memory bandwidth) / efficiency + launch overhead
///
///    with the matrix products at the peak of the device's `matrix_math`,
///    and bytes read + written. This is what calibrated machines and files
///    written before the datasheet rules use.
/// 3. Every other kind is priced by the datasheet rules (docs/cost-model.md),
///    from the device's datasheet facts (device_facts.hpp) and the op's shape:
///    - dense: one GEMM (M rows, N units, K inputs) with tile and wave
///      quantization on the SMs (and split-K where it fills them better),
///      bound below by its bytes at the achieved DRAM rate
///      (gemm_efficiency.hpp), plus a launch, then its bias and activation
///      as a kernel of their own (bias_activation.hpp);
///    - conv2d: the fastest algorithm cuDNN supports for its shape
///      (implicit GEMM, Winograd, FFT), each kernel with its launch
///      (conv_algorithm.hpp), then its bias and activation likewise;
///    - lstm_cell, gru_cell: cuDNN's kernels for one step: a share of the
///      input product batched over the layer's steps, the recurrent product,
///      the element-wise gates, each with its launch (rnn_step_cost.hpp);
///    - everything else (element-wise ops, pooling, softmax, the joins, the
///      epilogue after an all-reduce): max(FLOPs at the fp32 peak, bytes at
///      the achieved DRAM rate) plus a launch.
///    Where the device names achieved-rate rules (DeviceSpec::achieved_rates,
///    sim/costs/achieved_rates.hpp), an op whose family has a rule is priced by it
///    instead: the rules above with no launches (the body), at the fraction
///    its family achieves of them, plus the family's fixed cost per call.
///
/// An op that does nothing (zero FLOPs and zero bytes, like a flatten of a
/// contiguous tensor) costs nothing, not even a launch, whatever prices it.
///
/// On a machine whose devices slow each other (DeviceSpec::contention, or op
/// times measured alone: contended()), an op has two prices: op_seconds(),
/// with every device busy (a measured time, else the above times the kind's
/// contention), which is how the splits run and what partitioners balance;
/// and op_alone_seconds(), with the others idle (a time measured alone, else
/// op_seconds() over the contention). The engine moves between them by how
/// many devices are busy. On a pooled machine's device of N shares with
/// measured speedups (DeviceSpec::speedup, machine_for_plan()), an op the
/// table lacks is priced at one share and divided by its kind's speedup.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.hpp"
#include "ir/slice.hpp"
#include "plan/plan.hpp"
#include "sim/costs/achieved_rates.hpp"
#include "sim/machine/device_facts.hpp"
#include "sim/costs/gemm_efficiency.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

struct OpDef;

class OpCostModel {
 public:
  /// Prices ops of plans stored at `precision` (Plan::precision): the shape
  /// rules count the tensors they move at its size; the products run at the
  /// machine's `matrix_math` peak, which the caller sets to the precision's.
  explicit OpCostModel(const Machine& machine, Precision precision = Precision::kFp32);

  /// Seconds for a compute or epilogue op of `plan` on one device; sets
  /// `*calibrated` (when given) to whether the time came from the table.
  double op_seconds(const Plan& plan, const PlanOp& op, bool* calibrated = nullptr) const;
  /// The same, given the kind of the op's graph node (`node_kind`), which
  /// spares a large simulation a look-up in the graph per op.
  double op_seconds(const Plan& plan, const PlanOp& op, OpKind node_kind, bool* calibrated = nullptr) const;
  /// Seconds for `slice` of `node` (what a partitioner asks when balancing).
  double slice_seconds(const Graph& graph, NodeId node, const Slice& slice) const;
  /// The roofline formula alone, for an op of efficiency kind `kind` (its
  /// efficiency, else `default`, else 1; the file's launch overhead).
  double roofline_seconds(std::string_view kind, int64_t flops, int64_t bytes) const;
  /// An element-wise pass streaming `bytes` (an epilogue, an optimizer
  /// update), launch included: the epilogue's efficiency or rule.
  double epilogue_seconds(int64_t flops, int64_t bytes) const;
  /// The calibrated time of a signature, in seconds, if the table has it.
  const double* calibrated_seconds(const std::string& signature) const;
  /// Whether devices slow each other here (see the file comment).
  bool contended() const { return contended_; }
  /// `op` alone, given op_seconds() of it (`busy_seconds`): what contended() machines price apart.
  double op_alone_seconds(const Plan& plan, const PlanOp& op, OpKind node_kind, double busy_seconds) const;

  bool has_calibration() const { return !calibrated_->empty(); }
  /// Whether the device names achieved-rate rules (DeviceSpec::achieved_rates).
  bool has_achieved_rates() const { return achieved_ != nullptr; }
  /// Whether ops of `kind` are priced by the datasheet rules (no efficiency
  /// of their own, nor a default); the epilogue: `epilogue_by_rules()`.
  bool priced_by_rules(OpKind kind) const { return rules_[static_cast<size_t>(kind)] != Rule::kRoofline; }
  bool epilogue_by_rules() const { return epilogue_rule_ != Rule::kRoofline; }
  /// The median error of the achieved-rate rule that prices compute op `op`
  /// of `plan` (AchievedRateRule::median_error); nullopt where none with an
  /// error does (a measured time, the datasheet rules alone, an efficiency,
  /// an epilogue or update).
  std::optional<double> op_rule_error(const Plan& plan, const PlanOp& op) const;
  /// The datasheet facts the rules use.
  const DeviceFacts& facts() const { return facts_; }
  /// A matrix product outside any plan (a part of a fused library call),
  /// moving `bytes`, without its launch: the GEMM rule (gemm_efficiency.hpp;
  /// a split-K reduction's launch included) at the achieved share of its
  /// product family where the device has achieved-rate rules, else the GEMM
  /// rule alone.
  double product_work_seconds(const GemmShape& shape, int64_t bytes) const;
  /// `body_seconds` of product work at the datasheet rules' rates, at the
  /// share the device achieves for products of `rows` rows (unchanged
  /// where it has no achieved-rate rules).
  double achieved_product_seconds(double body_seconds, int64_t rows) const;
  /// An element-wise kernel streaming `bytes`, without its launch: the
  /// achieved DRAM rate, at the `elementwise` family's share where the
  /// device has achieved-rate rules.
  double streaming_work_seconds(int64_t bytes) const;

  /// How the shape rules price `slice` of `node`, apart from any table:
  /// what `splitscope prices` reports, and what scripts/fit-achieved-rates
  /// fits achieved rates to.
  struct RulePricing {
    double datasheet_seconds = 0;  ///< the datasheet rules, launches included
    double body_seconds = 0;       ///< the same with no launch overhead
    std::vector<std::string> families;  ///< achieved_rate_families()
    bool learned = false;          ///< an achieved-rate rule prices it here
    double seconds = 0;            ///< what the model charges without the calibration table
  };
  RulePricing rule_pricing(const Graph& graph, NodeId node, const Slice& slice) const;
  /// The hand-off between two lanes of a device (DeviceSpec::lane_handoff_us), in seconds.
  double lane_handoff_seconds() const { return device_->lane_handoff_us * 1e-6; }
  /// The host's cost of issuing one device call (DeviceSpec::host_issue_us), in seconds.
  double host_issue_seconds() const { return device_->host_issue_us * 1e-6; }

  class PlanPricing;

 private:
  /// kCpuKernel: the cpu kernels' passes at a device's timed sgemm rates (cpu_kernel_cost.hpp); kCpuPool: a
  /// pool's windows at the device's timed rate (DeviceSpec::kernel_passes).
  enum class Rule { kRoofline, kGemm, kConv, kConvGradInput, kConvGradWeight, kCell, kStreaming, kCpuKernel, kCpuPool };

  /// The datasheet rule of a kind (what prices it where nothing else does).
  static Rule datasheet_rule(const OpDef& def);
  double roofline(int64_t flops, int64_t bytes, double efficiency) const;
  /// The uncalibrated time of `slice` of `node` (kind `kind`), doing `flops` and moving `bytes`.
  /// `streamed`: the op's device does not keep its weights in its cache (weights_streamed()).
  double modelled(const OpNode* node, OpKind kind, const Slice& slice, int64_t flops, int64_t bytes,
                  bool streamed = false) const;
  double rule_seconds(Rule rule, const OpNode& node, const Slice& slice, int64_t flops, int64_t bytes,
                      bool streamed = false) const;
  /// The datasheet rules' time of an op of rule `rule` on `facts` (facts_, or body_facts_ for no launches).
  double datasheet_seconds(const DeviceFacts& facts, Rule rule, const OpNode& node, const Slice& slice,
                           int64_t flops, int64_t bytes, bool streamed = false) const;
  /// The achieved-rate rule that prices `slice` of `node` under `rule`; null where none does.
  const AchievedRateRule* achieved_rule(Rule rule, const OpNode& node, const Slice& slice) const;
  /// Whether plan device `device` holds more weights in `plan` (Plan::memory params) than its last-level
  /// cache, where the machine knows both that cache and the rate weights stream from memory at.
  bool weights_streamed(const Plan& plan, int device) const;
  static double streaming_seconds(const DeviceFacts& facts, int64_t flops, int64_t bytes);
  /// A dense or conv2d slice's bias-and-activation kernel (bias_activation.hpp); 0 for other kinds.
  double layer_epilogue(const DeviceFacts& facts, const OpNode& node, const Slice& slice) const;

  double flops_per_second_;
  double bytes_per_second_;
  double launch_seconds_;
  std::shared_ptr<const DeviceSpec> device_;
  DeviceFacts facts_;
  DeviceFacts body_facts_;  ///< facts_ with no launch overhead
  std::shared_ptr<const AchievedRates> achieved_;
  bool tensor_math_ = false;  ///< the products run on tensor cores (matrix_math is not fp32)
  std::vector<double> kind_efficiency_;  ///< by OpKind value
  std::vector<Rule> rules_;              ///< by OpKind value
  std::vector<double> kind_contention_;  ///< by OpKind value; 1 where not contended
  std::vector<double> kind_scale_;       ///< by OpKind value: contention over speedup (DeviceSpec::speedup)
  double epilogue_contention_ = 1;
  double epilogue_scale_ = 1;
  double update_scale_ = 1;
  bool contended_ = false;
  double epilogue_efficiency_;
  Rule epilogue_rule_;
  std::shared_ptr<const std::unordered_map<std::string, double>> calibrated_;
  /// The cpu kernels' pass-by-pass time of `node`'s `slice` (Rule::kCpuKernel) at `curve`'s rates.
  double cpu_kernel_seconds(const GemmRateCurve& curve, const OpNode& node, const Slice& slice,
                            bool streamed = false) const;

  std::shared_ptr<const GemmRateCurve> gemm_curve_;       ///< alone; null without DeviceSpec::gemm_rates
  std::shared_ptr<const GemmRateCurve> gemm_busy_curve_;  ///< with the pool's devices busy; null where not timed
};

/// Every compute, epilogue and update op of one plan priced as the
/// simulator asks, op by op: each slice of a work class (ir/work_classes.hpp)
/// on a device once, and each shape of a shape rule once. A million-op plan
/// repeats a few shapes (a layer's cells, a pipeline's micro-batches), and
/// reading an op's graph node is a cache miss in a graph that does not fit
/// in the caches: by class, the node is read once per class, and the memo
/// stays in the caches. Holds references to the model and the plan.
class OpCostModel::PlanPricing {
 public:
  PlanPricing(const OpCostModel& model, const Plan& plan);
  ~PlanPricing();
  PlanPricing(const PlanPricing&) = delete;
  PlanPricing& operator=(const PlanPricing&) = delete;

  /// What model.op_seconds(plan, op, calibrated) gives. Inline where the
  /// last op of its class on its device had its slice: a simulation asks
  /// this of every op, and nearly every answer is that one.
  double seconds(const PlanOp& op, bool* calibrated = nullptr) {
    Last& last = last_of(op);
    const Slice& s = op.slice;
    if (last.rows == s.batch.size() && last.out == s.out && last.reduce == s.reduce && last.flops == op.flops &&
        last.bytes == op.bytes_read + op.bytes_written && last.role == op.role) {
      if (calibrated != nullptr) *calibrated = last.calibrated;
      return last.seconds;
    }
    return price(op, last, calibrated);
  }
  /// What model.op_alone_seconds() gives for `op` (its seconds() when not contended).
  double alone_seconds(const PlanOp& op) {
    seconds(op);
    return last_of(op).alone;
  }

  /// Asks the memory for what seconds(op) reads first, for a caller going
  /// through a million-op plan in order some ops ahead: the op's work class,
  /// in a table the size of the graph. Only a hint: nothing changes.
  void prefetch(const PlanOp& op) const {
    if (op.node < class_count_) __builtin_prefetch(class_of_ + op.node);
  }

 private:
  /// The last slice priced of a work class on a device (a pipeline's
  /// micro-batches, a layer's steps and a stack of equal layers repeat it).
  struct Last {
    int64_t rows = -1;
    Range out;
    Range reduce;
    int64_t flops = 0;
    int64_t bytes = 0;
    OpRole role = OpRole::kCompute;
    bool calibrated = false;
    double seconds = 0;
    double alone = 0;  ///< op_alone_seconds()
  };
  struct Memo;

  Last& last_of(const PlanOp& op) {
    if (op.node >= class_count_ || op.device < 0 || static_cast<size_t>(op.device) >= devices_) outside_plan(op);
    return by_class_[static_cast<size_t>(class_of_[op.node]) * devices_ + static_cast<size_t>(op.device)];
  }
  [[noreturn]] static void outside_plan(const PlanOp& op);
  /// seconds() where `last` does not answer: prices `op` and makes it `last`.
  double price(const PlanOp& op, Last& last, bool* calibrated);

  const OpCostModel& model_;
  const Plan& plan_;
  std::unique_ptr<Memo> memo_;
  const int* class_of_ = nullptr;  ///< the graph's WorkClasses::of_node
  size_t class_count_ = 0;         ///< its size
  size_t devices_ = 1;
  std::vector<Last> by_class_;  ///< class · devices + device
  /// weights_streamed() by device (so one per Last)
  std::vector<char> streamed_;
};

}  // namespace splitscope

#pragma once
// Hand-made Plans and Timelines for the report tests: a few ops on a few
// devices, with spans at chosen times, so that every number a summary gives
// can be worked out by hand.

#include <memory>
#include <string>
#include <vector>

#include "exec/executor.hpp"
#include "plan/plan.hpp"
#include "report/comparison.hpp"
#include "timeline/timeline.hpp"

namespace splitscope::testing {

/// input [8] -> fc1 (dense 4) -> fc2 (dense 4) -> fc3 (dense 2), batch 2.
/// Node ids: 0 input, 1 fc1, 2 fc2, 3 fc3.
std::shared_ptr<const Graph> dense_chain_graph();

/// Builds a Plan op by op. Ops may name any graph node: only labels depend on it.
class HandPlan {
 public:
  HandPlan(std::string strategy, int devices, int microbatches = 1);

  /// A network-input value on `device`.
  int input(int device);
  /// A compute op of `node` on `device` reading `inputs` (value ids); returns the op id.
  int compute(int device, NodeId node, std::vector<int> inputs, int64_t flops, int microbatch = 0);
  /// A transfer of `value` to `device`; returns the op id.
  int transfer(int value, int device, int64_t bytes);
  /// A collective over `participants` reading one value each; returns the op id.
  int collective(CollectiveKind kind, std::vector<int> values, std::vector<int> participants, int64_t payload,
                 int64_t moved);
  /// The value an op writes (output `index`).
  int output(int op, size_t index = 0) const;
  /// Plan::memory: one peak per device (params = peak / 2).
  void set_memory(const std::vector<int64_t>& peaks);

  std::shared_ptr<const Plan> build() const { return std::make_shared<const Plan>(plan_); }
  const Plan& plan() const { return plan_; }

 private:
  int new_value(int device, NodeId node, int producer, int64_t bytes);
  Plan plan_;
};

Span compute_span(int device, int op, double start_us, double end_us, int64_t flops = 0);
Span copy_span(int device, int op, SpanKind kind, double start_us, double end_us, int64_t bytes = 0,
               Lane lane = Lane::kCopyIn);

/// A RunResult of one or more repeats with the given timelines and run info.
RunResult run_result(std::vector<Timeline> timelines, std::string backend = "cpu", std::string machine = "test-host");

/// A single-device baseline: one compute op on device 0 for [0, makespan_us).
std::shared_ptr<const Plan> single_plan(int64_t flops);
RunResult single_result(double makespan_us, std::string backend = "cpu", std::string machine = "test-host");

/// A two-stage layer split: d0 fc1 [0, 100) + fc2 [100, 300) (300 of 400
/// FLOPs); fc2 -> d1 transfer [300, 350); d1 fc3 [350, 450). `scale`
/// stretches every time. Memory peaks 4096 and 2048 bytes.
std::shared_ptr<const Plan> two_stage_plan();
Timeline two_stage_timeline(double scale = 1.0);

/// Runs for a comparison, added in this order: on cpu "test-host": single
/// (400 us; 3 repeats 390/400/420), horizontal (two_stage, 450 us), a
/// pipeline that does not fit (needs 4096 bytes on a device of 3000);
/// simulated on "sim-machine": single (40 us), horizontal (two_stage x 0.05 = 22.5 us).
Comparison sample_comparison();

/// A fresh, empty folder for one test's files.
std::string fresh_dir(const std::string& name);
/// The source tree (SPLITSCOPE_SOURCE_ROOT, set by meson).
std::string source_root();
/// Runs a shell command; returns its exit status and its output (stdout and stderr).
int run_command(const std::string& command, std::string* output);

}  // namespace splitscope::testing

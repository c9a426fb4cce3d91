// Claim 5: yet a regular stack of LSTM layers on one GPU, run by the fused
// kernels (cuDNN's cudnnRNNForward), is faster in practice than the same
// stack split one layer per device. The fused stack is no plan, so its time
// is the cost model's prediction of cuDNN's algorithm
// (sim/costs/fused_rnn_prediction.hpp, as `demo rnn --backend sim` prices it); the
// split is a `horizontal` plan simulated cell by cell. It flips at the hidden
// size from which the split's four devices of work outrun the fused stack.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "sim/costs/fused_rnn_prediction.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {
namespace {

constexpr int kFusedRnnLayers = 4;
constexpr int kFusedRnnSteps = 64;
constexpr int kFusedRnnBatch = 64;

/// One stacked LSTM of kFusedRnnLayers × `hidden` whose input has `hidden`
/// features (every cell costs the same), as `demo rnn` builds it.
std::shared_ptr<const Graph> stacked_lstm_graph(int64_t hidden) {
  const nlohmann::json doc = {
      {"name", fmt::format("lstm-stack-{}x{}", kFusedRnnLayers, hidden)},
      {"batch", kFusedRnnBatch},
      {"input", {kFusedRnnSteps, hidden}},
      {"layers",
       {{{"type", "lstm"}, {"hidden", hidden}, {"layers", kFusedRnnLayers}, {"return_sequences", false},
         {"name", "lstm"}}}}};
  return std::make_shared<const Graph>(lower(parse_model_text(doc.dump(), "lesson 5")));
}

struct FusedAgainstSplit {
  double fused_us = 0;
  double split_us = 0;
  Trial split;
  /// The split's speedup over the fused stack.
  double speedup() const { return fused_us / split_us; }
};

FusedAgainstSplit fused_against_split(const Machine& machine, int64_t hidden) {
  const auto graph = stacked_lstm_graph(hidden);
  FusedAgainstSplit result;
  result.fused_us = predict_fused_rnn(machine, *graph, 0).seconds * 1e6;
  result.split = simulate_trial(graph, "horizontal", kFusedRnnLayers, machine);
  result.split_us = result.split.makespan_us;
  return result;
}

}  // namespace

LessonResult lesson_fused_rnn(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int64_t kHidden = 1024;  // `demo rnn`'s default on sim and cuda
  const FusedAgainstSplit run = fused_against_split(machine, kHidden);
  const double speedup = run.speedup();

  LessonResult result;
  result.setup = fmt::format("lstm {} x {}, {} steps, batch {}, forward: the fused stack on one device of {} "
                             "(predicted) against one layer per device on {} (horizontal)",
                             kFusedRnnLayers, kHidden, kFusedRnnSteps, kFusedRnnBatch, machine_name, kFusedRnnLayers);
  // The claim holds where the fused stack is the faster by the margin.
  result.verdict = speedup <= 1 - kUncertainMargin ? LessonVerdict::kHolds
                   : speedup < kGainMargin         ? LessonVerdict::kUncertain
                                                   : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "the fused stack is predicted at {:.3f} ms on one device, the layer split at {:.3f} ms on {} ({:.2f}x the fused "
      "stack's speed; its cells compute for {:.3f} ms in all)",
      run.fused_us / 1e3, run.split_us / 1e3, kFusedRnnLayers, speedup, run.split.summary.total_compute_ms());
  result.numbers = {{"fused_ms", run.fused_us / 1e3},
                    {"split_ms", run.split_us / 1e3},
                    {"split_speedup_vs_fused", speedup},
                    {"split_compute_ms", run.split.summary.total_compute_ms()},
                    {"hidden", kHidden}};
  FlipSearch search;
  search.parameter = "hidden size";
  search.low = 32;
  search.high = 8192;
  search.integer = true;
  search.quantity = "the split's speedup over the fused stack";
  search.threshold = kGainMargin;
  search.meaning = fmt::format(
      "from this hidden size up, the layer split beats the fused stack by {:.0f}% or more (the claim no longer holds)",
      (kGainMargin - 1) * 100);
  result.flip = find_flip_point(
      search, [&](double hidden) { return fused_against_split(machine, static_cast<int64_t>(hidden)).speedup(); });
  result.figures.bars.push_back(
      {"one pass", "ms", {{"fused stack, 1 device", run.fused_us / 1e3}, {"a layer per device", run.split_us / 1e3}}});
  result.figures.timelines.push_back(run.split.figure(fmt::format("a layer per device, {} devices", kFusedRnnLayers)));
  return result;
}

}  // namespace splitscope

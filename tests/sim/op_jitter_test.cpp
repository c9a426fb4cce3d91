// --jitter lognormal:SIGMA (sim/costs/op_jitter.hpp): the factors are lognormal of
// mean 1 and the given sigma, drawn from (seed, repeat, op) alone, and the
// simulator multiplies each compute op's priced time by its factor.

#include "sim/costs/op_jitter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace op_jitter_test {
namespace {

TEST(OpJitter, NoSigmaNoNoise) {
  const OpJitter none(0, 7, 3);
  for (int op = 0; op < 100; ++op) EXPECT_EQ(none.factor(op), 1.0);
}

TEST(OpJitter, DrawsDependOnSeedRepeatAndOpOnly) {
  const OpJitter a(0.3, 7, 0);
  EXPECT_EQ(a.factor(5), OpJitter(0.3, 7, 0).factor(5));
  EXPECT_NE(a.factor(5), OpJitter(0.3, 7, 1).factor(5));
  EXPECT_NE(a.factor(5), OpJitter(0.3, 8, 0).factor(5));
  EXPECT_NE(a.factor(5), a.factor(6));
}

TEST(OpJitter, FactorsAreLognormalOfMeanOne) {
  constexpr int kDraws = 200000;
  constexpr double kSigma = 0.25;
  const OpJitter jitter(kSigma, 42, 0);
  double sum = 0, log_sum = 0, log_squares = 0;
  for (int op = 0; op < kDraws; ++op) {
    const double factor = jitter.factor(op);
    sum += factor;
    log_sum += std::log(factor);
    log_squares += std::log(factor) * std::log(factor);
  }
  const double log_mean = log_sum / kDraws;
  // Standard errors at 200000 draws: mean ~0.0006, log mean ~0.0006, log sd ~0.0004.
  EXPECT_NEAR(sum / kDraws, 1.0, 0.005);
  EXPECT_NEAR(log_mean, -kSigma * kSigma / 2, 0.005);
  EXPECT_NEAR(std::sqrt(log_squares / kDraws - log_mean * log_mean), kSigma, 0.005);
}

Plan single_plan() {
  const auto graph = std::make_shared<const Graph>(lower(parse_model_text(
      R"({"batch": 8, "input": [256], "layers": [{"type": "dense", "units": 256}, {"type": "dense", "units": 256},
          {"type": "dense", "units": 10}]})",
      "net.json")));
  PartitionOptions options;
  options.devices = 1;
  return make_partitioner("single")->partition(graph, options);
}

TEST(OpJitter, TheSimulatorScalesEachComputeSpanByItsFactor) {
  const Plan plan = single_plan();
  Simulator simulator(load_machine("h100-nvlink-8"));
  RunOptions plain;
  plain.repeats = 3;
  const RunResult noiseless = simulator.run(plan, plain);
  ASSERT_EQ(noiseless.timelines.size(), 1u) << "without noise, one timeline stands for every repeat";

  RunOptions noisy = plain;
  noisy.jitter_sigma = 0.4;
  noisy.seed = 11;
  const RunResult jittered = simulator.run(plan, noisy);
  ASSERT_EQ(jittered.timelines.size(), 3u);
  for (int repeat = 0; repeat < 3; ++repeat) {
    const OpJitter jitter(0.4, 11, repeat);
    const Timeline& timeline = jittered.timelines[static_cast<size_t>(repeat)];
    ASSERT_EQ(timeline.spans.size(), noiseless.timelines[0].spans.size());
    for (size_t i = 0; i < timeline.spans.size(); ++i) {
      const Span& span = timeline.spans[i];
      if (span.kind != SpanKind::kCompute) continue;
      EXPECT_NEAR(span.duration_us(), noiseless.timelines[0].spans[i].duration_us() * jitter.factor(span.op),
                  1e-9 * span.duration_us())
          << "repeat " << repeat << " op " << span.op;
    }
  }
  EXPECT_NE(jittered.timelines[0].makespan_us(), jittered.timelines[1].makespan_us());
  // The same seed draws the same noise.
  EXPECT_EQ(simulator.run(plan, noisy).timelines[2].makespan_us(), jittered.timelines[2].makespan_us());
}

}  // namespace
}  // namespace op_jitter_test
}  // namespace splitscope

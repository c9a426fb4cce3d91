// compare's timing order (src/run/interleaved_runs.hpp): warm-ups first, then
// the baseline's repeats alternating with each split's, ABAB...; a backend
// that cannot keep a plan set up runs each plan whole, one after the other.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "run/interleaved_runs.hpp"

namespace splitscope::cli {
namespace interleaved_runs_test {
namespace {

/// Records what runs when: "A" for a timed run of plan 0, "a" for a warm-up, and so on.
/// Its timed runs take `makespans_us` in turn (cycling).
class RecordingRun final : public PreparedRun {
 public:
  RecordingRun(char name, std::string& log, std::vector<double> makespans_us)
      : name_(name), log_(log), makespans_us_(std::move(makespans_us)) {}
  void run(int warmup, int repeats, RunResult& into) override {
    for (int w = 0; w < warmup; ++w) log_ += static_cast<char>(name_ - 'A' + 'a');
    for (int r = 0; r < repeats; ++r) {
      log_ += name_;
      const double us = makespans_us_[next_++ % makespans_us_.size()];
      into.timelines.push_back(Timeline{{Span{0, Lane::kCompute, SpanKind::kCompute, 0, "", 0, us, 0, 0}}});
    }
  }
  HostTensor output() override { return {}; }

 private:
  char name_;
  std::string& log_;
  std::vector<double> makespans_us_;
  size_t next_ = 0;
};

class RecordingExecutor final : public Executor {
 public:
  RecordingExecutor(std::vector<std::shared_ptr<const Plan>> plans, bool can_prepare,
                    std::vector<std::vector<double>> makespans_us = {{100}, {50}, {50}})
      : plans_(std::move(plans)), can_prepare_(can_prepare), makespans_us_(std::move(makespans_us)) {}
  std::string_view name() const override { return "fake"; }
  RunResult run(const Plan& plan, const RunOptions& options) override {
    RunResult result;
    RecordingRun(letter(plan), log, times(plan)).run(options.warmup, options.repeats, result);
    return result;
  }
  std::unique_ptr<PreparedRun> prepare(const Plan& plan, const RunOptions&) override {
    if (!can_prepare_) return nullptr;
    return std::make_unique<RecordingRun>(letter(plan), log, times(plan));
  }
  std::string log;

 private:
  char letter(const Plan& plan) const {
    for (size_t i = 0; i < plans_.size(); ++i) {
      if (plans_[i].get() == &plan) return static_cast<char>('A' + i);
    }
    return '?';
  }
  std::vector<double> times(const Plan& plan) const { return makespans_us_.at(static_cast<size_t>(letter(plan) - 'A')); }
  std::vector<std::shared_ptr<const Plan>> plans_;
  bool can_prepare_;
  std::vector<std::vector<double>> makespans_us_;
};

std::vector<std::shared_ptr<const Plan>> three_plans() {
  return {std::make_shared<const Plan>(), std::make_shared<const Plan>(), std::make_shared<const Plan>()};
}

TEST(InterleavedRuns, TheBaselineAlternatesWithEachSplit) {
  const auto plans = three_plans();
  RecordingExecutor executor(plans, true);
  RunOptions options;
  options.warmup = 1;
  options.repeats = 3;
  std::ostringstream out;
  Progress progress(out, false);
  const std::vector<RunResult> results = run_interleaved(executor, plans, options, progress);
  EXPECT_EQ(executor.log, "a" "b" "ABABAB" "c" "ACACAC");
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].timelines.size(), 6u);  // 3 beside each of the two splits
  EXPECT_EQ(results[1].timelines.size(), 3u);
  EXPECT_EQ(results[2].timelines.size(), 3u);
}

TEST(InterleavedRuns, ABackendThatCannotPrepareRunsEachPlanWhole) {
  const auto plans = three_plans();
  RecordingExecutor executor(plans, false);
  RunOptions options;
  options.warmup = 1;
  options.repeats = 2;
  std::ostringstream out;
  Progress progress(out, false);
  const std::vector<RunResult> results = run_interleaved(executor, plans, options, progress);
  EXPECT_EQ(executor.log, "aAA" "bBB" "cCC");
  EXPECT_EQ(results[0].timelines.size(), 2u);
}

TEST(InterleavedRuns, AdaptiveRepeatsGoOnWhileTheVerdictIsUncertain) {
  // Baseline 100 us steady. Split B cycles 80, 100, 120: its medians reach
  // 80 and 120, so the interval [100/120, 100/80] straddles both thresholds
  // at every count: it runs to the most (5 pairs). Split C, steady at 50,
  // is a clear 2x after the first 3 pairs.
  const auto plans = three_plans();
  RecordingExecutor executor(plans, true, {{100}, {80, 100, 120}, {50}});
  RunOptions options;
  options.warmup = 0;
  options.repeats = 3;
  std::ostringstream out;
  Progress progress(out, false);
  RepeatPolicy policy;
  policy.adaptive = true;
  policy.most = 5;
  const std::vector<RunResult> results = run_interleaved(executor, plans, options, progress, policy);
  EXPECT_EQ(executor.log, "ABABABABAB" "ACACAC");
  EXPECT_EQ(results[1].timelines.size(), 5u);
  EXPECT_EQ(results[2].timelines.size(), 3u);

  // Given --repeat (not adaptive), exactly that many.
  RecordingExecutor fixed(plans, true, {{100}, {80, 100, 120}, {50}});
  run_interleaved(fixed, plans, options, progress, RepeatPolicy{});
  EXPECT_EQ(fixed.log, "ABABAB" "ACACAC");
}

TEST(InterleavedRuns, ShowTheirProgressPairByPair) {
  // compare on cpu ran silent for minutes: the interleaved pairs never reported a repeat.
  std::vector<std::shared_ptr<const Plan>> plans;
  for (const char* strategy : {"a", "b", "c"}) {
    Plan plan;
    plan.strategy = strategy;
    plans.push_back(std::make_shared<const Plan>(std::move(plan)));
  }
  RecordingExecutor executor(plans, true);
  RunOptions options;
  options.warmup = 0;
  options.repeats = 2;
  std::ostringstream out;
  // Every reading of the clock is 2 s after the last: each pair is past the quiet second.
  auto now = std::chrono::steady_clock::time_point();
  Progress progress(out, true, [&now] { return now += std::chrono::seconds(2); });
  run_interleaved(executor, plans, options, progress);
  const std::string shown = out.str();
  EXPECT_NE(shown.find("\rb on fake, interleaved with a: repeat 1/2"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\rb on fake, interleaved with a: repeat 2/2"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\rc on fake, interleaved with a: repeat 2/2"), std::string::npos) << shown;
}

}  // namespace
}  // namespace interleaved_runs_test
}  // namespace splitscope::cli

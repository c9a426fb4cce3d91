// compare's timing order (src/cli/interleaved_runs.hpp): warm-ups first, then
// the baseline's repeats alternating with each split's, ABAB...; a backend
// that cannot keep a plan set up runs each plan whole, one after the other.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/interleaved_runs.hpp"

namespace splitscope::cli {
namespace {

/// Records what runs when: "A" for a timed run of plan 0, "a" for a warm-up, and so on.
class RecordingRun final : public PreparedRun {
 public:
  RecordingRun(char name, std::string& log) : name_(name), log_(log) {}
  void run(int warmup, int repeats, RunResult& into) override {
    for (int w = 0; w < warmup; ++w) log_ += static_cast<char>(name_ - 'A' + 'a');
    for (int r = 0; r < repeats; ++r) {
      log_ += name_;
      into.timelines.push_back(Timeline{{Span{0, Lane::kCompute, SpanKind::kCompute, 0, "", 0, 1.0 + r, 0, 0}}});
    }
  }
  HostTensor output() override { return {}; }

 private:
  char name_;
  std::string& log_;
};

class RecordingExecutor final : public Executor {
 public:
  RecordingExecutor(std::vector<std::shared_ptr<const Plan>> plans, bool can_prepare)
      : plans_(std::move(plans)), can_prepare_(can_prepare) {}
  std::string_view name() const override { return "fake"; }
  RunResult run(const Plan& plan, const RunOptions& options) override {
    RunResult result;
    RecordingRun(letter(plan), log).run(options.warmup, options.repeats, result);
    return result;
  }
  std::unique_ptr<PreparedRun> prepare(const Plan& plan, const RunOptions&) override {
    if (!can_prepare_) return nullptr;
    return std::make_unique<RecordingRun>(letter(plan), log);
  }
  std::string log;

 private:
  char letter(const Plan& plan) const {
    for (size_t i = 0; i < plans_.size(); ++i) {
      if (plans_[i].get() == &plan) return static_cast<char>('A' + i);
    }
    return '?';
  }
  std::vector<std::shared_ptr<const Plan>> plans_;
  bool can_prepare_;
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

}  // namespace
}  // namespace splitscope::cli

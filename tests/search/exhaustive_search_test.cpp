// On small problems (at most 12 layers, 4 devices) every plan of the
// search's space is priced, every contiguous stage cut of every pipeline
// included, and the search must find the fastest of them (to 0.1%) while
// pricing fewer.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "partitioners/stage_units.hpp"
#include "search/candidate_space.hpp"
#include "search/plan_search.hpp"
#include "search_test_support.hpp"

namespace splitscope {
namespace {

void every_stage_cut(size_t units, size_t stages, std::vector<int>& starts, std::vector<std::vector<int>>& cuts) {
  if (starts.size() == stages) {
    cuts.push_back(starts);
    return;
  }
  const int from = starts.empty() ? 0 : starts.back() + 1;
  const int last = starts.empty() ? 0 : static_cast<int>(units - (stages - starts.size()));
  for (int start = from; start <= last; ++start) {
    starts.push_back(start);
    every_stage_cut(units, stages, starts, cuts);
    starts.pop_back();
  }
}

/// Every plan of the space candidate_space.hpp describes, stage cuts exhaustively.
std::vector<PlanSpec> whole_space(const SearchProblem& problem) {
  std::vector<PlanSpec> specs;
  for (const Candidate& candidate : named_candidates(problem)) specs.push_back(candidate.spec);
  for (const Candidate& candidate : replicated_candidates(problem)) specs.push_back(candidate.spec);
  const size_t units = stage_units(*problem.graph).size();
  std::vector<int> replicas = replica_counts(problem);
  replicas.insert(replicas.begin(), 1);
  for (int copies : replicas) {
    const int stages = problem.devices / copies;
    if (stages < 2 || static_cast<size_t>(stages) > units) continue;
    std::vector<int> starts;
    std::vector<std::vector<int>> cuts;
    every_stage_cut(units, static_cast<size_t>(stages), starts, cuts);
    for (int microbatches : pipeline_microbatches(problem, copies)) {
      for (const auto& cut : cuts) {
        PlanSpec spec;
        spec.strategy = "pipeline";
        spec.devices = problem.devices;
        spec.replicas = copies;
        spec.microbatches = microbatches;
        spec.stage_starts = cut;
        specs.push_back(spec);
      }
    }
  }
  if (!problem.graph->is_training()) return specs;
  std::vector<PlanSpec> trained;
  for (const PlanSpec& spec : specs) {
    for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
      if (spec.microbatches <= 1 && schedule != PipelineSchedule::kGpipe) continue;
      for (const bool recompute : {false, true}) {
        PlanSpec variant = spec;
        variant.schedule = schedule;
        variant.recompute = recompute;
        trained.push_back(variant);
      }
    }
  }
  return trained;
}

struct Exhaustive {
  double fastest_us = std::numeric_limits<double>::infinity();
  std::string fastest;
  size_t priced = 0;
};

Exhaustive price_everything(const SearchProblem& problem) {
  const Simulator simulator(problem.machine);
  Exhaustive result;
  for (const PlanSpec& spec : whole_space(problem)) {
    RefusedPlan refused;
    const auto priced = price_plan(spec, problem.graph, simulator, problem.memory_limit_bytes, refused);
    if (!priced) continue;
    result.priced += 1;
    if (priced->makespan_us < result.fastest_us) {
      result.fastest_us = priced->makespan_us;
      result.fastest = describe(priced->spec);
    }
  }
  return result;
}

struct SmallProblem {
  const char* network;
  bool train;
  int devices;
  const char* machine;
};

class ExhaustiveSearch : public ::testing::TestWithParam<SmallProblem> {};

TEST_P(ExhaustiveSearch, FindsTheFastestPlanOfTheWholeSpace) {
  const SmallProblem& small = GetParam();
  const SearchProblem problem = testing::search_problem(small.network, small.train, small.devices, small.machine);
  ASSERT_LE(stage_units(*problem.graph).size(), size_t{12});
  const Exhaustive everything = price_everything(problem);
  ASSERT_GT(everything.priced, size_t{10});
  const SearchResult result = search_plans(problem);
  ASSERT_NE(result.best(), nullptr);
  EXPECT_FALSE(result.budget_ran_out);
  // Within 0.1%: the coordinate descent on the cuts can stop at a local
  // optimum a hair off (residual-small, training, 4 devices: 179.151 us
  // against 179.143 us, two cuts that must move together), never further.
  EXPECT_LE(result.best()->makespan_us, everything.fastest_us * (1 + 1e-3))
      << "the search found " << describe(result.best()->spec) << ", the fastest of " << everything.priced
      << " plans is " << everything.fastest;
  // The search prices fewer plans than the whole space (it would be no search otherwise).
  EXPECT_LT(static_cast<size_t>(result.simulated), everything.priced);
}

// The small zoo networks are won by single or horizontal; the uneven chain
// by a replicated split (h100-nvlink-8) and by a 1F1B pipeline whose cuts the
// local search moved off the estimate's (h100-pcie-4, training).
INSTANTIATE_TEST_SUITE_P(
    SmallNetworks, ExhaustiveSearch,
    ::testing::Values(SmallProblem{"mlp-small", true, 4, "h100-nvlink-8"},
                      SmallProblem{"cnn-small", true, 2, "h100-nvlink-8"},
                      SmallProblem{"lstm-small", false, 4, "h100-nvlink-8"},
                      SmallProblem{"residual-small", true, 4, "h100-nvlink-8"},
                      SmallProblem{"uneven", false, 4, "h100-nvlink-8"},
                      SmallProblem{"uneven", false, 4, "h100-pcie-4"}, SmallProblem{"uneven", true, 4, "h100-pcie-4"},
                      SmallProblem{"uneven", true, 3, "h100-pcie-4"}),
    [](const auto& info) {
      std::string name = std::string(info.param.network) + (info.param.train ? "_train_" : "_forward_") +
                         std::to_string(info.param.devices) + "_" + info.param.machine;
      std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return name;
    });

}  // namespace
}  // namespace splitscope

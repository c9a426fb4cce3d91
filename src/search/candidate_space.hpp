#pragma once
/// \file
/// The plans the search considers, in what the partitioners can express:
/// every named strategy as `compare` runs it; for every replica count R
/// dividing the devices, R data-parallel copies of each split that does not
/// replicate the network itself; for pipelines, the micro-batch counts, the
/// stage cuts of stage_cut_search.hpp, and (training) both schedules and
/// recomputation; recomputation for the others.

#include <string>
#include <vector>

#include "plan_file/plan_spec.hpp"
#include "search/search_problem.hpp"

namespace splitscope {

struct Candidate {
  PlanSpec spec;
  bool named = false;
};

/// The named strategies that apply over the problem's devices (`single` on
/// one device, the splits on all of them, `pipeline` with the problem's
/// named micro-batches), as `compare` chooses them (ps apart: its shards are
/// not a plan the simulator prices as one step).
std::vector<Candidate> named_candidates(const SearchProblem& problem);

/// A named strategy that `compare` would leave out here, and why.
struct LeftOutStrategy {
  std::string strategy;
  std::string reason;  ///< the partitioner's own words: its refusal, or its plan's note ("this is the vertical split")
};

/// The named strategies (ps apart) that do not apply over all of the
/// problem's devices, so that the search does not price them there (`tensor`
/// on the transformers, which have no dense pairs yet; a layer split over
/// more devices than layers), each with the partitioner's refusal, or the
/// note of the plan it would make, as the reason. Their replicas over fewer
/// devices each are still priced where they apply.
std::vector<LeftOutStrategy> named_left_out(const SearchProblem& problem);

/// The replica counts R > 1 dividing the devices (each copy with its share of the batch).
std::vector<int> replica_counts(const SearchProblem& problem);

/// R copies of each split that is not a pipeline (horizontal, vertical,
/// tensor, branches) over devices / R each, where it applies; and for
/// inference `data` over every device (batch-split inference, which
/// `compare` does not run by default).
std::vector<Candidate> replicated_candidates(const SearchProblem& problem);

/// A pipeline of R replicas with its estimate (seconds, from stage_costs:
/// the GPipe makespan (M - 1) · slowest + sum of the stages).
struct PipelineEstimate {
  PlanSpec spec;
  double estimate_s = 0;
};

/// For each replica count (1 and replica_counts()) and micro-batch count
/// (pipeline_microbatches()), the best stage cut by the dynamic programme and the
/// partitioners' own balance, estimated; best first. Pipelines of one stage are left out.
std::vector<PipelineEstimate> pipeline_estimates(const SearchProblem& problem);

/// The micro-batch counts tried for a pipeline of `stages` stages over `rows` rows.
std::vector<int> microbatch_counts(int stages, int64_t rows);

/// The micro-batch counts tried for the pipelines of `replicas` replicas:
/// microbatch_counts(), and for one replica the named pipeline's too.
std::vector<int> pipeline_microbatches(const SearchProblem& problem, int replicas);

}  // namespace splitscope

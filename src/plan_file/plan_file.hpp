#pragma once
/// \file
/// A plan file (`splitscope.plan/1`, docs/plan.md "Plan files"): the network
/// a plan is for, its devices, the strategy parameters that rebuild it
/// (plan_spec.hpp), and a digest of the plan they built (ops, bytes crossing
/// devices, FLOPs per device), so that a rebuild that came out different is
/// refused rather than run under the file's name. Written by `plan --out`
/// and `search --out`, read by `--plan FILE` on run, compare, validate and sweep.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan_file/network_identity.hpp"
#include "plan_file/plan_spec.hpp"

namespace splitscope {

inline constexpr const char* kPlanFileSchema = "splitscope.plan/1";

/// What the plan came out as, to hold a rebuild against.
struct PlanDigest {
  int64_t ops = 0;
  int64_t transfer_bytes = 0;
  int64_t collective_bytes = 0;
  std::vector<int64_t> device_flops;

  bool operator==(const PlanDigest&) const = default;
};

PlanDigest digest(const Plan& plan);

/// The search's prediction for the plan, where it made one (informational).
struct PlanPrediction {
  std::string machine;
  double makespan_us = 0;
};

struct PlanFile {
  NetworkIdentity network;
  PlanSpec spec;  ///< stage cuts pinned (pinned_spec())
  PlanDigest digest;
  std::optional<PlanPrediction> predicted;
};

/// The file for `plan`, built from `spec` (its stage cuts pinned).
PlanFile plan_file_of(const PlanSpec& spec, const Plan& plan, std::optional<PlanPrediction> predicted = {});

nlohmann::json to_json(const PlanFile& file);
/// InputError `<source>: <json path>: <problem>` for anything malformed.
PlanFile plan_file_from_json(const nlohmann::json& document, const std::string& source);
/// Reads and parses `path` (InputError naming it when unreadable or malformed).
PlanFile read_plan_file(const std::string& path);

/// The file's plan rebuilt for `graph` (the network at hand, with its batch
/// and training), after checking that the file is for it and for `devices`
/// (0: whatever the file says); then checked against the file's digest.
/// InputError (exit 2) naming every field that differs.
Plan rebuild_plan(const PlanFile& file, const std::string& source, const std::shared_ptr<const Graph>& graph,
                  int devices, std::shared_ptr<const CostFunction> cost);

}  // namespace splitscope

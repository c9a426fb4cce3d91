// Claim 11: an ensemble served across devices answers within a deadline by
// dropping the members that are late. Three ImageNet networks answer each
// request on their own devices (docs/ensemble.md); every op's time carries
// seeded noise, a different draw for each request; the aggregator waits
// until the deadline and answers with the members in by then. It flips at
// the deadline below which some request finds no member in time and goes
// unanswered: the latest, over the requests, of the fastest member.

#include <fmt/format.h>

#include <algorithm>

#include "exec/ensemble_run.hpp"
#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace {

constexpr int kEnsembleRequests = 8;
constexpr double kEnsembleJitterSigma = 0.3;

/// Each member on its own device of `machine`, the network alone (`single`).
std::vector<EnsembleMember> ensemble_members(const std::vector<std::string>& networks) {
  std::vector<EnsembleMember> members;
  for (size_t m = 0; m < networks.size(); ++m) {
    const auto graph = lesson_graph(networks[m], false);
    PartitionOptions options;
    options.devices = 1;
    EnsembleMember member;
    member.network = networks[m];
    member.device = static_cast<int>(m);
    member.plan = make_plan(*make_partitioner("single"), graph, options);
    members.push_back(std::move(member));
  }
  return members;
}

/// One request through the ensemble; `seed` draws its noise (0: none).
EnsembleResult serve_ensemble_request(const std::vector<EnsembleMember>& members, const Machine& machine,
                                      uint64_t seed, std::optional<double> deadline_ms) {
  RunOptions run;
  run.warmup = 0;
  run.repeats = 1;
  run.seed = seed;
  run.jitter_sigma = seed == 0 ? 0.0 : kEnsembleJitterSigma;
  const ExecutorFactory simulator_for = [&machine](int) { return std::make_unique<Simulator>(machine); };
  return run_ensemble(members, static_cast<int>(members.size()), simulator_for, run, deadline_ms);
}

}  // namespace

LessonResult lesson_ensemble_deadline(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  const std::vector<std::string> networks{"resnet50", "inception", "resnet50-folded"};
  const std::vector<EnsembleMember> members = ensemble_members(networks);

  // The deadline is the slowest member's time without noise: a request's
  // noise makes some members late, whom the aggregator drops.
  const EnsembleResult quiet = serve_ensemble_request(members, machine, 0, std::nullopt);
  double fastest_ms = quiet.members.front().alone_ms, slowest_ms = fastest_ms;
  for (const MemberOutcome& member : quiet.members) {
    fastest_ms = std::min(fastest_ms, member.alone_ms);
    slowest_ms = std::max(slowest_ms, member.alone_ms);
  }
  const double deadline_ms = slowest_ms;

  nlohmann::ordered_json requests = nlohmann::ordered_json::array();
  int answered_in_time = 0, requests_with_drops = 0, members_used = 0;
  double latest_answer_ms = 0, latest_all_members_ms = 0;
  for (int r = 0; r < kEnsembleRequests; ++r) {
    const EnsembleResult served = serve_ensemble_request(members, machine, static_cast<uint64_t>(r + 1), deadline_ms);
    int used = 0;
    double all_members_ms = 0, first_member_ms = served.members.front().latency_ms;
    nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
    for (const MemberOutcome& member : served.members) {
      used += member.used ? 1 : 0;
      if (!member.used) dropped.push_back(member.network);
      all_members_ms = std::max(all_members_ms, member.latency_ms);
      first_member_ms = std::min(first_member_ms, member.latency_ms);
    }
    const bool in_time = used > 0 && served.ensemble_latency_ms <= deadline_ms;
    answered_in_time += in_time ? 1 : 0;
    requests_with_drops += used < static_cast<int>(members.size()) ? 1 : 0;
    members_used += used;
    latest_answer_ms = std::max(latest_answer_ms, served.ensemble_latency_ms);
    latest_all_members_ms = std::max(latest_all_members_ms, all_members_ms);
    requests.push_back({{"seed", r + 1},
                        {"answer_ms", served.ensemble_latency_ms},
                        {"members_used", used},
                        {"dropped", dropped},
                        {"first_member_ms", first_member_ms},
                        {"all_members_ms", all_members_ms}});
  }

  LessonResult result;
  result.setup = fmt::format("resnet50, inception, resnet50-folded forward, one device each of {}, {} requests with "
                             "per-op lognormal noise (sigma {:g}, seeds 1-{}), deadline {:.3f} ms",
                             machine_name, kEnsembleRequests, kEnsembleJitterSigma, kEnsembleRequests, deadline_ms);
  const bool every_request = answered_in_time == kEnsembleRequests;
  result.verdict = !every_request          ? LessonVerdict::kDoesNotHold
                   : requests_with_drops > 0 ? LessonVerdict::kHolds
                                             : LessonVerdict::kUncertain;  // no member was late: nothing was tested
  result.why = fmt::format(
      "{} of {} requests answered by the {:.3f} ms deadline, with {:.1f} of {} members on average ({} requests dropped "
      "a late one); waiting for every member would have taken up to {:.3f} ms",
      answered_in_time, kEnsembleRequests, deadline_ms, double(members_used) / kEnsembleRequests, members.size(),
      requests_with_drops, latest_all_members_ms);
  result.numbers = {{"deadline_ms", deadline_ms},
                    {"fastest_member_ms", fastest_ms},
                    {"slowest_member_ms", slowest_ms},
                    {"requests", requests},
                    {"answered_in_time", answered_in_time},
                    {"requests_with_drops", requests_with_drops},
                    {"mean_members_used", double(members_used) / kEnsembleRequests},
                    {"latest_answer_ms", latest_answer_ms},
                    {"latest_all_members_ms", latest_all_members_ms}};
  const auto requests_answered = [&](double deadline) {
    int answered = 0;
    for (int r = 0; r < kEnsembleRequests; ++r) {
      const EnsembleResult served = serve_ensemble_request(members, machine, static_cast<uint64_t>(r + 1), deadline);
      const bool any_used = std::any_of(served.members.begin(), served.members.end(),
                                        [](const MemberOutcome& member) { return member.used; });
      answered += any_used && served.ensemble_latency_ms <= deadline ? 1 : 0;
    }
    return double(answered);
  };
  FlipSearch search;
  search.parameter = "deadline";
  search.unit = "ms";
  search.low = 0.1;
  search.high = 1000;
  search.quantity = "requests answered in time";
  search.threshold = kEnsembleRequests;
  search.meaning = "from this deadline up, every request is answered in time by the members that make it";
  result.flip = find_flip_point(search, requests_answered);
  LessonCurve served{"each request's times", "request (its seed)", "ms", false, {}, deadline_ms, "deadline"};
  LessonSeries first{"first member in", {}}, answer{"answer", {}}, all{"every member in", {}};
  for (const auto& request : requests) {
    const double seed = request["seed"].get<double>();
    first.points.emplace_back(seed, request["first_member_ms"].get<double>());
    answer.points.emplace_back(seed, request["answer_ms"].get<double>());
    all.points.emplace_back(seed, request["all_members_ms"].get<double>());
  }
  served.series = {first, answer, all};
  result.figures.curves.push_back(served);
  return result;
}

}  // namespace splitscope

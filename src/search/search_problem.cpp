#include "search/search_problem.hpp"

#include "util/errors.hpp"

namespace splitscope {

SearchObjective objective_named(const std::string& name) {
  if (name == "time") return SearchObjective::kTime;
  if (name == "throughput") return SearchObjective::kThroughput;
  if (name == "memory") return SearchObjective::kMemory;
  throw InputError("--objective", "", "must be time, throughput or memory, got '" + name + "'");
}

std::string_view to_string(SearchObjective objective) {
  switch (objective) {
    case SearchObjective::kTime: return "time";
    case SearchObjective::kThroughput: return "throughput";
    case SearchObjective::kMemory: return "memory";
  }
  return "?";
}

}  // namespace splitscope

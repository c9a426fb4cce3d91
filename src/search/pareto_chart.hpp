#pragma once
/// \file
/// The search's plans as an inline SVG scatter of predicted step time (x)
/// against peak memory on the fullest device (y), for `search --html`:
/// every priced plan a dot, the Pareto front joined, the best plan and the
/// best named strategy ringed and labelled, the memory limit a dashed line.
/// Each dot and ring carries its plan's numbers as data attributes
/// (data-makespan-us, data-peak-memory-bytes, data-plan), as `--json`
/// prints them, so that a reader (or a test) can check where it is drawn.

#include <cstdint>
#include <optional>
#include <string>

#include "search/plan_search.hpp"

namespace splitscope {

/// `<svg class="pareto" ...>` of every plan in `result.ranked`; a horizontal
/// line at `memory_limit_bytes` when given (the axis then reaches it).
std::string svg_pareto_chart(const SearchResult& result, std::optional<int64_t> memory_limit_bytes);

}  // namespace splitscope

#pragma once
/// \file
/// `splitscope search --html`: one self-contained page (inline CSS and SVG,
/// no script) with the Pareto chart of predicted step time against peak
/// memory (search/pareto_chart.hpp), the best plan's breakdown beside the
/// best named strategy's (compute, transfers, the bubble; peak memory on
/// each device) with the sentence saying why it wins, the top k and the
/// front as tables. The numbers are those of the text and `--json` output.

#include <string>

#include "report/report_context.hpp"
#include "search/plan_search.hpp"

namespace splitscope {

/// `memory_limit_given`: the user set --memory-limit, so the chart draws it
/// (the default, the machine's whole memory, would only squash the dots).
std::string search_html(const SearchProblem& problem, const SearchResult& result, int top,
                        const ReportContext& context, bool memory_limit_given);

}  // namespace splitscope

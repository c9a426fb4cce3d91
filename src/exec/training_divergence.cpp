#include "exec/training_divergence.hpp"

#include <fmt/format.h>

#include <cmath>

#include "util/errors.hpp"

namespace splitscope {

void check_losses_finite(const std::vector<double>& losses, const Optimizer& optimizer, bool async) {
  for (size_t i = 0; i < losses.size(); ++i) {
    if (std::isfinite(losses[i])) continue;
    std::string before;
    // The last few finite losses show whether it grew first (too large a step) or jumped.
    for (size_t j = i > 4 ? i - 4 : 0; j < i; ++j) before += fmt::format("{}{:.4g}", before.empty() ? "" : ", ", losses[j]);
    std::string advice = fmt::format("try a lower --lr (this run: {:g}, e.g. --lr {:g})", optimizer.learning_rate,
                                     optimizer.learning_rate / 10);
    if (!optimizer.adam()) advice += ", or --optimizer adam --lr 0.0001";
    if (async) advice += ", or --staleness-lr or --max-staleness T against stale gradients";
    const char* value = std::isnan(losses[i]) ? "NaN" : losses[i] > 0 ? "infinite" : "-infinite";
    throw RunError(fmt::format("training diverged: the loss of step {} is {}{}; {}", i + 1, value,
                               before.empty() ? "" : " (before it: " + before + ")", advice));
  }
}

}  // namespace splitscope

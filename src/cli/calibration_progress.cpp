#include "cli/calibration_progress.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "report/progress.hpp"

namespace splitscope::cli {

CalibrationProgress::CalibrationProgress(std::string what) : what_(std::move(what)), enabled_(stderr_is_terminal()) {}

CalibrationProgress::~CalibrationProgress() {
  if (enabled_ && shown_width_ > 0) fmt::print(stderr, "\r{}\r", std::string(shown_width_, ' '));
}

std::function<void(const std::string&, int, int)> CalibrationProgress::callback() {
  return [this](const std::string& stage, int index, int stages) {
    if (!enabled_) return;
    const std::string line = fmt::format("{}: {} ({}/{})", what_, stage, index + 1, stages);
    // Padding overwrites the rest of a longer line before it.
    const size_t pad = shown_width_ > line.size() ? shown_width_ - line.size() : 0;
    fmt::print(stderr, "\r{}{}", line, std::string(pad, ' '));
    std::fflush(stderr);
    shown_width_ = line.size();
  };
}

}  // namespace splitscope::cli

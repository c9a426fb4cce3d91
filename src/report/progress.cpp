#include "report/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace splitscope {

Progress::Progress(std::ostream& out, bool enabled, Clock clock)
    : out_(out), enabled_(enabled), clock_(std::move(clock)) {}

void Progress::begin_run(std::string what) {
  // shown_width_ stays: a line left on screen by the last run is overwritten, not appended to.
  what_ = std::move(what);
  started_ = clock_();
}

void Progress::on_repeat(int index, int repeats) {
  if (!enabled_ || clock_() - started_ < kQuietFor) return;
  const std::string line =
      index < 0 ? fmt::format("{}: warm-up", what_) : fmt::format("{}: repeat {}/{}", what_, index + 1, repeats);
  // Carriage return and padding overwrite the previous, possibly longer, line.
  const size_t pad = shown_width_ > line.size() ? shown_width_ - line.size() : 0;
  out_ << '\r' << line << std::string(pad, ' ') << std::flush;
  shown_width_ = line.size();
}

void Progress::end_run() {
  if (enabled_ && shown_width_ > 0) out_ << '\r' << std::string(shown_width_, ' ') << '\r' << std::flush;
  shown_width_ = 0;
}

std::function<void(int, int)> Progress::repeat_callback() {
  return [this](int index, int repeats) { on_repeat(index, repeats); };
}

bool stderr_is_terminal() { return isatty(fileno(stderr)) != 0; }

Progress stderr_progress(bool quiet) { return Progress(std::cerr, !quiet && stderr_is_terminal()); }

}  // namespace splitscope

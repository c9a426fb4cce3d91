#pragma once
/// \file
/// Progress on stderr while `run` and `compare` work: which strategy and
/// which repeat, for runs that take longer than a second. Silent when asked
/// (--quiet) and when the stream is not a terminal, so that logs and pipes
/// get only the results.

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>

namespace splitscope {

class Progress {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  /// How long a run goes before progress shows.
  static constexpr std::chrono::milliseconds kQuietFor{1000};

  /// Writes to `out` when `enabled`; `clock` is injectable for tests.
  Progress(std::ostream& out, bool enabled, Clock clock = std::chrono::steady_clock::now);

  /// A run starts: `what` names it ("horizontal on cpu").
  void begin_run(std::string what);
  /// Before each repeat (warm-ups have index < 0): once the run has gone on
  /// for kQuietFor, shows "what: repeat i/n" (or "warm-up") on one line.
  void on_repeat(int index, int repeats);
  /// The run finished: clears the line, if one was shown.
  void end_run();
  /// For RunOptions::on_repeat.
  std::function<void(int, int)> repeat_callback();

  bool enabled() const { return enabled_; }

 private:
  std::ostream& out_;
  bool enabled_;
  Clock clock_;
  std::string what_;
  std::chrono::steady_clock::time_point started_;
  size_t shown_width_ = 0;  ///< characters on the current progress line
};

/// True when stderr is a terminal.
bool stderr_is_terminal();

/// Progress on std::cerr, enabled unless `quiet` or stderr is not a terminal.
Progress stderr_progress(bool quiet);

}  // namespace splitscope

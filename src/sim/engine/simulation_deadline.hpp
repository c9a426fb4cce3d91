#pragma once
/// \file
/// A wall-clock time by which a simulation must end: past it the engine
/// stops and says it was cut off, instead of a makespan. What lets `search
/// --budget-s` bound the search's time, not only when it starts a candidate
/// (one deep pipeline of a 1,024-device plan takes minutes to simulate).
/// A value, handed to each simulation that should heed it; none by default.

#include <chrono>
#include <cstdint>
#include <optional>

namespace splitscope {

class SimulationDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  /// Events the engine plays between two looks at the clock: a look costs
  /// about 20 ns, an event about 50 ns on a small plan and far more on a
  /// large one, so a deadline is overshot by well under a millisecond.
  static constexpr uint32_t kEventsBetweenLooks = 1024;

  /// No deadline: the simulation runs to its end.
  SimulationDeadline() = default;
  explicit SimulationDeadline(Clock::time_point at) : at_(at) {}

  bool exists() const { return at_.has_value(); }
  /// Whether there is a deadline and the clock has reached it.
  bool passed() const { return at_.has_value() && Clock::now() >= *at_; }

 private:
  std::optional<Clock::time_point> at_;
};

}  // namespace splitscope

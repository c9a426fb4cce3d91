#pragma once
/// \file
/// How the cpu calibration and validate's host probe time a short piece of
/// work: in samples of back-to-back calls long enough that the clock's own
/// cost does not count, on a thread pinned where a run's device would be.

#include <chrono>
#include <functional>
#include <vector>

namespace splitscope {

/// Seconds from `start` until now.
double seconds_since(std::chrono::steady_clock::time_point start);

/// A sample of calls lasts at least this long.
inline constexpr double kMinSampleSeconds = 200e-6;

/// Back-to-back calls a sample takes of work whose one call took `guess_seconds`: enough to fill
/// kMinSampleSeconds, 1 to 100,000.
int calls_per_sample(double guess_seconds);

/// The median over `samples` samples of `call`'s time per call, after one warm-up call that gives the
/// first guess of its time (calls_per_sample()).
double median_call_seconds(int samples, const std::function<void()>& call);

/// Runs `work` on a thread pinned to cpus[0] (unpinned where `cpus` is empty) and waits for it.
void run_pinned(const std::vector<int>& cpus, const std::function<void()>& work);

}  // namespace splitscope

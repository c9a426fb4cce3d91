// Timing short work in samples of back-to-back calls (call_timing.hpp).

#include "exec/cpu/call_timing.hpp"

#include <algorithm>
#include <thread>

#include "util/median.hpp"
#include "util/thread_affinity.hpp"

namespace splitscope {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int calls_per_sample(double guess_seconds) {
  return static_cast<int>(std::clamp(kMinSampleSeconds / std::max(1e-9, guess_seconds), 1.0, 100000.0));
}

double median_call_seconds(int samples, const std::function<void()>& call) {
  const auto first = std::chrono::steady_clock::now();
  call();
  const int calls = calls_per_sample(seconds_since(first));
  std::vector<double> seconds;
  for (int s = 0; s < samples; ++s) {
    const auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) call();
    seconds.push_back(seconds_since(start) / calls);
  }
  return median(seconds);
}

void run_pinned(const std::vector<int>& cpus, const std::function<void()>& work) {
  std::thread worker(work);
  if (!cpus.empty()) pin_thread(worker, cpus.front());
  worker.join();
}

}  // namespace splitscope

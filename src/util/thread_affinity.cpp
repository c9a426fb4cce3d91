#include "util/thread_affinity.hpp"

#include <pthread.h>
#include <sched.h>

namespace splitscope {

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) {
    for (int cpu = 0; cpu < static_cast<int>(std::thread::hardware_concurrency()); ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

bool pin_thread(std::thread& thread, int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE || !thread.joinable()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(thread.native_handle(), sizeof(set), &set) == 0;
}

}  // namespace splitscope

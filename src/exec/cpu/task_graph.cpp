#include "exec/cpu/task_graph.hpp"

#include <algorithm>

#include "util/check.hpp"

namespace splitscope {

int TaskGraph::add(Task task) {
  SPLITSCOPE_CHECK(task.device >= 0, "a task on a negative device");
  SPLITSCOPE_CHECK(static_cast<bool>(task.work), "a task without work: " + task.label);
  device_count_ = std::max(device_count_, task.device + 1);
  tasks_.push_back(std::move(task));
  successors_.emplace_back();
  dependency_counts_.push_back(0);
  return size() - 1;
}

void TaskGraph::add_dependency(int before, int after) {
  SPLITSCOPE_CHECK(before >= 0 && before < size() && after >= 0 && after < size(),
                   "a dependency on an unknown task");
  SPLITSCOPE_CHECK(before != after, "a task cannot wait on itself");
  auto& list = successors_[static_cast<size_t>(before)];
  if (std::find(list.begin(), list.end(), after) != list.end()) return;
  list.push_back(after);
  dependency_counts_[static_cast<size_t>(after)] += 1;
}

}  // namespace splitscope

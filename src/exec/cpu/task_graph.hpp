#pragma once
/// \file
/// What the scheduler runs: tasks, each bound to one lane of one device, and
/// the dependencies between them. It knows nothing of plans or kernels; the
/// CPU executor turns a Plan into a TaskGraph (plan_tasks.hpp).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// What a running task is given: the threads it may spread its kernel over
/// (the intra-op pool of the worker running it; one thread on copy lanes).
struct TaskContext {
  ParallelFor& parallel;
};

using TaskFunction = std::function<void(TaskContext&)>;

struct Task {
  int device = 0;
  Lane lane = Lane::kCompute;
  std::string label;  ///< names the task in error messages ("fc3 [0, 32)")
  TaskFunction work;
};

/// A DAG of tasks. Task ids are 0, 1, ... in the order added.
class TaskGraph {
 public:
  /// Adds a task; returns its id.
  int add(Task task);
  /// `after` may start only once `before` has finished. Repeats are ignored.
  void add_dependency(int before, int after);

  int size() const { return static_cast<int>(tasks_.size()); }
  const Task& task(int id) const { return tasks_.at(static_cast<size_t>(id)); }
  /// Tasks waiting on `id`, in the order the dependencies were added.
  const std::vector<int>& successors(int id) const { return successors_.at(static_cast<size_t>(id)); }
  /// Tasks `id` waits on.
  int dependency_count(int id) const { return dependency_counts_.at(static_cast<size_t>(id)); }
  /// Highest device index used, plus one.
  int device_count() const { return device_count_; }

 private:
  std::vector<Task> tasks_;
  std::vector<std::vector<int>> successors_;
  std::vector<int> dependency_counts_;
  int device_count_ = 0;
};

}  // namespace splitscope

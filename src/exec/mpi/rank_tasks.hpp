#pragma once
/// \file
/// One rank's part of a Plan as scheduler tasks (`--launcher mpi`): rank r
/// runs device r's ops and nothing else, on device r's values and weights
/// only. The plan_walk.hpp rules, as in the one-process cpu executor
/// (exec/cpu/plan_tasks.hpp), except where data crosses devices:
/// - a transfer into this rank: a receive, posted before each run into the
///   value's buffer (post_receives); its task, on the copy-in lane, waits
///   for it. Its end ends the transfer's span;
/// - a transfer out of this rank: a send task on the copy-out lane, after
///   the value's writer, that starts an MPI_Isend (completed by
///   finish_sends after the run). Its start starts the transfer's span;
/// - a collective this rank takes part in: one task on the host lane that
///   runs MPI's own collective over a communicator of the participants
///   (all-reduce: MPI_Iallreduce; all-gather: MPI_Iallgatherv; concat:
///   MPI_Igatherv to the root), in the order of the op's participants.
/// Receives are posted before any rank can send, and no lane waits on a
/// send, so no order of readiness can deadlock two ranks.

#include <mpi.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "exec/cpu/task_graph.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/executor.hpp"
#include "exec/mpi/mpi_wait.hpp"
#include "exec/mpi/rank_timeline.hpp"
#include "plan/plan.hpp"
#include "plan/plan_walk.hpp"

namespace splitscope {

class MpiSession;

/// Which values rank `rank` of a run of `plan` holds: its own device's, and
/// on rank 0 the network output's parts too (gathered there after a run).
bool rank_holds(const Plan& plan, const Value& value, int rank);

class RankTasks {
 public:
  /// Builds rank `session.rank()`'s tasks of `plan` over `buffers` and
  /// `weights` (all must outlive this), and a communicator per collective
  /// (every rank calls this, in the same order: MPI_Comm_split is
  /// collective). Throws std::logic_error where the plan breaks its rules,
  /// RunError where MPI fails.
  /// A `straggler` holding this rank's device back sleeps before the rank's
  /// first compute op of every run (held_back.hpp), as the cpu executor's does.
  RankTasks(const Plan& plan, const MpiSession& session, ValueBuffers& buffers, WeightStore& weights,
            const std::optional<StragglerDelay>& straggler = std::nullopt);
  ~RankTasks();
  RankTasks(const RankTasks&) = delete;
  RankTasks& operator=(const RankTasks&) = delete;

  const TaskGraph& graph() const { return graph_; }
  const std::vector<SpanSlot>& spans() const { return spans_; }
  const std::vector<RankTaskSpans>& task_spans() const { return task_spans_; }

  /// Before each run: the deadline every wait gives up at, and the receives
  /// of this rank's incoming transfers, posted.
  void post_receives(const MpiDeadline& deadline);
  /// After each run: waits until every send this run started has completed
  /// (its buffer may then be written again).
  void finish_sends();

 private:
  struct Receive {
    int from_rank = 0;
    int tag = 0;
    ChannelBlock into;
    std::string label;
  };

  void build(const PlanWalk& walk);
  int add(Task task, RankTaskSpans spans, const std::vector<int>& reads);
  void after_writer(int value, int task);
  void compute(const PlanOp& op, const PlanWalk& walk, std::vector<int>& op_task);
  void transfer(const PlanOp& op);
  void collective(const PlanOp& op);
  MPI_Comm communicator_of(const PlanOp& op, std::vector<int>& members);

  const Plan& plan_;
  std::optional<StragglerDelay> straggler_;
  const int rank_;
  const int largest_tag_;
  ValueBuffers& buffers_;
  WeightStore& weights_;
  TaskGraph graph_;
  std::vector<SpanSlot> spans_;
  std::vector<RankTaskSpans> task_spans_;
  std::vector<int> first_span_;  ///< by op
  std::vector<int> writer_;      ///< by value: the task writing it on this rank
  std::vector<std::vector<float>> scratch_;
  std::vector<Receive> receives_;
  std::vector<MPI_Request> receive_requests_;
  std::mutex sends_mutex_;
  std::vector<MPI_Request> send_requests_;
  std::vector<MPI_Comm> communicators_;
  std::vector<std::vector<float>> collective_staging_;
  MpiDeadline deadline_;
};

}  // namespace splitscope

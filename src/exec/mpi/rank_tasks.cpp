#include "exec/mpi/rank_tasks.hpp"

#include <algorithm>
#include <climits>
#include <fmt/format.h>

#include "exec/cpu/collectives.hpp"
#include "exec/cpu/compute_task.hpp"
#include "exec/cpu/held_back.hpp"
#include "exec/mpi/mpi_check.hpp"
#include "exec/mpi/mpi_session.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

/// A rank runs one device: its tasks are all "device 0" of its own scheduler.
constexpr int kRankDevice = 0;

int message_count(int64_t floats, const std::string& what) {
  if (floats > INT_MAX) {
    throw InputError("--launcher mpi", "",
                     fmt::format("{} moves {} floats in one message, more than MPI's int count allows; use a smaller "
                                 "--batch or more devices",
                                 what, floats));
  }
  return static_cast<int>(floats);
}

int index_of(const std::vector<int>& devices, int device) {
  const auto found = std::find(devices.begin(), devices.end(), device);
  return found == devices.end() ? -1 : static_cast<int>(found - devices.begin());
}

}  // namespace

bool rank_holds(const Plan& plan, const Value& value, int rank) {
  if (value.device == rank) return true;
  return rank == 0 && std::find(plan.outputs.begin(), plan.outputs.end(), value.id) != plan.outputs.end();
}

RankTasks::RankTasks(const Plan& plan, const MpiSession& session, ValueBuffers& buffers, WeightStore& weights,
                     const std::optional<StragglerDelay>& straggler)
    : plan_(plan),
      straggler_(straggler),
      rank_(session.rank()),
      largest_tag_(session.largest_tag()),
      buffers_(buffers),
      weights_(weights),
      writer_(plan.values.size(), -1) {
  const PlanWalk walk = walk_plan(plan_);
  first_span_.assign(plan_.ops.size(), -1);
  for (const PlanOp& op : plan_.ops) {
    first_span_[static_cast<size_t>(op.id)] = static_cast<int>(spans_.size());
    for (const SpanSlot& slot : op_spans(plan_, op)) spans_.push_back(slot);
  }
  build(walk);
}

RankTasks::~RankTasks() {
  for (MPI_Comm& communicator : communicators_) {
    if (communicator != MPI_COMM_NULL) MPI_Comm_free(&communicator);
  }
}

void RankTasks::build(const PlanWalk& walk) {
  int64_t scratch = 0;
  for (const PlanOp& op : plan_.ops) {
    if (op.role == OpRole::kCompute && op.device == rank_) scratch = std::max(scratch, compute_scratch_floats(plan_, op));
  }
  scratch_.assign(1, std::vector<float>(static_cast<size_t>(scratch), 0.0f));
  std::vector<int> op_task(plan_.ops.size(), -1);
  for (int id : walk.order) {
    const PlanOp& op = plan_.op(id);
    switch (op.role) {
      case OpRole::kCompute:
      case OpRole::kEpilogue:
      case OpRole::kUpdate: compute(op, walk, op_task); break;
      case OpRole::kTransfer: transfer(op); break;
      case OpRole::kCollective: collective(op); break;
    }
  }
}

int RankTasks::add(Task task, RankTaskSpans spans, const std::vector<int>& reads) {
  const int id = graph_.add(std::move(task));
  task_spans_.push_back(spans);
  for (int value : reads) after_writer(value, id);
  return id;
}

void RankTasks::after_writer(int value, int task) {
  if (value < 0 || plan_.value(value).producer < 0) return;
  const int before = writer_.at(static_cast<size_t>(value));
  SPLITSCOPE_CHECK(before >= 0, fmt::format("rank {}: {} reads value {} before any of its ops writes it", rank_,
                                            graph_.task(task).label, value));
  graph_.add_dependency(before, task);
}

void RankTasks::compute(const PlanOp& op, const PlanWalk& walk, std::vector<int>& op_task) {
  if (op.device != rank_) return;
  const int before = walk.schedule_previous[static_cast<size_t>(op.id)];
  TaskFunction work = compute_task(plan_, op, buffers_, weights_, scratch_.front().data());
  if (straggler_ && straggler_->holds_back(rank_) && before < 0) work = held_back(std::move(work), straggler_->ms);
  const int task = add({kRankDevice, Lane::kCompute, op_label(plan_, op), std::move(work)},
                       {first_span_[static_cast<size_t>(op.id)], -1, -1}, op.inputs);
  if (before >= 0) graph_.add_dependency(op_task.at(static_cast<size_t>(before)), task);
  op_task[static_cast<size_t>(op.id)] = task;
  for (int value : op.outputs) writer_.at(static_cast<size_t>(value)) = task;
}

void RankTasks::transfer(const PlanOp& op) {
  SPLITSCOPE_CHECK(op.inputs.size() == 1 && op.outputs.size() == 1, "a transfer moves one value");
  if (op.device != rank_ && op.src_device != rank_) return;
  const std::string label = op_label(plan_, op);
  SPLITSCOPE_CHECK(op.device != op.src_device, label + ": a transfer within one device");
  if (op.id > largest_tag_) {
    throw RunError(fmt::format("{}: op {} needs a message tag above this MPI's largest ({})", label, op.id,
                               largest_tag_));
  }
  const int span = first_span_[static_cast<size_t>(op.id)];
  if (op.device == rank_) {
    const int to = op.outputs[0];
    receives_.push_back({op.src_device, op.id, buffers_.block(to), label});
    const size_t index = receives_.size() - 1;
    const int task = add({kRankDevice, Lane::kCopyIn, label + " (receive)",
                          [this, index](TaskContext&) {
                            wait_for_request(receive_requests_.at(index), deadline_,
                                             fmt::format("{} from rank {}", receives_[index].label,
                                                         receives_[index].from_rank));
                          }},
                         {-1, -1, span}, {});
    writer_.at(static_cast<size_t>(to)) = task;
    return;
  }
  const ConstChannelBlock source = std::as_const(buffers_).block(op.inputs[0]);
  const int count = message_count(source.floats(), label);
  const int to_rank = op.device;
  const int tag = op.id;
  add({kRankDevice, Lane::kCopyOut, label + " (send)",
       [this, source, count, to_rank, tag, label](TaskContext&) {
         MPI_Request request = MPI_REQUEST_NULL;
         check_mpi(MPI_Isend(source.data, count, MPI_FLOAT, to_rank, tag, MPI_COMM_WORLD, &request),
                   "MPI_Isend (" + label + ")");
         std::lock_guard lock(sends_mutex_);
         send_requests_.push_back(request);
       }},
      {-1, span, -1}, op.inputs);
}

MPI_Comm RankTasks::communicator_of(const PlanOp& op, std::vector<int>& members) {
  members = op.participants;
  if (op.collective == CollectiveKind::kConcat && index_of(members, op.device) < 0) members.push_back(op.device);
  const int position = index_of(members, rank_);
  MPI_Comm communicator = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(MPI_COMM_WORLD, position < 0 ? MPI_UNDEFINED : 0, std::max(position, 0), &communicator),
            "MPI_Comm_split (" + op_label(plan_, op) + ")");
  if (communicator != MPI_COMM_NULL) {
    check_mpi(MPI_Comm_set_errhandler(communicator, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  communicators_.push_back(communicator);
  return communicator;
}

void RankTasks::collective(const PlanOp& op) {
  std::vector<int> members;
  const MPI_Comm communicator = communicator_of(op, members);
  if (communicator == MPI_COMM_NULL) return;
  const std::string label = op_label(plan_, op);
  const int first = first_span_[static_cast<size_t>(op.id)];
  const int slot = index_of(op.participants, rank_);  // -1: the root of a concat that holds no part
  // A bucketed all-reduce holds several values (segments) per participant,
  // participant-major; a broadcast one input, the root's.
  const bool broadcast = op.collective == CollectiveKind::kBroadcast;
  const size_t segments = broadcast ? 1 : op.inputs.size() / op.participants.size();
  int delivery = -1;  // my output(s), by participant
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    if (plan_.value(op.outputs[i]).device == rank_) delivery = static_cast<int>(i / segments);
  }
  std::vector<int> reads;
  if (broadcast) {
    if (slot == 0) reads.push_back(op.inputs.at(0));
  } else {
    for (size_t k = 0; slot >= 0 && k < segments; ++k) reads.push_back(op.inputs.at(static_cast<size_t>(slot) * segments + k));
  }
  const RankTaskSpans spans = delivery >= 0 ? RankTaskSpans{first + delivery, -1, -1} : RankTaskSpans{-1, first, -1};
  std::string ranks;
  for (int member : members) ranks += (ranks.empty() ? "" : ", ") + std::to_string(member);
  const std::string what = label + " over ranks [" + ranks + "]";

  TaskFunction work;
  if (op.collective == CollectiveKind::kBroadcast) {
    SPLITSCOPE_CHECK(slot >= 0 && delivery >= 0 && members.front() == op.device,
                     label + ": a broadcast participant without its output, or a root not first");
    const ChannelBlock out = buffers_.block(op.outputs.at(static_cast<size_t>(delivery)));
    const ConstChannelBlock in = slot == 0 ? std::as_const(buffers_).block(op.inputs.at(0)) : ConstChannelBlock{};
    SPLITSCOPE_CHECK(slot != 0 || in.floats() == out.floats(), label + ": a broadcast changes the size of its value");
    const int count = message_count(out.floats(), label);
    work = [this, in, out, count, communicator, what](TaskContext&) {
      if (in.data != nullptr) std::copy(in.data, in.data + in.floats(), out.data);
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Ibcast(out.data, count, MPI_FLOAT, 0, communicator, &request), "MPI_Ibcast (" + what + ")");
      wait_for_request(request, deadline_, what);
    };
  } else if (op.collective == CollectiveKind::kReduceScatter) {
    SPLITSCOPE_CHECK(slot >= 0 && delivery >= 0, label + ": a reduce-scatter participant without its parts");
    const ConstChannelBlock in = std::as_const(buffers_).block(op.inputs.at(static_cast<size_t>(slot)));
    const ChannelBlock out = buffers_.block(op.outputs.at(static_cast<size_t>(delivery)));
    std::vector<int> counts;  // each member's chunk, in floats
    int64_t total = 0;
    for (int output : op.outputs) {
      const int64_t floats = plan_.value(output).bytes / 4;
      counts.push_back(message_count(floats, label));
      total += floats;
    }
    SPLITSCOPE_CHECK(in.floats() == total, label + ": the chunks do not tile the tensor");
    // Several rows (sequence parallelism's [B, T, H]): each member's chunk
    // is its channels of every row, so the input travels packed chunk by
    // chunk, each chunk's rows end to end, as each output holds its own.
    std::vector<Range> chunks;
    if (in.rows > 1) {
      for (int output : op.outputs) chunks.push_back(plan_.value(output).channels);
    }
    float* packed = chunks.empty() ? nullptr : collective_staging_.emplace_back(static_cast<size_t>(total)).data();
    work = [this, in, out, counts, chunks, packed, communicator, what](TaskContext&) {
      const float* send = in.data;
      if (packed != nullptr) {
        float* at = packed;
        for (const Range& chunk : chunks) {
          for (int64_t row = 0; row < in.rows; ++row) {
            at = std::copy_n(in.at(row, chunk.begin), chunk.size() * in.inner, at);
          }
        }
        send = packed;
      }
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Ireduce_scatter(send, out.data, counts.data(), MPI_FLOAT, MPI_SUM, communicator, &request),
                "MPI_Ireduce_scatter (" + what + ")");
      wait_for_request(request, deadline_, what);
    };
  } else if (op.collective == CollectiveKind::kAllReduce) {
    SPLITSCOPE_CHECK(slot >= 0 && delivery >= 0, label + ": an all-reduce participant without its parts");
    std::vector<ConstChannelBlock> ins;
    std::vector<ChannelBlock> outs;
    int64_t total = 0;
    for (size_t k = 0; k < segments; ++k) {
      ins.push_back(std::as_const(buffers_).block(op.inputs.at(static_cast<size_t>(slot) * segments + k)));
      outs.push_back(buffers_.block(op.outputs.at(static_cast<size_t>(delivery) * segments + k)));
      SPLITSCOPE_CHECK(ins.back().floats() == outs.back().floats(), label + ": an all-reduce changes the size of its value");
      total += outs.back().floats();
    }
    const int count = message_count(total, label);
    // A bucket travels as one message, packed as DDP packs its flat bucket.
    float* packed = segments > 1 ? collective_staging_.emplace_back(static_cast<size_t>(total)).data() : nullptr;
    work = [this, ins, outs, packed, count, communicator, what](TaskContext&) {
      MPI_Request request = MPI_REQUEST_NULL;
      if (packed == nullptr) {
        check_mpi(MPI_Iallreduce(ins[0].data, outs[0].data, count, MPI_FLOAT, MPI_SUM, communicator, &request),
                  "MPI_Iallreduce (" + what + ")");
        wait_for_request(request, deadline_, what);
        return;
      }
      float* at = packed;
      for (const ConstChannelBlock& in : ins) at = std::copy(in.data, in.data + in.floats(), at);
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, packed, count, MPI_FLOAT, MPI_SUM, communicator, &request),
                "MPI_Iallreduce (" + what + ")");
      wait_for_request(request, deadline_, what);
      const float* from = packed;
      for (const ChannelBlock& out : outs) {
        std::copy(from, from + out.floats(), out.data);
        from += out.floats();
      }
    };
  } else {
    // All-gather and concat: every part lands, packed, in a staging buffer,
    // then in its channels of the whole tensor (the parts are channel slices,
    // strided in it).
    std::vector<int> counts(members.size(), 0);
    std::vector<int> displacements(members.size(), 0);
    std::vector<ConstChannelBlock> parts;
    int64_t total = 0;
    for (size_t m = 0; m < members.size(); ++m) {
      const int part = index_of(op.participants, members[m]);
      if (part < 0) continue;
      ChannelBlock layout = value_layout(plan_, plan_.value(op.inputs.at(static_cast<size_t>(part))));
      counts[m] = message_count(layout.floats(), label);
      displacements[m] = message_count(total, label);
      total += layout.floats();
      parts.push_back(layout);
    }
    const bool gathers_here = delivery >= 0;
    std::vector<float>& staging = collective_staging_.emplace_back(gathers_here ? static_cast<size_t>(total) : 0);
    for (size_t p = 0, offset = 0; p < parts.size(); ++p) {
      parts[p].data = gathers_here ? staging.data() + offset : nullptr;
      offset += static_cast<size_t>(parts[p].floats());
    }
    const ConstChannelBlock in =
        slot >= 0 ? std::as_const(buffers_).block(op.inputs.at(static_cast<size_t>(slot))) : ConstChannelBlock{};
    const ChannelBlock out = gathers_here ? buffers_.block(op.outputs.at(static_cast<size_t>(delivery))) : ChannelBlock{};
    const int send_count = slot >= 0 ? message_count(in.floats(), label) : 0;
    const bool all_gather = op.collective == CollectiveKind::kAllGather;
    const int root = index_of(members, op.device);
    float* gathered = staging.data();
    work = [this, in, out, send_count, counts, displacements, parts, gathered, all_gather, root, gathers_here,
            communicator, what](TaskContext&) {
      MPI_Request request = MPI_REQUEST_NULL;
      if (all_gather) {
        check_mpi(MPI_Iallgatherv(in.data, send_count, MPI_FLOAT, gathered, counts.data(), displacements.data(),
                                  MPI_FLOAT, communicator, &request),
                  "MPI_Iallgatherv (" + what + ")");
      } else {
        check_mpi(MPI_Igatherv(in.data, send_count, MPI_FLOAT, gathered, counts.data(), displacements.data(),
                               MPI_FLOAT, root, communicator, &request),
                  "MPI_Igatherv (" + what + ")");
      }
      wait_for_request(request, deadline_, what);
      if (gathers_here) gather_channels(parts, out);
    };
  }
  const int task = add({kRankDevice, Lane::kHost, label, std::move(work)}, spans, reads);
  for (size_t k = 0; delivery >= 0 && k < segments; ++k) {
    writer_.at(static_cast<size_t>(op.outputs[static_cast<size_t>(delivery) * segments + k])) = task;
  }
}

void RankTasks::post_receives(const MpiDeadline& deadline) {
  deadline_ = deadline;
  receive_requests_.assign(receives_.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < receives_.size(); ++i) {
    const Receive& receive = receives_[i];
    check_mpi(MPI_Irecv(receive.into.data, message_count(receive.into.floats(), receive.label), MPI_FLOAT,
                        receive.from_rank, receive.tag, MPI_COMM_WORLD, &receive_requests_[i]),
              "MPI_Irecv (" + receive.label + ")");
  }
}

void RankTasks::finish_sends() {
  std::vector<MPI_Request> sends;
  {
    std::lock_guard lock(sends_mutex_);
    sends.swap(send_requests_);
  }
  for (MPI_Request& request : sends) wait_for_request(request, deadline_, "a send to another rank to complete");
}

}  // namespace splitscope

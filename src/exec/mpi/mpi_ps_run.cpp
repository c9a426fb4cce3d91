#include "exec/mpi/mpi_ps_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/parameter_shard.hpp"
#include "exec/cpu/ps_worker.hpp"
#include "exec/mpi/byte_pack.hpp"
#include "exec/mpi/mpi_check.hpp"
#include "exec/mpi/mpi_wait.hpp"
#include "exec/mpi/rank_setup.hpp"
#include "exec/ps/run_record.hpp"
#include "exec/training_divergence.hpp"
#include "plan/parameter_shards.hpp"
#include "plan/plan_part.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using Clock = std::chrono::steady_clock;

/// The messages of the protocol, by tag (on a communicator of the run's own).
enum Tag : int {
  kPull = 1,   ///< worker -> shard: int, the version it last pulled
  kPullReply,  ///< shard -> worker: int[2], the version it may pull and whether training is over
  kWeights,    ///< shard -> worker: its weights, flat (unless over)
  kPush,       ///< worker -> shard: int64[2], the version the gradient was computed on and its rows
  kGradient,   ///< worker -> shard: the gradient of the shard's weights, flat
  kAck,        ///< shard -> worker: int, the push has been dealt with
  kDone,       ///< worker -> shard: int, it stops
};

int message_count(int64_t count, const std::string& what) {
  if (count > INT_MAX) {
    throw InputError("--strategy", "ps",
                     fmt::format("under --launcher mpi sends {} as one message of {} elements, more than MPI's "
                                 "int count takes; use more shards (--ps K)",
                                 what, count));
  }
  return static_cast<int>(count);
}

class MpiPsRun {
 public:
  MpiPsRun(const MpiSession& session, const Plan& plan, const RunOptions& options, const ParameterServerOptions& ps)
      : session_(session),
        plan_(plan),
        options_(options),
        ps_(ps),
        workers_(ps_workers(plan)),
        threads_(rank_threads(options, session)),
        setup_threads_(threads_.intra_op),
        deadline_(run_deadline(options)) {
    const std::vector<int> shard_of = parameter_shards(plan, 0);
    sets_of_shard_.resize(static_cast<size_t>(plan.parameter_servers));
    for (size_t set = 0; set < shard_of.size(); ++set) {
      sets_of_shard_.at(static_cast<size_t>(shard_of[set])).push_back(static_cast<int>(set));
    }
    const int rank = session.rank();
    if (rank < workers_) {
      worker_ = std::make_unique<PsWorker>(plan, rank, options, threads_, setup_threads_);
    } else if (rank < plan.devices) {
      make_shard(rank - workers_);
    }
    check_mpi(MPI_Comm_dup(session.world(), &comm_), "MPI_Comm_dup (parameter-server messages)");
  }

  ~MpiPsRun() {
    // Freed (and checked) by run(); here only when a failure left it, as the job is about to be aborted.
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  MpiPsRun(const MpiPsRun&) = delete;
  MpiPsRun& operator=(const MpiPsRun&) = delete;

  RunResult run() {
    // One clock for every rank: rank 0's, from when the first rank left the barrier.
    check_mpi(MPI_Barrier(comm_), "MPI_Barrier (parameter-server start)");
    const double mine = steady_now_us() + session_.clock_offset_us();
    double zero = mine;
    check_mpi(MPI_Allreduce(&mine, &zero, 1, MPI_DOUBLE, MPI_MIN, comm_), "MPI_Allreduce (parameter-server start)");
    start_ = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::micro>(zero - session_.clock_offset_us())));
    if (worker_) work();
    if (shard_) serve();
    RunResult result = gather();
    check_mpi(MPI_Comm_free(&comm_), "MPI_Comm_free (parameter-server messages)");
    return result;
  }

 private:
  int shard_rank(size_t shard) const { return workers_ + static_cast<int>(shard); }
  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - start_).count(); }
  /// Each wait may last --timeout-ms from when it begins.
  MpiDeadline wait_deadline() const {
    if (!deadline_) return std::nullopt;
    return Clock::now() + *deadline_;
  }

  void send(const void* data, int64_t count, MPI_Datatype type, int to, Tag tag, const std::string& what) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(data, message_count(count, what), type, to, tag, comm_, &request), "MPI_Isend (" + what + ")");
    wait_for_request(request, wait_deadline(), what);
  }
  void receive(void* data, int64_t count, MPI_Datatype type, int from, Tag tag, const std::string& what) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Irecv(data, message_count(count, what), type, from, tag, comm_, &request), "MPI_Irecv (" + what + ")");
    wait_for_request(request, wait_deadline(), what);
  }

  /// Shard `index`'s weight sets at the seed's weights, as every replica starts.
  void make_shard(int index) {
    shard_ = std::make_unique<ParameterShard>(ps_, workers_, index, workers_ + index,
                                              plan_.graph->training()->optimizer, plan_.graph->batch());
    const DevicePart part = device_part(plan_, 0);
    WeightStore weights(*plan_.graph, options_.seed, setup_threads_);
    for (int set : sets_of_shard_.at(static_cast<size_t>(index))) {
      shard_->hold(set, *weights.get(part.plan.value(part.plan.parameters.at(static_cast<size_t>(set)))));
    }
  }

  void work() {
    PsWorker& worker = *worker_;
    const size_t shards = sets_of_shard_.size();
    std::vector<int> pulled(shards, -1);
    std::vector<float> flat;
    for (int step = 0;; ++step) {
      if (ps_.mode == PsMode::kAsync && step == ps_.steps) break;
      // Pull: ask every shard, then take each answer.
      for (size_t k = 0; k < shards; ++k) {
        send(&pulled[k], 1, MPI_INT, shard_rank(k), kPull, fmt::format("a pull request to shard {}", k));
      }
      bool over = false;
      double pull_start = -1;
      int64_t pulled_bytes = 0;
      for (size_t k = 0; k < shards; ++k) {
        std::array<int, 2> answer{};
        receive(answer.data(), 2, MPI_INT, shard_rank(k), kPullReply, fmt::format("shard {}'s answer to a pull", k));
        if (pull_start < 0) pull_start = now_us();  // the wait for a version is not the pull's
        if (answer[1] != 0) {
          over = true;
          continue;
        }
        flat.resize(static_cast<size_t>(shard_floats(k)));
        receive(flat.data(), static_cast<int64_t>(flat.size()), MPI_FLOAT, shard_rank(k), kWeights,
                fmt::format("shard {}'s weights", k));
        const float* at = flat.data();
        for (int set : sets_of_shard_[k]) at = read_flat(at, worker.weights(set));
        pulled_bytes += static_cast<int64_t>(flat.size()) * 4;
        pulled[k] = answer[0];
      }
      if (over) break;
      record_.spans.push_back(pull_span(worker.index(), pull_start, now_us(), pulled_bytes));
      // Compute.
      std::vector<Span> spans = worker.step(start_, deadline_);
      double step_end = 0;
      for (const Span& span : spans) step_end = std::max(step_end, span.end_us);
      record_.spans.insert(record_.spans.end(), spans.begin(), spans.end());
      record_.step_losses.push_back({step_end, worker.loss(*plan_.graph, options_.seed), worker.rows().size()});
      // Push, then wait until every shard has dealt with it.
      const double push_start = now_us();
      int64_t pushed_bytes = 0;
      for (size_t k = 0; k < shards; ++k) {
        flat.clear();
        for (int set : sets_of_shard_[k]) {
          const ConstChannelBlock gradient = worker.gradient(set);
          flat.insert(flat.end(), gradient.data, gradient.data + gradient.floats());
        }
        const std::array<int64_t, 2> header{pulled[k], worker.rows().size()};
        send(header.data(), 2, MPI_INT64_T, shard_rank(k), kPush, fmt::format("a push to shard {}", k));
        send(flat.data(), static_cast<int64_t>(flat.size()), MPI_FLOAT, shard_rank(k), kGradient,
             fmt::format("a gradient to shard {}", k));
        pushed_bytes += static_cast<int64_t>(flat.size()) * 4;
      }
      for (size_t k = 0; k < shards; ++k) {
        int ack = 0;
        receive(&ack, 1, MPI_INT, shard_rank(k), kAck, fmt::format("shard {}'s acknowledgement of a push", k));
      }
      record_.spans.push_back(push_span(worker.index(), push_start, now_us(), pushed_bytes));
    }
    for (size_t k = 0; k < shards; ++k) {
      const int done = 1;
      send(&done, 1, MPI_INT, shard_rank(k), kDone, fmt::format("the end of work to shard {}", k));
    }
  }

  int64_t shard_floats(size_t shard) {
    int64_t floats = 0;
    for (int set : sets_of_shard_.at(shard)) floats += worker_->weights(set).bytes() / 4;
    return floats;
  }

  void serve() {
    ParameterShard& shard = *shard_;
    const std::function<double()> clock = [this] { return now_us(); };
    std::vector<std::pair<int, int>> waiting;  // pulls the ledger holds back: (worker rank, version pulled)
    std::vector<float> gradient(static_cast<size_t>(shard.gradient_floats()));
    std::vector<float> weights;
    const auto answer = [&](int worker) {
      const std::array<int, 2> reply{shard.ledger().version(), shard.ledger().finished() ? 1 : 0};
      send(reply.data(), 2, MPI_INT, worker, kPullReply, fmt::format("an answer to worker {}'s pull", worker));
      if (reply[1] != 0) return;
      weights.clear();
      for (size_t i = 0; i < shard.weight_sets().size(); ++i) append_flat(shard.master(i), weights);
      send(weights.data(), static_cast<int64_t>(weights.size()), MPI_FLOAT, worker, kWeights,
           fmt::format("weights to worker {}", worker));
    };
    for (int done = 0; done < workers_;) {
      const MPI_Status status = wait_for_message(comm_, wait_deadline(), "a worker's pull, push or end");
      const int worker = status.MPI_SOURCE;
      switch (status.MPI_TAG) {
        case kPull: {
          int pulled = 0;
          receive(&pulled, 1, MPI_INT, worker, kPull, fmt::format("worker {}'s pull", worker));
          if (shard.ledger().worker_waits(pulled)) {
            waiting.emplace_back(worker, pulled);
          } else {
            answer(worker);
          }
          break;
        }
        case kPush: {
          std::array<int64_t, 2> header{};
          receive(header.data(), 2, MPI_INT64_T, worker, kPush, fmt::format("worker {}'s push", worker));
          receive(gradient.data(), static_cast<int64_t>(gradient.size()), MPI_FLOAT, worker, kGradient,
                  fmt::format("worker {}'s gradient", worker));
          shard.offer(static_cast<int>(header[0]), header[1], gradient, clock);
          const int ack = 1;
          send(&ack, 1, MPI_INT, worker, kAck, fmt::format("an acknowledgement to worker {}", worker));
          // An update may have let the held-back pulls go.
          const auto released = std::stable_partition(waiting.begin(), waiting.end(), [&](const auto& pull) {
            return shard.ledger().worker_waits(pull.second);
          });
          for (auto pull = released; pull != waiting.end(); ++pull) answer(pull->first);
          waiting.erase(released, waiting.end());
          break;
        }
        case kDone: {
          int ignored = 0;
          receive(&ignored, 1, MPI_INT, worker, kDone, fmt::format("worker {}'s end", worker));
          ++done;
          break;
        }
        default:
          throw RunError(fmt::format("shard rank {}: a message with unknown tag {} from rank {}", session_.rank(),
                                     status.MPI_TAG, worker));
      }
    }
    SPLITSCOPE_CHECK(waiting.empty(), "a worker ended with a pull unanswered");
  }

  /// Every rank's record, spans, losses, tallies and output rows, on every rank.
  RunResult gather() {
    BytePacker mine;
    if (shard_) {
      record_.spans.insert(record_.spans.end(), shard_->spans().begin(), shard_->spans().end());
    }
    pack_spans(record_.spans, mine);
    mine.put_vector(record_.step_losses);
    mine.put(static_cast<int>(shard_ ? 1 : 0));
    if (shard_) {
      const ShardTally tally = shard_->tally();
      mine.put_vector(tally.update_ends_us);
      mine.put_vector(tally.staleness);
      mine.put(tally.applied);
      mine.put(tally.dropped);
      mine.put(tally.applied_rows);
      mine.put(tally.bytes);
    }
    mine.put(static_cast<int>(worker_ ? 1 : 0));
    if (worker_) {
      const ConstChannelBlock rows = worker_->output();
      mine.put(worker_->rows().begin);
      mine.put_vector(std::vector<float>(rows.data, rows.data + rows.floats()));
    }
    const std::vector<char> all = all_gather(mine.bytes());

    PsRunRecord record;
    HostTensor output = empty_network_output(*plan_.graph);
    const int64_t width = static_cast<int64_t>(output.data.size()) / plan_.graph->batch();
    ByteReader reader(all.data(), all.size());
    for (int rank = 0; rank < session_.size(); ++rank) {
      unpack_spans(reader, record.spans);
      const std::vector<StepLoss> losses = reader.get_vector<StepLoss>();
      record.step_losses.insert(record.step_losses.end(), losses.begin(), losses.end());
      if (reader.get<int>() != 0) {
        ShardTally tally;
        tally.update_ends_us = reader.get_vector<double>();
        tally.staleness = reader.get_vector<int64_t>();
        tally.applied = reader.get<int64_t>();
        tally.dropped = reader.get<int64_t>();
        tally.applied_rows = reader.get<int64_t>();
        tally.bytes = reader.get<int64_t>();
        record.tallies.push_back(std::move(tally));
      }
      if (reader.get<int>() != 0) {
        const auto begin = reader.get<int64_t>();
        const std::vector<float> rows = reader.get_vector<float>();
        SPLITSCOPE_CHECK(static_cast<int64_t>(rows.size()) % std::max<int64_t>(1, width) == 0,
                         "a ps worker's output is not whole rows");
        std::copy(rows.begin(), rows.end(), output.data.begin() + begin * width);
      }
    }
    SPLITSCOPE_CHECK(reader.done(), "the gathered parameter-server records were not read to their end");
    RunInfo info = mpi_run_info(plan_, session_, threads_);
    info.facts.emplace_back("parameter servers", fmt::format("{} shard rank(s), {} worker rank(s)",
                                                             plan_.parameter_servers, workers_));
    RunResult result = parameter_server_result(ps_, workers_, std::move(record), std::move(info));
    // Every rank holds the same losses, so every rank stops alike.
    check_losses_finite(result.losses, plan_.graph->training()->optimizer, ps_.mode == PsMode::kAsync);
    result.output = std::move(output);
    return result;
  }

  static void pack_spans(const std::vector<Span>& spans, BytePacker& into) {
    into.put(static_cast<int64_t>(spans.size()));
    for (const Span& span : spans) {
      into.put(span.device);
      into.put(span.lane);
      into.put(span.kind);
      into.put(span.op);
      into.put_string(span.label);
      into.put(span.start_us);
      into.put(span.end_us);
      into.put(span.flops);
      into.put(span.bytes);
    }
  }

  static void unpack_spans(ByteReader& from, std::vector<Span>& into) {
    const auto count = from.get<int64_t>();
    for (int64_t i = 0; i < count; ++i) {
      Span span;
      span.device = from.get<int>();
      span.lane = from.get<Lane>();
      span.kind = from.get<SpanKind>();
      span.op = from.get<int>();
      span.label = from.get_string();
      span.start_us = from.get<double>();
      span.end_us = from.get<double>();
      span.flops = from.get<int64_t>();
      span.bytes = from.get<int64_t>();
      into.push_back(std::move(span));
    }
  }

  /// Every rank's bytes, rank after rank.
  std::vector<char> all_gather(const std::vector<char>& mine) {
    const int size = message_count(static_cast<int64_t>(mine.size()), "a rank's record");
    std::vector<int> sizes(static_cast<size_t>(session_.size()));
    check_mpi(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather (record sizes)");
    std::vector<int> offsets(sizes.size());
    int64_t total = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      offsets[r] = message_count(total, "the gathered records");
      total += sizes[r];
    }
    std::vector<char> all(static_cast<size_t>(total));
    check_mpi(MPI_Allgatherv(mine.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, comm_),
              "MPI_Allgatherv (records)");
    return all;
  }

  const MpiSession& session_;
  const Plan& plan_;
  RunOptions options_;
  ParameterServerOptions ps_;
  int workers_;
  ThreadConfig threads_;
  IntraOpPool setup_threads_;
  std::optional<std::chrono::microseconds> deadline_;
  std::vector<std::vector<int>> sets_of_shard_;  ///< each shard's weight sets, in message order
  std::unique_ptr<PsWorker> worker_;             ///< on a worker's rank
  std::unique_ptr<ParameterShard> shard_;        ///< on a shard's rank
  MPI_Comm comm_ = MPI_COMM_NULL;
  Clock::time_point start_;
  PsRunRecord record_;  ///< this rank's
};

}  // namespace

RunResult run_mpi_parameter_server(const MpiSession& session, const Plan& plan, const RunOptions& options,
                                   const ParameterServerOptions& ps) {
  SPLITSCOPE_CHECK(plan.traits.parameter_server && plan.parameter_servers > 0 && plan.graph->is_training(),
                   "run_mpi_parameter_server() of a plan that is not ps training");
  const int workers = ps_workers(plan);
  check_parameter_server_options(ps, workers);
  check_ps_straggler(options, workers);
  MpiPsRun run(session, plan, options, ps);
  return run.run();
}

}  // namespace splitscope

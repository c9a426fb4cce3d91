// `calibrate --backend cpu` (cpu_calibration.hpp).

#include "exec/cpu/cpu_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "calibration/calibration_fits.hpp"
#include "exec/cpu/call_timing.hpp"
#include "exec/cpu/compute_task.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/host_info.hpp"
#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/kernels/activation.hpp"
#include "exec/cpu/kernels/conv2d.hpp"
#include "exec/cpu/kernels/gemm.hpp"
#include "exec/cpu/kernels/pooling.hpp"
#include "exec/cpu/kernels/recurrent_cell.hpp"
#include "exec/cpu/scheduler.hpp"
#include "ir/layer.hpp"
#include "ir/lower.hpp"
#include "ir/ops/op_def.hpp"
#include "ir/model_parser.hpp"
#include "ir/slice.hpp"
#include "partitioners/partitioner.hpp"
#include "util/check.hpp"
#include "util/thread_affinity.hpp"
#include "util/utc_time.hpp"

namespace splitscope {
namespace {

using Clock = std::chrono::steady_clock;

/// The grid of sgemm shapes timed: every m of `rows`, n of `outputs` and k
/// of `inputs`. n and k log-spaced by 4 from 1 to past the sizes where
/// OpenBLAS's blocked kernels reach their plateau, then 2048, the largest a
/// layer of the zoo gives most dimensions, and for n also 4096, the gate
/// width of a 1024-unit LSTM: a product of few rows streams its weights,
/// and its rate falls with their size where they leave the caches (one
/// thread of the build VM ran (8, 2048, 1024) at 70 GFLOP/s and (8, 4096,
/// 1024) at 36-46; held at the 2048 edge, lstm's 8-row pipeline steps were
/// priced 19% fast). m, a layer's rows (the batch, or its share of a split
/// or a micro-batch: powers of two in the zoo), where the rate climbs
/// steepest, every power of two to 2048. The full grid is 2.1e11 FLOPs a
/// pass (9.5e10 before 4096), two seconds on one thread here.
struct GemmGridAxes {
  std::vector<int64_t> rows;
  std::vector<int64_t> outputs;
  std::vector<int64_t> inputs;
};

GemmGridAxes gemm_grid_axes(bool quick) {
  if (quick) return {{4, 64, 1024}, {4, 64, 1024}, {4, 64, 1024}};
  return {{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048},
          {1, 4, 16, 64, 256, 1024, 2048, 4096},
          {1, 4, 16, 64, 256, 1024, 2048}};
}

/// Products of more FLOPs than this vary least, and are timed in at most 3
/// sweeps of the grid; after the first, without a warm-up call before them:
/// on the build VM (2026-12-02, one thread, the grid's 89 such shapes in
/// sweep order) the first call after the shape before it took 0.94-1.15x
/// the second, 1.00x in sum, so their warm-up buys nothing.
constexpr double kWarmedGemmFlops = 1e8;

/// The CPUs of pool device `device` of `threads` each, as a run pins its
/// compute worker and intra-op helpers (scheduler.cpp): empty where the
/// process may not use that many.
std::vector<int> device_cpus(const std::vector<int>& allowed, int device, int threads) {
  const auto first = static_cast<size_t>(device * threads);
  if (allowed.size() < first + static_cast<size_t>(threads)) return {};
  return std::vector<int>(allowed.begin() + static_cast<ptrdiff_t>(first),
                          allowed.begin() + static_cast<ptrdiff_t>(first) + threads);
}

/// A pool device's intra-op threads: its own pool, or the caller alone for one thread; the helpers pinned to
/// cpus[1..] (cpus[0] is its caller's) where `cpus` is given.
std::unique_ptr<ParallelFor> pinned_device_threads(int threads, const std::vector<int>& cpus) {
  if (threads <= 1) return std::make_unique<SerialFor>();
  auto pool = std::make_unique<IntraOpPool>(threads);
  if (static_cast<int>(cpus.size()) == threads) pool->pin_helpers(std::vector<int>(cpus.begin() + 1, cpus.end()));
  return pool;
}


/// The other devices of a pool, each on its own threads and buffers,
/// computing an m×n×k product over and over from construction until
/// destruction, so that the device timed shares the cores' caches, memory
/// and (on SMT) execution units as it does when a split keeps every device
/// busy. set_shape() moves them to another product; wait_running() returns
/// once each is computing the current one.
class BusyNeighbours {
 public:
  /// Neighbour d runs as pool device d + 1 of `allowed` (device_cpus()), pinned where they fit, with buffers for
  /// products up to m×n×k (set_shape()). With `b_copies` > 1 each product reads the next of that many copies of
  /// B, so that B streams from memory (measure_weight_stream()).
  BusyNeighbours(int devices, int threads, int64_t m, int64_t n, int64_t k, const std::vector<int>& allowed,
                 int b_copies = 1)
      : running_(std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(devices))), devices_(devices) {
    shape_ = {m, n, k, 1};
    capacity_ = shape_;
    for (int d = 0; d < devices; ++d) {
      const std::vector<int> cpus = device_cpus(allowed, d + 1, threads);
      workers_.emplace_back([this, d, threads, m, n, k, cpus, b_copies] {
        const std::unique_ptr<ParallelFor> pool = pinned_device_threads(threads, cpus);
        std::vector<float> a(static_cast<size_t>(m * k), 1.0f);
        std::vector<float> b(static_cast<size_t>(k * n * b_copies), 0.5f);
        std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
        for (int64_t call = 0; !stop_.load(std::memory_order_relaxed); ++call) {
          Shape shape;
          {
            const std::lock_guard lock(mutex_);
            shape = shape_;
          }
          running_[static_cast<size_t>(d)].store(shape.generation, std::memory_order_release);
          const float* weights = b.data() + (call % b_copies) * shape.k * shape.n;
          gemm(*pool, shape.m, shape.n, shape.k, {a.data(), shape.k}, {weights, shape.n}, 0.0f, c.data(), shape.n);
        }
      });
    }
    for (int d = 0; d < devices; ++d) {
      const std::vector<int> cpus = device_cpus(allowed, d + 1, threads);
      if (!cpus.empty()) pin_thread(workers_[static_cast<size_t>(d)], cpus.front());
    }
  }
  /// Each neighbour's next product is m×n×k, at most the constructor's in each dimension.
  void set_shape(int64_t m, int64_t n, int64_t k) {
    SPLITSCOPE_CHECK(m <= capacity_.m && n <= capacity_.n && k <= capacity_.k,
                     "busy neighbours: a product larger than their buffers");
    const std::lock_guard lock(mutex_);
    shape_ = {m, n, k, shape_.generation + 1};
  }
  /// Returns once every neighbour has begun a product of the current shape.
  void wait_running() const {
    uint64_t generation = 0;
    {
      const std::lock_guard lock(mutex_);
      generation = shape_.generation;
    }
    for (int d = 0; d < devices_; ++d) {
      while (running_[static_cast<size_t>(d)].load(std::memory_order_acquire) < generation) {
        std::this_thread::yield();
      }
    }
  }
  ~BusyNeighbours() {
    stop_.store(true);
    for (std::thread& worker : workers_) worker.join();
  }
  BusyNeighbours(const BusyNeighbours&) = delete;
  BusyNeighbours& operator=(const BusyNeighbours&) = delete;

 private:
  struct Shape {
    int64_t m = 0, n = 0, k = 0;
    uint64_t generation = 0;  ///< bumped by set_shape()
  };
  mutable std::mutex mutex_;
  Shape shape_;  ///< under mutex_
  Shape capacity_;  ///< the largest product the buffers hold
  /// The generation of each neighbour's product under way.
  std::unique_ptr<std::atomic<uint64_t>[]> running_;
  int devices_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

/// One grid of shapes (gemm_grid_axes) on one share count's threads, alone
/// or (`neighbours` > 0) with that many other devices of as many threads
/// busy beside it, and what its sweeps have timed so far.
struct GemmGrid {
  struct Shape {
    int64_t m, n, k;
    int calls = 0;    ///< back-to-back calls a sample times (set in the first sweep)
    int repeats = 0;  ///< sweeps that time it
    std::vector<double> seconds{};  ///< per call, one a sweep
  };
  int threads = 1;
  int neighbours = 0;
  std::vector<Shape> shapes{};
};

GemmGrid make_gemm_grid(const GemmGridAxes& axes, int threads, int neighbours) {
  GemmGrid grid{threads, neighbours};
  for (const int64_t m : axes.rows) {
    for (const int64_t n : axes.outputs) {
      for (const int64_t k : axes.inputs) grid.shapes.push_back({m, n, k});
    }
  }
  return grid;
}

/// Sweep `sweep` of `sweeps` over `grid`: each shape once on `pool`'s
/// threads (pinned as device 0 of `allowed`), its neighbours, if any, pinned
/// as devices 1, 2, ... and moved from shape to shape with it; a sample
/// waits until they have begun its own. Each sample follows one untimed
/// call of its shape, which puts its operands in the caches as the repeat
/// before it had (but for products over kWarmedGemmFlops after the first
/// sweep).
void sweep_gemm_grid(int sweep, int sweeps, const GemmGridAxes& axes, GemmGrid& grid, ParallelFor& pool,
                     const std::vector<int>& allowed, const float* a, const float* b, float* c) {
  std::optional<BusyNeighbours> busy;
  if (grid.neighbours > 0) {
    busy.emplace(grid.neighbours, grid.threads, axes.rows.back(), axes.outputs.back(), axes.inputs.back(), allowed);
  }
  for (GemmGrid::Shape& shape : grid.shapes) {
    if (sweep > 0 && sweep >= shape.repeats) continue;
    auto product = [&] { gemm(pool, shape.m, shape.n, shape.k, {a, shape.k}, {b, shape.n}, 0.0f, c, shape.n); };
    if (busy) busy->set_shape(shape.m, shape.n, shape.k);
    pool.wake();
    const double flops = 2.0 * static_cast<double>(shape.m * shape.n * shape.k);
    if (sweep == 0 || flops <= kWarmedGemmFlops) {
      const auto first = Clock::now();
      product();  // warm-up (beside the neighbours' first products); in the first sweep a guess at its time
      if (sweep == 0) {
        shape.calls = calls_per_sample(seconds_since(first));
        shape.repeats = flops > kWarmedGemmFlops ? std::min(3, sweeps) : sweeps;
      }
    }
    if (busy) busy->wait_running();
    const auto start = Clock::now();
    for (int call = 0; call < shape.calls; ++call) product();
    shape.seconds.push_back(seconds_since(start) / shape.calls);
  }
}

/// The sgemm rate over the grid of shapes (gemm_grid_axes) on each share
/// count's threads, as the kernels compute a product (exec/cpu/kernels/gemm.hpp:
/// row-major, the output cut into blocks over the device's intra-op pool,
/// one single-threaded sgemm per block; on one thread, one sgemm): each
/// share count's grid alone, and where the pool has more than one device of
/// it, again with every other device busy on the same shape
/// (BusyNeighbours); the median over the repeats (at most 3 for products
/// over 1e8 FLOPs, which vary least) of each sample's time per call.
///
/// The repeats are sweeps, each shape timed once a sweep, not back to
/// back, and the grids take turns sweep by sweep: the build VM loses a
/// vCPU for seconds at a time, and one such episode inside a shape's
/// repeats took every repeat of about 130 consecutive shapes at 0.55x
/// their rate (a 2-thread grid of 2026-12-02, m = 16 to 64, against two
/// calibrations beside it), where across sweeps it takes one sample of
/// each and the median drops it; and its speed drifts by several percent
/// from minute to minute, which, with each grid timed whole in a window of
/// its own, moved the one-thread grid against the two-thread one by up to
/// 8% between calibrations (the median over the products of 1e8 FLOPs and
/// more: 0.478-0.518 of the two-thread rate beside a busy neighbour, in
/// nine calibrations) and with it the strategies' predicted order.
/// `after_each_sweep` runs after each sweep of all the grids, so that the
/// other rates can be timed in turns with them (measure_rates_in_turns()).
void measure_gemm(const CpuCalibrationOptions& options, int cores, calibration::CalibrationResult& result,
                  const std::function<void()>& after_each_sweep) {
  use_single_threaded_blas();  // as the executor's kernels call it
  const GemmGridAxes axes = gemm_grid_axes(options.quick);
  const int64_t m = axes.rows.back();
  const int64_t n = axes.outputs.back();
  const int64_t k = axes.inputs.back();
  const auto largest = static_cast<size_t>(std::max({m * k, k * n, m * n}));
  std::vector<float> a(largest, 1.0f);
  std::vector<float> b(largest, 0.5f);
  std::vector<float> c(largest, 0.0f);
  // Read here, before any thread is pinned: a thread pinned to one CPU would see only that one.
  const std::vector<int> allowed = allowed_cpus();
  std::vector<GemmGrid> grids;
  for (const int threads : cpu_share_counts(cores)) {
    grids.push_back(make_gemm_grid(axes, threads, 0));
    const int devices = cores / threads;
    if (devices > 1) grids.push_back(make_gemm_grid(axes, threads, devices - 1));
  }
  const int sweeps = std::max(1, options.repeats);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (GemmGrid& grid : grids) {
      // As device 0 of the pool, pinned as a run pins it: unpinned, the busy grid of one calibration of the
      // build VM timed a block of shapes at half the rate alone (the timed thread and its neighbour on one
      // vCPU), and priced two-tower's convolutions 1.8x slow.
      const std::vector<int> cpus = device_cpus(allowed, 0, grid.threads);
      run_pinned(cpus, [&] {
        const std::unique_ptr<ParallelFor> pool = pinned_device_threads(grid.threads, cpus);
        sweep_gemm_grid(sweep, sweeps, axes, grid, *pool, allowed, a.data(), b.data(), c.data());
      });
    }
    after_each_sweep();
  }
  for (const GemmGrid& grid : grids) {
    for (const GemmGrid::Shape& shape : grid.shapes) {
      calibration::GemmRate rate;
      rate.m = shape.m;
      rate.n = shape.n;
      rate.k = shape.k;
      rate.math = "fp32";
      rate.seconds = calibration::median(shape.seconds);
      rate.flops_per_second = 2.0 * static_cast<double>(shape.m * shape.n * shape.k) / rate.seconds;
      rate.threads = grid.threads;
      rate.running = grid.neighbours + 1;
      result.gemm.push_back(rate);
    }
  }
}

/// One thread's time per (row, unit) of each recurrent cell's gate
/// arithmetic, the kernels' own pointwise functions on a zoo-sized step (64
/// rows, 1024 units, a previous state present) with pre-activations spread
/// over [-2, 2]: the median over the repeats of each call's time over its
/// rows · units.
void measure_cell_pointwise(const CpuCalibrationOptions& options, calibration::CalibrationResult& result) {
  constexpr int64_t kRows = 64;
  constexpr int64_t kUnits = 1024;
  std::vector<float> gates(static_cast<size_t>(2 * kRows * kLstmGates * kUnits));
  for (size_t i = 0; i < gates.size(); ++i) gates[i] = -2.0f + 4.0f * static_cast<float>(i % 997) / 996.0f;
  std::vector<float> state(static_cast<size_t>(kRows * kUnits), 0.5f);
  std::vector<float> h(state.size());
  std::vector<float> c(state.size());
  CellArgs args;
  args.rows = kRows;
  args.hidden = kUnits;
  args.units = kUnits;
  args.h_prev = state.data();
  args.h_prev_stride = kUnits;
  args.c_prev = state.data();
  args.c_prev_stride = kUnits;
  args.h_out = h.data();
  args.h_out_stride = kUnits;
  args.c_out = c.data();
  args.c_out_stride = kUnits;
  const float* from_h = gates.data() + kRows * kGruGates * kUnits;
  const std::pair<const char*, std::function<void()>> cells[] = {
      {"lstm_cell", [&] { lstm_cell_pointwise(args, gates.data(), kLstmGates * kUnits); }},
      {"gru_cell", [&] { gru_cell_pointwise(args, gates.data(), kGruGates * kUnits, from_h, kGruGates * kUnits); }},
  };
  for (const auto& [kind, pointwise] : cells) {
    pointwise();
    std::vector<double> seconds;
    for (int r = 0; r < std::max(3, options.repeats); ++r) {
      const auto start = Clock::now();
      pointwise();
      seconds.push_back(seconds_since(start) / static_cast<double>(kRows * kUnits));
    }
    result.cell_pointwise_seconds_per_unit[kind] = calibration::median(seconds);
  }
}

/// The median over max(11, repeats) samples of `pass`'s time per call
/// (median_call_seconds()). Eleven at least: on the build VM one sample in
/// three or so of a two-thread im2col ran at one thread's pace (its helper
/// late).
double median_pass_seconds(const CpuCalibrationOptions& options, const std::function<void()>& pass) {
  return median_call_seconds(std::max(11, options.repeats), pass);
}

/// A 3x3, stride-1, padded convolution of 64 channels over a side x side input (ResNet's commonest).
ConvGeometry im2col_probe(int64_t side) {
  ConvGeometry g;
  g.in_channels = 64;
  g.in_h = side;
  g.in_w = side;
  g.filters = 64;
  g.kernel_h = 3;
  g.kernel_w = 3;
  g.pad_h = 1;
  g.pad_w = 1;
  return g;
}

/// The kernels' passes other than products (exec/cpu/kernels/dense.cpp,
/// conv2d.cpp), timed with their own code, since none runs at a memcpy's
/// rate (sim/costs/cpu_pass_rates.hpp):
/// - the bias copied into 256 output rows of 1024 values (1 MiB, one
///   sample's planes of a mid-sized convolution), on one thread as the
///   kernels run it, per value; each call into the next MiB of 64, as a
///   kernel writes a sample's planes into a large output not yet in the
///   caches (over the same MiB each time, one thread wrote 0.04 ns a value
///   on the build VM, where AlexNet's and ResNet-50's convolutions took
///   0.13-0.17);
/// - each activation in place over one such MiB just written, as a kernel
///   runs it over the planes its product wrote, per value;
/// - im2col of a 3x3 convolution of 64 channels over 14x14 and 56x56 inputs
///   (576 patch rows of 196 and 3136 values) on each share count's threads,
///   split as the kernel splits it: the line through the two medians gives
///   a call's fixed part (the split's hand-offs) and its time per value;
/// - max and average pooling of 8 samples of 64 channels of 56x56 through
///   3x3 windows, stride 1, padded (6.1 MiB in, as much out: past the
///   caches a core has, as a layer's pool is), on one thread as the kernel
///   runs, per output value and window element.
void measure_kernel_passes(const CpuCalibrationOptions& options, int cores, calibration::CalibrationResult& result) {
  constexpr int64_t kRows = 256;
  constexpr int64_t kColumns = 1024;
  constexpr int64_t kWindows = 64;
  std::vector<float> bias(kColumns);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = -1.0f + 2.0f * static_cast<float>(i % 97) / 96.0f;
  std::vector<float> out(static_cast<size_t>(kWindows * kRows * kColumns));
  const double values = static_cast<double>(kRows * kColumns);
  int64_t window = 0;
  const auto fill_next = [&] {
    float* planes = out.data() + (window++ % kWindows) * kRows * kColumns;
    for (int64_t r = 0; r < kRows; ++r) std::copy_n(bias.data(), kColumns, planes + r * kColumns);
    return planes;
  };
  calibration::KernelPassTimes& times = result.kernel_passes;
  times.fill_seconds_per_value = median_pass_seconds(options, [&] { fill_next(); }) / values;
  for (const Activation activation : {Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    // Each call starts again from the bias values, so that every call sees the same spread of inputs.
    const double with_fill = median_pass_seconds(options, [&] {
      activation_in_place(activation, fill_next(), kColumns, kRows, kColumns);
    });
    times.activation_seconds_per_value[std::string(to_string(activation))] =
        std::max(0.0, with_fill / values - times.fill_seconds_per_value);
  }
  PoolArgs pool;
  pool.rows = 8;
  ConvGeometry& w = pool.window;
  w.in_channels = w.filters = 64;
  w.in_h = w.in_w = 56;
  w.kernel_h = w.kernel_w = 3;
  w.pad_h = w.pad_w = 1;
  std::vector<float> pool_in(static_cast<size_t>(pool.rows * w.in_channels * w.in_h * w.in_w));
  for (size_t i = 0; i < pool_in.size(); ++i) pool_in[i] = static_cast<float>(i % 13);
  std::vector<float> pool_out(static_cast<size_t>(pool.rows * w.in_channels * w.out_h() * w.out_w()));
  pool.input = pool_in.data();
  pool.input_stride = w.in_channels * w.in_h * w.in_w;
  pool.output = pool_out.data();
  pool.output_stride = w.in_channels * w.out_h() * w.out_w();
  const double window_values = static_cast<double>(pool_out.size() * w.kernel_h * w.kernel_w);
  times.pool_seconds_per_window_value["maxpool"] = median_pass_seconds(options, [&] { max_pool(pool); }) / window_values;
  times.pool_seconds_per_window_value["avgpool"] = median_pass_seconds(options, [&] { avg_pool(pool); }) / window_values;
  const ConvGeometry small = im2col_probe(14);
  const ConvGeometry large = im2col_probe(56);
  std::vector<float> input(static_cast<size_t>(large.in_channels * large.in_h * large.in_w), 0.5f);
  std::vector<float> columns(static_cast<size_t>(conv2d_workspace_floats(large)));
  const std::vector<int> cpus = allowed_cpus();
  for (const int threads : cpu_share_counts(cores)) {
    calibration::Im2colTime time;
    time.threads = threads;
    // On threads pinned as a run's compute worker and its helpers are (scheduler.cpp): unpinned, the helper
    // shared the caller's CPU in some calibrations of the build VM, and the split ran at one thread's pace.
    const std::vector<int> device = device_cpus(cpus, 0, threads);
    run_pinned(device, [&] {
      const std::unique_ptr<ParallelFor> pool = pinned_device_threads(threads, device);
      pool->wake();
      const auto seconds = [&](const ConvGeometry& g) {
        return median_pass_seconds(options, [&] { im2col(*pool, g, g.in_channels, input.data(), columns.data()); });
      };
      const double small_seconds = seconds(small);
      const double large_seconds = seconds(large);
      const auto small_values = static_cast<double>(conv2d_workspace_floats(small));
      const auto large_values = static_cast<double>(conv2d_workspace_floats(large));
      time.seconds_per_value = std::max(0.0, (large_seconds - small_seconds) / (large_values - small_values));
      if (time.seconds_per_value <= 0) time.seconds_per_value = large_seconds / large_values;  // noise: no fixed part
      time.seconds_per_call = std::max(0.0, small_seconds - small_values * time.seconds_per_value);
    });
    times.im2col.push_back(time);
  }
  std::sort(times.im2col.begin(), times.im2col.end(),
            [](const calibration::Im2colTime& a, const calibration::Im2colTime& b) { return a.threads < b.threads; });
}

/// How fast products stream weights that are not in the caches, on each
/// share count's threads alone and, where the pool has more devices, with
/// every other device streaming its own beside it (sim/costs/cpu_pass_rates.hpp,
/// WeightStreamRate): (rows, 4096, 1024) products of 8, 64 and 256 rows (8:
/// a 1024-unit LSTM's micro-batch step; 64: a full batch's dense layer),
/// each call on the next of as many 16 MiB copies of B as fill four times the
/// last-level cache (128 MiB at least), as a layer whose weights the cache
/// cannot hold reads them; B's bytes over the median call. Few rows wait for
/// B; more rows compute on each byte as it arrives, and their time is
/// neither the grid's nor the stream's but between the larger and the sum
/// (sim/costs/weight_stream_curve.hpp). The timed device and its neighbours are
/// pinned as in measure_gemm().
void measure_weight_stream(const CpuCalibrationOptions& options, int cores, int64_t cache_bytes,
                           calibration::CalibrationResult& result) {
  constexpr std::array<int64_t, 3> kRows = {8, 64, 256};
  constexpr int64_t kOutputs = 4096;
  constexpr int64_t kInputs = 1024;
  const int64_t b_bytes = kOutputs * kInputs * static_cast<int64_t>(sizeof(float));
  const auto copies =
      static_cast<int>(std::max<int64_t>(2, (std::max<int64_t>(128 << 20, 4 * cache_bytes) + b_bytes - 1) / b_bytes));
  std::vector<float> a(static_cast<size_t>(kRows.back() * kInputs), 1.0f);
  std::vector<float> b(static_cast<size_t>(kOutputs * kInputs * copies), 0.5f);
  std::vector<float> c(static_cast<size_t>(kRows.back() * kOutputs), 0.0f);
  const std::vector<int> allowed = allowed_cpus();
  for (const int threads : cpu_share_counts(cores)) {
    const int devices = cores / threads;
    const std::vector<int> cpus = device_cpus(allowed, 0, threads);
    run_pinned(cpus, [&] {
      const std::unique_ptr<ParallelFor> pool = pinned_device_threads(threads, cpus);
      std::vector<int> runnings = {1};
      if (devices > 1) runnings.push_back(devices);
      for (const int running : runnings) {
        std::optional<BusyNeighbours> busy;
        if (running > 1) busy.emplace(running - 1, threads, kRows.back(), kOutputs, kInputs, allowed, copies);
        for (const int64_t rows : kRows) {
          if (busy) {
            busy->set_shape(rows, kOutputs, kInputs);
            busy->wait_running();
          }
          pool->wake();
          int64_t call = 0;
          const double seconds = median_pass_seconds(options, [&] {
            const float* weights = b.data() + (call++ % copies) * kOutputs * kInputs;
            gemm(*pool, rows, kOutputs, kInputs, {a.data(), kInputs}, {weights, kOutputs}, 0.0f, c.data(), kOutputs);
          });
          result.weight_stream.push_back({threads, running, static_cast<double>(b_bytes) / seconds, rows});
        }
      }
    });
  }
}

/// The largest set of weights one thread's products still read at the
/// cache's speed: (8, 1024, 1024) products cycling over 1, 2, 3, 4, 6, 8, ...
/// copies of their 4 MiB B, as a network's layers cycle over their weights,
/// up to twice the reported cache (1 GiB at most). The set is kept while a
/// call takes less than halfway from the one-copy time to the largest set's.
/// 0 where the largest set is not clearly slower (no cache effect to see).
/// The build VM (2026-12-07) reports 480 MiB, the host's whole cache, where
/// (64, 3072, 1024) products ran 1.4x slower cycling over 144 MiB of B than
/// over 48 MiB: the cache the VM gets is the part that counts.
int64_t measure_effective_cache(int64_t reported_bytes) {
  constexpr int64_t kRows = 8;
  constexpr int64_t kSide = 1024;
  constexpr int64_t kCopyBytes = kSide * kSide * static_cast<int64_t>(sizeof(float));
  const int64_t largest = std::min<int64_t>(int64_t{1} << 30, reported_bytes > 0 ? 2 * reported_bytes : 256 << 20);
  std::vector<int64_t> counts;
  for (int64_t count = 1; count * kCopyBytes <= largest; count = count < 2 ? count + 1 : count * 2) {
    counts.push_back(count);
    if (count >= 2 && (count * 3 / 2) * kCopyBytes <= largest) counts.push_back(count * 3 / 2);
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  if (counts.size() < 3) return 0;
  std::vector<float> a(static_cast<size_t>(kRows * kSide), 1.0f);
  std::vector<float> b(static_cast<size_t>(kSide * kSide * counts.back()), 0.5f);
  std::vector<float> c(static_cast<size_t>(kRows * kSide), 0.0f);
  std::vector<double> per_call;
  const std::vector<int> allowed = allowed_cpus();
  run_pinned(device_cpus(allowed, 0, 1), [&] {
    const std::unique_ptr<ParallelFor> pool = pinned_device_threads(1, device_cpus(allowed, 0, 1));
    for (const int64_t count : counts) {
      const auto product = [&](int64_t call) {
        const float* weights = b.data() + (call % count) * kSide * kSide;
        gemm(*pool, kRows, kSide, kSide, {a.data(), kSide}, {weights, kSide}, 0.0f, c.data(), kSide);
      };
      for (int64_t call = 0; call < 2 * count; ++call) product(call);  // the set in the cache, as far as it fits
      std::vector<double> seconds;
      for (int64_t call = 0; call < std::max<int64_t>(16, 2 * count); ++call) {
        const auto start = std::chrono::steady_clock::now();
        product(call);
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      per_call.push_back(calibration::median(seconds));
    }
  });
  const double cached = per_call.front();
  const double streamed = per_call.back();
  if (streamed < 1.2 * cached) return 0;
  int64_t kept = 0;
  for (size_t i = 0; i < counts.size() && per_call[i] <= cached + 0.5 * (streamed - cached); ++i) {
    kept = counts[i] * kCopyBytes;
  }
  return kept;
}

/// Each field's median over `sweeps` (none empty, all timed alike).
calibration::KernelPassTimes median_kernel_passes(const std::vector<calibration::KernelPassTimes>& sweeps) {
  const auto median_of = [&](const auto& field) {
    std::vector<double> values;
    for (const calibration::KernelPassTimes& sweep : sweeps) values.push_back(field(sweep));
    return calibration::median(values);
  };
  calibration::KernelPassTimes times = sweeps.front();
  times.fill_seconds_per_value = median_of([](const auto& t) { return t.fill_seconds_per_value; });
  // Pairs, not structured bindings: clang 14 (scripts/fuzz) refuses lambdas that capture those.
  for (auto& entry : times.activation_seconds_per_value) {
    const auto& kind = entry.first;
    entry.second = median_of([&](const auto& t) { return t.activation_seconds_per_value.at(kind); });
  }
  for (auto& entry : times.pool_seconds_per_window_value) {
    const auto& kind = entry.first;
    entry.second = median_of([&](const auto& t) { return t.pool_seconds_per_window_value.at(kind); });
  }
  for (size_t i = 0; i < times.im2col.size(); ++i) {
    times.im2col[i].seconds_per_call = median_of([&](const auto& t) { return t.im2col.at(i).seconds_per_call; });
    times.im2col[i].seconds_per_value = median_of([&](const auto& t) { return t.im2col.at(i).seconds_per_value; });
  }
  return times;
}

/// Each (threads, running)'s median rate over `sweeps` (each timed alike).
std::vector<calibration::WeightStreamTime> median_weight_streams(
    const std::vector<std::vector<calibration::WeightStreamTime>>& sweeps) {
  std::vector<calibration::WeightStreamTime> rates = sweeps.front();
  for (size_t i = 0; i < rates.size(); ++i) {
    std::vector<double> values;
    for (const auto& sweep : sweeps) values.push_back(sweep.at(i).bytes_per_second);
    rates[i].bytes_per_second = calibration::median(values);
  }
  return rates;
}

/// The sgemm grids, and in turns with their sweeps (one timing of each after
/// each sweep of the grids, the median kept) the kernels' passes and the
/// weight stream. Timed once after the grids, the passes fell in a window
/// of their own, a fraction of a second: in four calibrations of the build
/// VM (2026-12-02) one thread's im2col came out 0.33, 0.61, 0.62 and 0.66
/// ns a value (in the kernel, on AlexNet's layers, 0.54-0.65), and since a
/// split device repeats its convolution's whole im2col, two-tower's
/// `vertical` was predicted at 1.05-1.16x its `single`. In turns, the
/// sweeps of one calibration still spread (0.53-1.11 ns in one), and the
/// medians of four calibrations were 0.33, 0.33, 0.34 and 0.55: the VM's
/// memory system has its own moods, which the median spreads over the
/// calibration's half-minute rather than one moment of it.
void measure_rates_in_turns(const CpuCalibrationOptions& options, const HostInfo& host,
                            calibration::CalibrationResult& result) {
  std::vector<calibration::KernelPassTimes> passes;
  std::vector<std::vector<calibration::WeightStreamTime>> streams;
  measure_gemm(options, host.hardware_threads, result, [&] {
    calibration::CalibrationResult sweep;
    measure_kernel_passes(options, host.hardware_threads, sweep);
    measure_weight_stream(options, host.hardware_threads, host.last_level_cache_bytes, sweep);
    passes.push_back(std::move(sweep.kernel_passes));
    streams.push_back(std::move(sweep.weight_stream));
  });
  result.kernel_passes = median_kernel_passes(passes);
  result.weight_stream = median_weight_streams(streams);
}

void measure_copies(const CpuCalibrationOptions& options, calibration::CalibrationResult& result) {
  const std::vector<int64_t> sizes = options.quick ? std::vector<int64_t>{1 << 16, 1 << 20, 1 << 22}
                                                   : std::vector<int64_t>{1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 26};
  const size_t biggest = static_cast<size_t>(sizes.back());
  std::vector<char> from(biggest, 1);
  std::vector<char> to(biggest, 0);
  calibration::CopySeries series;
  series.kind = "device_to_device";
  for (const int64_t bytes : sizes) {
    std::memcpy(to.data(), from.data(), static_cast<size_t>(bytes));
    std::vector<double> seconds;
    for (int r = 0; r < options.repeats; ++r) {
      const auto start = Clock::now();
      std::memcpy(to.data(), from.data(), static_cast<size_t>(bytes));
      seconds.push_back(seconds_since(start));
    }
    const double median = calibration::median(seconds);
    series.points.push_back({bytes, median, static_cast<double>(bytes) / median});
  }
  calibration::fit_copy_series(series);
  result.copies.push_back(std::move(series));
}

/// One thread hands a token to another and waits for it back, through a
/// mutex and condition variable as the scheduler's workers do: half a round
/// trip is one hand-off.
void measure_hand_off(const CpuCalibrationOptions& options, calibration::CalibrationResult& result) {
  constexpr int kRounds = 200;
  std::mutex mutex;
  std::condition_variable changed;
  int token = 0;  // even: the main thread's turn; odd: the partner's
  bool stop = false;
  std::thread partner([&] {
    std::unique_lock lock(mutex);
    while (true) {
      changed.wait(lock, [&] { return stop || token % 2 == 1; });
      if (stop) return;
      ++token;
      changed.notify_all();
    }
  });
  std::vector<double> seconds;
  for (int r = 0; r < std::max(3, options.repeats); ++r) {
    const auto start = Clock::now();
    for (int k = 0; k < kRounds; ++k) {
      std::unique_lock lock(mutex);
      ++token;
      changed.notify_all();
      changed.wait(lock, [&] { return token % 2 == 0; });
    }
    seconds.push_back(seconds_since(start) / (2.0 * kRounds));
  }
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  changed.notify_all();
  partner.join();
  result.launch.kernels = kRounds;
  result.launch.host_seconds_per_launch = calibration::median(seconds);
  result.launch.device_seconds_per_kernel = result.launch.host_seconds_per_launch;
}

/// The small dense chain the hand-off probes run.
std::shared_ptr<const Graph> probe_network() {
  const std::string network = R"({"name": "handoff", "batch": 8, "input": [64], "layers": [
      {"type": "dense", "units": 64, "activation": "relu"}, {"type": "dense", "units": 64, "activation": "relu"},
      {"type": "dense", "units": 64, "activation": "relu"}, {"type": "dense", "units": 64}]})";
  return std::make_shared<const Graph>(lower(parse_model_text(network, "handoff.json")));
}

/// What one op costs a device beyond its own span when it follows another
/// on the same device: the gaps between consecutive compute spans of a
/// one-device run of a small chain, as the executor's own timeline records
/// them (the device's worker taking its next task; a few tenths of a µs
/// here, against 12 µs for a condition-variable hand-off between threads,
/// which is what the launch overhead held before: every uncalibrated op paid
/// it, and the efficiency fit took it off every measured time, which left
/// the element-wise kinds of µs-long ops without a rate of their own).
/// The machine's launch overhead (launch.device_seconds_per_kernel).
void measure_op_gap(const CpuCalibrationOptions& options, calibration::CalibrationResult& result) {
  PartitionOptions partition;
  partition.devices = 1;
  const Plan plan = make_partitioner("single")->partition(probe_network(), partition);
  RunOptions run;
  run.warmup = options.warmup;
  run.repeats = std::max(30, options.repeats);
  run.seed = options.seed;
  run.want_output = false;
  const RunResult measured = CpuExecutor().run(plan, run);
  std::vector<double> gaps;
  for (const Timeline& timeline : measured.timelines) {
    std::vector<const Span*> ops;
    for (const Span& span : timeline.spans) {
      if (span.lane == Lane::kCompute) ops.push_back(&span);
    }
    std::sort(ops.begin(), ops.end(), [](const Span* a, const Span* b) { return a->start_us < b->start_us; });
    for (size_t i = 1; i < ops.size(); ++i) gaps.push_back((ops[i]->start_us - ops[i - 1]->end_us) * 1e-6);
  }
  if (gaps.empty()) {
    result.notes.push_back("op gap not measured: the probe run had no consecutive ops; launch overhead = hand-off");
    return;
  }
  result.launch.kernels = static_cast<int>(gaps.size());
  result.launch.device_seconds_per_kernel = std::max(0.0, calibration::median(gaps));
}

/// `sample` on `running` devices at once, each run kRunsPerDevice times back
/// to back, beside `idle` devices that run nothing: the median of the later
/// runs. The first run of each device is left out: it wakes the device's
/// parked intra-op threads, which in a plan only the device's first op does
/// (the run's start, priced apart as the machine's hand-off).
calibration::OpTime time_op(const OpSample& sample, int running, int idle, int shares, const RunOptions& run) {
  constexpr int kRunsPerDevice = 3;
  const Plan plan = replicated_op_plan(sample, running, kRunsPerDevice, idle);
  const RunResult measured = CpuExecutor().run(plan, run);
  std::vector<double> seconds;
  for (const Timeline& timeline : measured.timelines) {
    for (const Span& span : timeline.spans) {
      if (span.kind == SpanKind::kCompute && span.op % kRunsPerDevice != 0) seconds.push_back(span.duration_us() * 1e-6);
    }
  }
  SPLITSCOPE_CHECK(!seconds.empty(), "a calibration run without compute spans");
  const SliceCost cost = slice_cost(*sample.graph, sample.node, sample.slice);
  calibration::OpTime time;
  time.signature = sample.signature;
  time.example = sample.graph->name() + "/" + sample.graph->node(sample.node).name;
  time.flops = cost.flops;
  time.bytes = cost.bytes_read + cost.bytes_written;
  time.seconds = calibration::median(seconds);
  time.min_seconds = *std::min_element(seconds.begin(), seconds.end());
  time.max_seconds = *std::max_element(seconds.begin(), seconds.end());
  time.shares = shares;
  time.running = running;
  return time;
}

/// Every sample at every share count with every device busy, and, where a
/// device of that share count has others beside it, alone too: a device
/// alone has the cores' shared caches, memory and (on SMT) execution units
/// to itself, which is how the layer split runs (one device working at a
/// time). Both times of a sample are taken one after the other, so that
/// whatever else loads the host falls on both alike.
void measure_ops(const CpuCalibrationOptions& options, int cores, calibration::CalibrationResult& result) {
  RunOptions run;
  run.warmup = options.warmup;
  run.repeats = options.repeats;
  run.seed = options.seed;
  run.want_output = false;
  for (const int shares : cpu_share_counts(cores)) {
    const int devices = cores / shares;
    for (const OpSample& sample : options.ops) {
      result.op_times.push_back(time_op(sample, devices, 0, shares, run));
      if (devices > 1) result.op_times.push_back(time_op(sample, 1, devices - 1, shares, run));
    }
  }
}

/// The lane hand-off as runs see it: a small network pipelined over two
/// devices, run as the executor runs plans, and from its timeline every gap
/// between a transfer and its producer (a copy worker taking the work over)
/// and between a transfer and the compute op waiting for it (a compute
/// worker taking it back; only where that device had nothing else to do).
void measure_lane_handoff(const CpuCalibrationOptions& options, int cores, calibration::CalibrationResult& result) {
  if (cores < 2) {
    result.notes.push_back("lane hand-off not measured: one hardware thread, so one device and no transfers");
    return;
  }
  const auto graph = probe_network();
  PartitionOptions partition;
  partition.devices = 2;
  partition.microbatches = 4;
  const Plan plan = make_partitioner("pipeline")->partition(graph, partition);
  CpuExecutor executor;
  RunOptions run;
  run.warmup = options.warmup;
  run.repeats = std::max(30, options.repeats);
  run.seed = options.seed;
  run.want_output = false;
  const RunResult measured = executor.run(plan, run);
  std::vector<double> gaps;
  for (const Timeline& timeline : measured.timelines) {
    std::vector<const Span*> span_of(plan.ops.size(), nullptr);
    for (const Span& span : timeline.spans) {
      if (span.op >= 0) span_of[static_cast<size_t>(span.op)] = &span;
    }
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kTransfer) continue;
      const Span* copy = span_of[static_cast<size_t>(op.id)];
      const Span* producer = span_of[static_cast<size_t>(plan.value(op.inputs.front()).producer)];
      if (copy == nullptr || producer == nullptr) continue;
      gaps.push_back((copy->start_us - producer->end_us) * 1e-6);
      for (const PlanOp& reader : plan.ops) {
        if (reader.role != OpRole::kCompute || reader.inputs.empty()) continue;
        if (std::find(reader.inputs.begin(), reader.inputs.end(), op.outputs.front()) == reader.inputs.end()) continue;
        // Only a compute op its device waited for: nothing of that device ran between the copy and it.
        const Span* consumer = span_of[static_cast<size_t>(reader.id)];
        bool waited = consumer != nullptr;
        for (const Span& other : timeline.spans) {
          if (!waited) break;
          waited = !(other.device == consumer->device && other.lane == Lane::kCompute && &other != consumer &&
                     other.end_us > copy->end_us && other.end_us <= consumer->start_us);
        }
        if (waited) gaps.push_back((consumer->start_us - copy->end_us) * 1e-6);
      }
    }
  }
  if (gaps.empty()) {
    result.notes.push_back("lane hand-off not measured: the pipelined run had no transfers");
    return;
  }
  result.lane_handoff.samples = static_cast<int>(gaps.size());
  result.lane_handoff.seconds = std::max(0.0, calibration::median(gaps));
}

/// A worker woken from sleep, as a run meets it wherever a lane sat idle
/// past the scheduler's spin window (a copy after a long op, an op waiting
/// on a slow copy): device 0's worker holds its core for 20 spin windows, by
/// then device 1's worker has gone to sleep, then hands it a task; the gap
/// between the two, median over the repeats. On a virtual machine this
/// includes waking the sleeping vCPU, which the lane hand-off probe's
/// short gaps rarely meet.
void measure_parked_handoff(const CpuCalibrationOptions& options, int cores,
                            calibration::CalibrationResult& result) {
  if (cores < 2) {
    result.notes.push_back("parked hand-off not measured: one hardware thread, so no second worker to wake");
    return;
  }
  constexpr auto kHeld = 20 * kWorkerSpinBeforeSleeping;
  SchedulerConfig config;
  config.devices = 2;
  config.compute_workers = 2;
  config.intra_op_threads = 1;
  Scheduler scheduler(config);
  TaskGraph graph;
  const int hold = graph.add(Task{0, Lane::kCompute, "hold device 0's core", [kHeld](TaskContext&) {
                                    const auto until = Clock::now() + kHeld;
                                    while (Clock::now() < until) {
                                    }
                                  }});
  const int woken = graph.add(Task{1, Lane::kCompute, "the task device 1's worker wakes for", [](TaskContext&) {}});
  graph.add_dependency(hold, woken);
  std::vector<double> gaps;
  for (int r = 0; r < std::max(9, 3 * options.repeats); ++r) {
    const std::vector<TaskTiming> timings = scheduler.run(graph);
    const double gap_us = timings[static_cast<size_t>(woken)].start_us - timings[static_cast<size_t>(hold)].end_us;
    gaps.push_back(std::max(0.0, gap_us) * 1e-6);
  }
  result.parked_handoff.samples = static_cast<int>(gaps.size());
  result.parked_handoff.seconds = calibration::median(gaps);
  result.parked_handoff.spin_seconds = std::chrono::duration<double>(kWorkerSpinBeforeSleeping).count();
}

}  // namespace

std::vector<int> cpu_share_counts(int cores) {
  std::vector<int> shares;
  for (int devices = 1; devices < cores; devices *= 2) shares.push_back(cores / devices);
  if (shares.empty() || shares.back() != 1) shares.push_back(1);
  return shares;
}

calibration::CalibrationResult calibrate_cpu(const CpuCalibrationOptions& options) {
  const HostInfo host = read_host_info();
  calibration::CalibrationResult result;
  result.date = utc_now_iso8601();
  result.host = host.host_name;
  result.device_name = host.cpu_model;
  result.memory_bytes = std::max<int64_t>(1, host.memory_bytes);
  result.dtype = "fp32";
  result.repeats = options.repeats;
  result.notes.push_back(fmt::format(
      "cpu: {} hardware threads, the pooled devices; op times per share count, with every device running the op "
      "at once and (where other devices exist) alone",
      host.hardware_threads));
  const auto stage = [&options](const char* name, int index) {
    if (options.on_stage) options.on_stage(name, index, 8);
  };
  stage("matrix-product rates", 0);
  measure_rates_in_turns(options, host, result);
  result.effective_cache_bytes = measure_effective_cache(host.last_level_cache_bytes);
  stage("recurrent cells' arithmetic", 1);
  measure_cell_pointwise(options, result);
  result.last_level_cache_bytes = host.last_level_cache_bytes;
  stage("copies", 2);
  measure_copies(options, result);
  stage("hand-offs between threads", 3);
  measure_hand_off(options, result);
  stage("the gap between ops", 4);
  measure_op_gap(options, result);
  stage("hand-offs between lanes", 5);
  measure_lane_handoff(options, host.hardware_threads, result);
  stage("hand-offs to a sleeping worker", 6);
  measure_parked_handoff(options, host.hardware_threads, result);
  stage(options.ops.empty() ? "op times" : "the op times of the networks' shapes", 7);
  measure_ops(options, host.hardware_threads, result);
  for (const OpDef* def : op_defs()) {
    if (has_cpu_kernel(def->kind) && !cpu_kernel_splits_over_threads(def->kind)) {
      result.one_thread_kinds.emplace_back(def->name);
    }
  }
  result.one_thread_kinds.emplace_back("epilogue");  // an all-reduce's activation: one thread, as relu's
  return result;
}

}  // namespace splitscope

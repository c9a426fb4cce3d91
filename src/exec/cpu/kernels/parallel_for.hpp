#pragma once
/// \file
/// How a kernel spreads its work over threads without knowing about them: it
/// hands a ParallelFor the number of independent pieces and a function over a
/// range of pieces. The CPU executor passes its intra-op pool; tests, the RNN
/// demo and the copy lanes pass SerialFor.

#include <cstdint>
#include <functional>

namespace splitscope {

/// Runs a function over disjoint chunks of [0, count).
class ParallelFor {
 public:
  using ChunkFunction = std::function<void(int64_t begin, int64_t end)>;

  virtual ~ParallelFor() = default;
  /// Threads that may run chunks at the same time (including the caller).
  virtual int threads() const = 0;
  /// Calls `chunk(begin, end)` over disjoint ranges that together cover
  /// [0, count), none shorter than `grain` unless [0, count) is, and returns
  /// when every call has returned. The first exception thrown by a chunk is
  /// rethrown here.
  virtual void run(int64_t count, int64_t grain, const ChunkFunction& chunk) = 0;
  /// Returns once every thread that run() would use is awake (looking for
  /// work, not parked), so that the next run() does not pay a wake-up.
  virtual void wake() {}
};

/// Runs everything on the calling thread, as one chunk.
class SerialFor final : public ParallelFor {
 public:
  int threads() const override { return 1; }
  void run(int64_t count, int64_t grain, const ChunkFunction& chunk) override {
    (void)grain;
    if (count > 0) chunk(0, count);
  }
};

}  // namespace splitscope

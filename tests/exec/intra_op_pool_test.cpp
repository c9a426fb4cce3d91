// The intra-op pool hands out every index exactly once, in at most one chunk
// per thread, and passes failures back to the caller.

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "exec/cpu/intra_op_pool.hpp"

namespace splitscope {
namespace intra_op_pool_test {
namespace {

TEST(IntraOpPool, CoversEveryIndexOnce) {
  IntraOpPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  for (int64_t count : {1, 2, 3, 7, 100, 1001}) {
    for (int64_t grain : {1, 4, 50}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      std::atomic<int> chunks{0};
      pool.run(count, grain, [&](int64_t begin, int64_t end) {
        chunks.fetch_add(1);
        EXPECT_LT(begin, end);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << count << "/" << grain;
      // At most one chunk per thread, and none shorter than the grain: ceil(count / grain) caps them too.
      EXPECT_LE(chunks.load(), std::min<int64_t>(3, (count + grain - 1) / grain)) << count << "/" << grain;
    }
  }
}

TEST(IntraOpPool, UsesSeveralThreads) {
  IntraOpPool pool(2);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  // Chunks that wait for each other can only finish if two threads run them.
  std::atomic<int> arrived{0};
  pool.run(2, 1, [&](int64_t, int64_t) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
    std::lock_guard lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(seen.size(), 2u);
}

TEST(IntraOpPool, RethrowsAChunksFailureAndKeepsWorking) {
  IntraOpPool pool(2);
  EXPECT_THROW(pool.run(10, 1, [](int64_t begin, int64_t) {
    if (begin == 0) throw std::runtime_error("chunk failed");
  }), std::runtime_error);
  std::atomic<int64_t> sum{0};
  for (int repeat = 0; repeat < 1000; ++repeat) {
    pool.run(10, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sum.fetch_add(i);
    });
  }
  EXPECT_EQ(sum.load(), 1000 * 45);  // 0 + 1 + ... + 9 = 45 per run
}

TEST(SerialFor, OneChunk) {
  SerialFor serial;
  int calls = 0;
  serial.run(5, 1, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 5);
  });
  serial.run(0, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace intra_op_pool_test
}  // namespace splitscope

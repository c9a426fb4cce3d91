// The event queue: (time, sequence) order, ties in insertion order, remove,
// time never going backwards; and the heap against a brute-force reference
// over a long random run.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/event_queue.hpp"

namespace splitscope {
namespace event_queue_test {
namespace {

TEST(EventQueue, GivesEventsInTimeOrder) {
  EventQueue<int> queue;
  EXPECT_TRUE(queue.empty());
  for (const auto& [time, id] : std::vector<std::pair<double, int>>{{3, 3}, {1, 1}, {2, 2}, {0.5, 0}}) {
    queue.insert(time, id);
  }
  EXPECT_EQ(queue.peek().payload, 0);
  std::vector<int> order;
  while (!queue.empty()) order.push_back(queue.remove_next().payload);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(queue.now(), 3.0);
}

TEST(EventQueue, TiesResolveInInsertionOrder) {
  EventQueue<int> queue;
  for (int i = 0; i < 100; ++i) queue.insert(1.0, i);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(queue.remove_next().payload, i);
}

TEST(EventQueue, RemoveCancelsOnlyThatEvent) {
  EventQueue<int> queue;
  queue.insert(1, 1);
  const EventHandle two = queue.insert(2, 2);
  queue.insert(3, 3);
  EXPECT_TRUE(queue.contains(two));
  queue.remove(two);
  EXPECT_FALSE(queue.contains(two));
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.remove_next().payload, 1);
  EXPECT_EQ(queue.remove_next().payload, 3);
  EXPECT_THROW(queue.remove(two), std::logic_error);  // stale handle
}

TEST(EventQueue, AHandleGoesStaleWhenItsSlotIsReused) {
  EventQueue<int> queue;
  const EventHandle first = queue.insert(1, 1);
  queue.remove_next();
  const EventHandle second = queue.insert(2, 2);  // same slot, next generation
  EXPECT_EQ(first.slot, second.slot);
  EXPECT_FALSE(queue.contains(first));
  EXPECT_TRUE(queue.contains(second));
}

TEST(EventQueue, TimeNeverGoesBackwards) {
  EventQueue<int> queue;
  queue.insert(5, 0);
  queue.remove_next();
  EXPECT_THROW(queue.insert(4.999, 1), std::logic_error);
  EXPECT_NO_THROW(queue.insert(5, 2));  // "now" is allowed
}

TEST(EventQueue, MatchesAReferenceOverARandomRun) {
  // The reference: a std::set ordered by (time, sequence).
  std::mt19937_64 random(7);
  EventQueue<int> queue;
  std::set<std::pair<double, int>> reference;  // (time, payload = insertion number)
  std::vector<std::pair<EventHandle, std::pair<double, int>>> pending;
  int inserted = 0;
  double now = 0;
  for (int round = 0; round < 20000; ++round) {
    const auto action = random() % 10;
    if (action < 5 || reference.empty()) {
      // Coarse times, so that many events tie.
      const double time = now + static_cast<double>(random() % 16);
      pending.push_back({queue.insert(time, inserted), {time, inserted}});
      reference.insert({time, inserted});
      ++inserted;
    } else if (action < 8) {
      const auto event = queue.remove_next();
      ASSERT_EQ(std::make_pair(event.time, event.payload), *reference.begin());
      reference.erase(reference.begin());
      now = event.time;
      std::erase_if(pending, [&](const auto& entry) { return entry.second.second == event.payload; });
    } else {
      const size_t victim = random() % pending.size();
      queue.remove(pending[victim].first);
      reference.erase(pending[victim].second);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
}

}  // namespace
}  // namespace event_queue_test
}  // namespace splitscope

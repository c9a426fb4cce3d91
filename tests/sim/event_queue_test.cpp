// The event queue: (time, sequence) order, ties in insertion order, cancel,
// time never going backwards; and both layouts against a brute-force reference
// over a long random run.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.hpp"

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

TEST(EventQueue, CancelDropsOnlyThatEvent) {
  EventQueue<int> queue;
  queue.insert(1, 1);
  const EventHandle two = queue.insert(2, 2);
  queue.insert(3, 3);
  queue.cancel(two);
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.remove_next().payload, 1);
  EXPECT_EQ(queue.peek().payload, 3);  // the cancelled event never reaches the front
  EXPECT_EQ(queue.remove_next().payload, 3);
  EXPECT_TRUE(queue.empty());
  EXPECT_THROW(queue.cancel(two), std::logic_error);  // no longer pending
}

TEST(EventQueue, CancellingTheFrontEventsEmptiesTheQueue) {
  EventQueue<int> queue;
  const EventHandle one = queue.insert(1, 1);
  const EventHandle two = queue.insert(1, 2);
  queue.cancel(two);
  EXPECT_EQ(queue.peek().payload, 1);
  queue.cancel(one);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_THROW(queue.cancel(EventHandle{}), std::logic_error);  // names no event
}

TEST(EventQueue, AnEventWaitingBehindOthersCannotBeCancelledTwice) {
  EventQueue<int> queue;
  queue.insert(1, 1);
  const EventHandle two = queue.insert(2, 2);
  queue.cancel(two);
  EXPECT_THROW(queue.cancel(two), std::logic_error);
}

TEST(EventQueue, KeepsItsOrderAcrossTheSortedAndTheHeapLayouts) {
  // 200 events, far past kSortedMax, in a shuffled order with ties; then
  // drained to below kSortedMax / 4 and refilled, so that the layout changes
  // both ways while events are pending.
  constexpr int kEvents = 200;
  static_assert(kEvents > 4 * EventQueue<int>::kSortedMax);
  std::mt19937_64 random(11);
  std::vector<int> order(kEvents);
  for (int i = 0; i < kEvents; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), random);
  EventQueue<int> queue;
  std::set<std::pair<double, int>> reference;  // (time, insertion number)
  int inserted = 0;
  const auto insert = [&](double time) {
    queue.insert(time, inserted);
    reference.insert({time, inserted});
    ++inserted;
  };
  for (int i : order) insert(static_cast<double>(i / 3));  // three events per time
  for (int round = 0; round < 3; ++round) {
    while (queue.size() > 4) {
      const auto event = queue.remove_next();
      ASSERT_EQ(std::make_pair(event.time, event.payload), *reference.begin());
      reference.erase(reference.begin());
    }
    for (int i = 0; i < kEvents; ++i) insert(queue.now() + static_cast<double>(order[static_cast<size_t>(i)] % 50));
  }
  while (!queue.empty()) {
    const auto event = queue.remove_next();
    ASSERT_EQ(std::make_pair(event.time, event.payload), *reference.begin());
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(reference.empty());
}

TEST(EventQueue, HoldsTensOfThousandsOfCancelledEventsAtOnce) {
  // A fat tree's shared uplinks move every flow's completion whenever one of
  // them starts or ends, so a run holds many cancelled completions at once
  // (hundreds of thousands at 1,024 GPUs). Each cancelled event, wherever it
  // sits, never comes out; each kept one comes out in order; size() counts
  // only the kept ones all along.
  constexpr int kEvents = 60000;
  EventQueue<int> queue;
  std::vector<EventHandle> handles;
  handles.reserve(kEvents);
  for (int i = 0; i < kEvents; ++i) handles.push_back(queue.insert(static_cast<double>(kEvents - i), i));
  // Cancel two of every three, latest first, so that the marks pile up before any reaches the front.
  int kept = kEvents;
  for (int i = 0; i < kEvents; ++i) {
    if (i % 3 == 0) continue;
    queue.cancel(handles[static_cast<size_t>(i)]);
    --kept;
  }
  EXPECT_EQ(queue.size(), static_cast<size_t>(kept));
  EXPECT_THROW(queue.cancel(handles[1]), std::logic_error);  // cancelled twice
  int expected = kEvents - 1 - (kEvents - 1) % 3;  // the earliest kept event: the last inserted with i % 3 == 0
  while (!queue.empty()) {
    const auto event = queue.remove_next();
    ASSERT_EQ(event.payload, expected);
    expected -= 3;
    --kept;
    ASSERT_EQ(queue.size(), static_cast<size_t>(kept));
  }
  EXPECT_EQ(expected, -3);
}

TEST(EventQueue, TimeNeverGoesBackwards) {
  EventQueue<int> queue;
  queue.insert(5, 0);
  queue.remove_next();
  EXPECT_THROW(queue.insert(4.999, 1), std::logic_error);
  EXPECT_NO_THROW(queue.insert(5, 2));  // "now" is allowed
}

TEST(EventQueue, MatchesAReferenceOverARandomRun) {
  // The reference: a std::set ordered by (time, sequence). Phases of 2000
  // rounds alternately grow the queue past kSortedMax and drain it, so that
  // both layouts and the changes between them are exercised.
  std::mt19937_64 random(7);
  EventQueue<int> queue;
  std::set<std::pair<double, int>> reference;  // (time, payload = insertion number)
  std::vector<std::pair<EventHandle, std::pair<double, int>>> pending;
  int inserted = 0;
  double now = 0;
  size_t largest = 0;
  for (int round = 0; round < 20000; ++round) {
    const auto action = random() % 10;
    const bool growing = (round / 2000) % 2 == 0;
    if (action < (growing ? 7u : 3u) || reference.empty()) {
      // Coarse times, so that many events tie.
      const double time = now + static_cast<double>(random() % 16);
      pending.push_back({queue.insert(time, inserted), {time, inserted}});
      reference.insert({time, inserted});
      ++inserted;
    } else if (action % 2 == 0) {
      const auto event = queue.remove_next();
      ASSERT_EQ(std::make_pair(event.time, event.payload), *reference.begin());
      reference.erase(reference.begin());
      now = event.time;
      std::erase_if(pending, [&](const auto& entry) { return entry.second.second == event.payload; });
    } else {
      const size_t victim = random() % pending.size();
      queue.cancel(pending[victim].first);
      reference.erase(pending[victim].second);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    ASSERT_EQ(queue.size(), reference.size());
    ASSERT_EQ(queue.empty(), reference.empty());
    largest = std::max(largest, reference.size());
  }
  EXPECT_GT(largest, 4 * EventQueue<int>::kSortedMax);
}

}  // namespace
}  // namespace event_queue_test
}  // namespace splitscope

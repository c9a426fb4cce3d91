#pragma once
/// \file
/// The simulator's future event list, after ns-3's schedulers: events ordered
/// by (time, sequence number) so that ties resolve in insertion order on
/// every run, and time asserted never to go backwards.
///
/// Two layouts, as ns-3 keeps a list scheduler beside its heap: a run
/// usually has a few events pending per device (bench_sim's million-op plan
/// never more than 9), and then the events are an array sorted latest first,
/// so that taking the earliest is a pop from the back and an insert is a
/// short scan. A binary heap spent most of its time in comparisons whose
/// outcome event times make hard to predict. Past kSortedMax pending events
/// (a host lane queues a release per op at the start) the array becomes a
/// binary heap, and goes back below kSortedMax / 4: each layout has O(n)
/// work only where n is small.
///
/// cancel() is ns-3's EventId::Cancel, not Remove: the event stays in the
/// list, marked, and is dropped when it reaches the front, so that no
/// operation needs to know where an event sits. The marks are a hash set of
/// sequence numbers: a queue with none pays one test per removal for them,
/// and one with many (every flow on a shared uplink moves its completion
/// whenever the bandwidth it gets changes: hundreds of thousands pending on
/// a fat tree of 1,024 GPUs) pays O(1) per cancel and per removal, where a
/// list of marks searched at each made a run quadratic in them.

#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <utility>
#include <vector>

#include "util/check.hpp"

namespace splitscope {

/// Names an event for cancel(): its sequence number. Only the owner knows
/// whether its event is still pending (it has not come out of the queue).
struct EventHandle {
  uint64_t sequence = UINT64_MAX;
  bool valid() const { return sequence != UINT64_MAX; }
};

template <class Payload>
class EventQueue {
 public:
  struct Event {
    double time = 0;
    uint64_t sequence = 0;
    Payload payload{};
  };

  /// Pending events above which the sorted array becomes a heap.
  static constexpr size_t kSortedMax = 32;

  /// Schedules `payload` at `time`, which must not be before the last removed event.
  EventHandle insert(double time, Payload payload) {
    SPLITSCOPE_CHECK(time >= now_, "an event may not be scheduled in the past");
    const uint64_t sequence = next_sequence_++;
    Event event{time, sequence, std::move(payload)};
    if (heap_) {
      events_.push_back(std::move(event));
      std::push_heap(events_.begin(), events_.end(), Later{});
    } else if (events_.size() < kSortedMax) {
      // Shift the earlier events one place back until the new one fits.
      size_t at = events_.size();
      events_.emplace_back();
      while (at > 0 && Later{}(event, events_[at - 1])) {
        events_[at] = std::move(events_[at - 1]);
        --at;
      }
      events_[at] = std::move(event);
    } else {
      events_.push_back(std::move(event));
      std::make_heap(events_.begin(), events_.end(), Later{});
      heap_ = true;
    }
    return {sequence};
  }

  bool empty() const { return events_.empty(); }
  /// Pending events, the cancelled ones not yet dropped excluded.
  size_t size() const { return events_.size() - cancelled_.size(); }

  /// The earliest event (the queue must not be empty).
  const Event& peek() const {
    SPLITSCOPE_CHECK(!events_.empty(), "peek on an empty event queue");
    return heap_ ? events_.front() : events_.back();
  }

  /// Takes the earliest event out; the simulation clock moves to its time.
  Event remove_next() {
    SPLITSCOPE_CHECK(!events_.empty(), "remove_next on an empty event queue");
    Event event = take_front();
    SPLITSCOPE_CHECK(event.time >= now_, "simulated time went backwards");
    now_ = event.time;
    drop_cancelled();
    return event;
  }

  /// Cancels a pending event: it will not come out. `handle` must name an
  /// event inserted and neither removed nor cancelled yet (its owner's
  /// business: the queue cannot tell a removed event from a pending one).
  void cancel(EventHandle handle) {
    SPLITSCOPE_CHECK(handle.valid() && handle.sequence < next_sequence_, "cancel of an event never inserted");
    SPLITSCOPE_CHECK(cancelled_.insert(handle.sequence).second, "an event cancelled twice");
    SPLITSCOPE_CHECK(cancelled_.size() <= events_.size(), "cancel of an event no longer pending");
    drop_cancelled();
  }

  /// The time of the last removed event (0 before any).
  double now() const { return now_; }

 private:
  /// Whether x comes after y. A type, not a function, so that the loops inline it.
  struct Later {
    bool operator()(const Event& x, const Event& y) const {
      return x.time > y.time || (x.time == y.time && x.sequence > y.sequence);
    }
  };

  Event take_front() {
    if (!heap_) {
      Event event = std::move(events_.back());
      events_.pop_back();
      return event;
    }
    std::pop_heap(events_.begin(), events_.end(), Later{});
    Event event = std::move(events_.back());
    events_.pop_back();
    if (events_.size() <= kSortedMax / 4) {
      // Latest first, the earliest at the back.
      std::sort(events_.begin(), events_.end(), Later{});
      heap_ = false;
    }
    return event;
  }

  /// Drops cancelled events from the front, so that peek() and empty() see only pending ones.
  void drop_cancelled() {
    while (!cancelled_.empty() && !events_.empty()) {
      if (cancelled_.erase(peek().sequence) == 0) return;
      take_front();
    }
  }

  std::vector<Event> events_;  ///< sorted latest first, or (heap_) a heap with the earliest on top
  bool heap_ = false;
  std::unordered_set<uint64_t> cancelled_;  ///< sequences of cancelled events still in events_
  uint64_t next_sequence_ = 0;
  double now_ = 0;
};

}  // namespace splitscope

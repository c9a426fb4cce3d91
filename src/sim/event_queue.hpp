#pragma once
/// \file
/// The simulator's future event list, after ns-3's scheduler: five
/// operations (insert, empty, peek, remove_next, remove), events ordered by
/// (time, sequence number) so that ties resolve in insertion order on every
/// run, and time asserted never to go backwards. An indexed binary heap: every
/// operation is O(log n), and remove() cancels an event in place (a transfer's
/// completion moves whenever the bandwidth it gets changes).

#include <cstdint>
#include <utility>
#include <vector>

#include "util/check.hpp"

namespace splitscope {

/// Names a pending event, for remove(); stale once the event has left the queue.
struct EventHandle {
  uint32_t slot = UINT32_MAX;
  uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

template <class Payload>
class EventQueue {
 public:
  struct Event {
    double time = 0;
    uint64_t sequence = 0;
    Payload payload{};
  };

  /// Schedules `payload` at `time`, which must not be before the last removed event.
  EventHandle insert(double time, Payload payload) {
    SPLITSCOPE_CHECK(time >= now_, "an event may not be scheduled in the past");
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    Slot& entry = slots_[slot];
    entry.event = Event{time, next_sequence_++, std::move(payload)};
    entry.heap_index = static_cast<uint32_t>(heap_.size());
    heap_.push_back(slot);
    sift_up(entry.heap_index);
    return {slot, entry.generation};
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

  /// The earliest event (the queue must not be empty).
  const Event& peek() const {
    SPLITSCOPE_CHECK(!heap_.empty(), "peek on an empty event queue");
    return slots_[heap_.front()].event;
  }

  /// Takes the earliest event out; the simulation clock moves to its time.
  Event remove_next() {
    SPLITSCOPE_CHECK(!heap_.empty(), "remove_next on an empty event queue");
    const uint32_t slot = heap_.front();
    Event event = std::move(slots_[slot].event);
    SPLITSCOPE_CHECK(event.time >= now_, "simulated time went backwards");
    now_ = event.time;
    erase_at(0);
    release(slot);
    return event;
  }

  /// Cancels a pending event; the handle must name one still in the queue.
  void remove(EventHandle handle) {
    SPLITSCOPE_CHECK(contains(handle), "remove of an event that is not pending");
    const uint32_t index = slots_[handle.slot].heap_index;
    erase_at(index);
    release(handle.slot);
  }

  /// Whether `handle` names an event still in the queue.
  bool contains(EventHandle handle) const {
    return handle.valid() && handle.slot < slots_.size() &&
           slots_[handle.slot].generation == handle.generation &&
           slots_[handle.slot].heap_index != kNotInHeap;
  }

  /// The time of the last removed event (0 before any).
  double now() const { return now_; }

 private:
  static constexpr uint32_t kNotInHeap = UINT32_MAX;

  struct Slot {
    Event event;
    uint32_t heap_index = kNotInHeap;
    uint32_t generation = 0;
  };

  bool earlier(uint32_t a, uint32_t b) const {
    const Event& x = slots_[a].event;
    const Event& y = slots_[b].event;
    return x.time < y.time || (x.time == y.time && x.sequence < y.sequence);
  }

  void place(uint32_t index, uint32_t slot) {
    heap_[index] = slot;
    slots_[slot].heap_index = index;
  }

  void sift_up(uint32_t index) {
    const uint32_t slot = heap_[index];
    while (index > 0) {
      const uint32_t parent = (index - 1) / 2;
      if (!earlier(slot, heap_[parent])) break;
      place(index, heap_[parent]);
      index = parent;
    }
    place(index, slot);
  }

  void sift_down(uint32_t index) {
    const uint32_t slot = heap_[index];
    const auto count = static_cast<uint32_t>(heap_.size());
    while (true) {
      uint32_t child = 2 * index + 1;
      if (child >= count) break;
      if (child + 1 < count && earlier(heap_[child + 1], heap_[child])) ++child;
      if (!earlier(heap_[child], slot)) break;
      place(index, heap_[child]);
      index = child;
    }
    place(index, slot);
  }

  void erase_at(uint32_t index) {
    const uint32_t last = heap_.back();
    heap_.pop_back();
    if (index == heap_.size()) return;
    place(index, last);
    if (index > 0 && earlier(last, heap_[(index - 1) / 2])) {
      sift_up(index);
    } else {
      sift_down(index);
    }
  }

  void release(uint32_t slot) {
    slots_[slot].heap_index = kNotInHeap;
    ++slots_[slot].generation;
    free_.push_back(slot);
  }

  std::vector<Slot> slots_;
  std::vector<uint32_t> heap_;
  std::vector<uint32_t> free_;
  uint64_t next_sequence_ = 0;
  double now_ = 0;
};

}  // namespace splitscope

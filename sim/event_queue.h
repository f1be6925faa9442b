// The discrete-event queue: events ordered by (time, priority, sequence).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace attnsim::sim {

// One scheduled event. `target` names the component, `kind` is the component's own.
struct Event {
  Tick time = 0;
  std::uint32_t priority = 0;  // lower runs first among events at the same time
  std::uint64_t sequence = 0;  // insertion order: breaks remaining ties, so order is deterministic
  std::uint32_t target = 0;
  std::uint32_t kind = 0;
};

// A binary min-heap of future events and a FIFO of priority-0 events scheduled at the current time (most
// wake-ups: they need no heap sift). Contract: pop() returns events in strictly increasing (time,
// priority, sequence) order; an event may not be scheduled before the current time; no allocation
// once the heap and FIFO have grown to their working size. Not thread-safe: one queue per
// simulation.
class EventQueue {
 public:
  // Contract: priority < 2^16 and fewer than 2^48 events scheduled in the queue's life.
  void schedule(Tick time, std::uint32_t priority, std::uint32_t target, std::uint32_t kind);
  bool empty() const { return heap_.empty() && now_head_ == now_fifo_.size(); }
  std::size_t size() const { return heap_.size() + now_fifo_.size() - now_head_; }
  // Removes the earliest event into `out` and advances now() to its time.
  bool pop(Event& out);
  Tick now() const { return now_; }
  std::uint64_t scheduled() const { return next_sequence_; }

 private:
  // A heap entry: (priority, sequence) packed into one key, so an order test is two compares.
  struct Entry {
    Tick time;
    std::uint64_t key;  // priority << 48 | sequence
    std::uint32_t target, kind;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return (a.time > b.time) | ((a.time == b.time) & (a.key > b.key));  // no branch
    }
  };
  static constexpr int kSequenceBits = 48;
  void take(const Entry& e, Event& out);
  void pop_heap_top();  // removes heap_.front()
  void sift_up(std::size_t hole, const Entry& e);  // places e at or above the hole
  std::vector<Entry> heap_;
  // Priority-0 events at now_, in sequence order. They were scheduled after now_ was reached, so
  // they follow the heap's priority-0 events at now_ and precede its higher priorities.
  std::vector<Entry> now_fifo_;
  std::size_t now_head_ = 0;
  Tick now_ = 0;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace attnsim::sim

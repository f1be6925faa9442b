// The discrete-event queue: events ordered by (time, priority, sequence).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace attnsim::sim {

// One scheduled event. `target` names the component, `kind` and `payload` are the component's own.
struct Event {
  Tick time = 0;
  std::uint32_t priority = 0;  // lower runs first among events at the same time
  std::uint64_t sequence = 0;  // insertion order: breaks remaining ties, so order is deterministic
  std::uint32_t target = 0;
  std::uint32_t kind = 0;
  std::uint64_t payload = 0;
};

// A min-heap of events. Contract: pop() returns events in strictly increasing (time, priority,
// sequence) order; an event may not be scheduled before the current time; no allocation once
// the heap has grown to its working size. Not thread-safe: one queue per simulation.
class EventQueue {
 public:
  void schedule(Tick time, std::uint32_t priority, std::uint32_t target, std::uint32_t kind, std::uint64_t payload = 0);
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // Removes the earliest event into `out` and advances now() to its time.
  bool pop(Event& out);
  Tick now() const { return now_; }
  std::uint64_t scheduled() const { return next_sequence_; }

 private:
  static bool later(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time > b.time;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.sequence > b.sequence;
  }
  std::vector<Event> heap_;
  Tick now_ = 0;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace attnsim::sim

#include "sim/event_queue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::sim {

void EventQueue::schedule(Tick time, std::uint32_t priority, std::uint32_t target, std::uint32_t kind,
                          std::uint64_t payload) {
  if (time < now_) {
    throw std::logic_error("event scheduled in the past: at " + std::to_string(time) + " ps, now " +
                           std::to_string(now_) + " ps");
  }
  heap_.push_back(Event{time, priority, next_sequence_++, target, kind, payload});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool EventQueue::pop(Event& out) {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  out = heap_.back();
  heap_.pop_back();
  now_ = out.time;
  return true;
}

}  // namespace attnsim::sim

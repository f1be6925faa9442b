#include "sim/event_queue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::sim {

void EventQueue::schedule(Tick time, std::uint32_t priority, std::uint32_t target, std::uint32_t kind) {
  if (time < now_) {
    throw std::logic_error("event scheduled in the past: at " + std::to_string(time) + " ps, now " +
                           std::to_string(now_) + " ps");
  }
  if (priority >= (1u << 16) || next_sequence_ >= (std::uint64_t{1} << kSequenceBits)) {
    throw std::logic_error("event queue: priority or event count beyond its key");
  }
  heap_.push_back(Entry{time, std::uint64_t{priority} << kSequenceBits | next_sequence_++, target, kind});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

bool EventQueue::pop(Event& out) {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  const Entry& e = heap_.back();
  out = Event{e.time, static_cast<std::uint32_t>(e.key >> kSequenceBits), e.key & ((std::uint64_t{1} << kSequenceBits) - 1),
              e.target, e.kind};
  heap_.pop_back();
  now_ = out.time;
  return true;
}

}  // namespace attnsim::sim

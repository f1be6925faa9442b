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
  const Entry e{time, std::uint64_t{priority} << kSequenceBits | next_sequence_++, target, kind};
  if (time == now_ && priority == 0) {
    now_fifo_.push_back(e);
    return;
  }
  heap_.push_back(e);
  sift_up(heap_.size() - 1, e);
}

void EventQueue::sift_up(std::size_t i, const Entry& e) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!Later{}(heap_[parent], e)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::pop_heap_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  // Bottom-up: move the earlier child into the root's hole down to a leaf (one unpredictable
  // comparison per level, made without a branch), then sift the last entry up from there.
  std::size_t i = 0;
  for (std::size_t c = 1; c < n; c = 2 * i + 1) {
    if (c + 1 < n) c += static_cast<std::size_t>(Later{}(heap_[c], heap_[c + 1]));
    heap_[i] = heap_[c];
    i = c;
  }
  sift_up(i, last);
}

void EventQueue::take(const Entry& e, Event& out) {
  out = Event{e.time, static_cast<std::uint32_t>(e.key >> kSequenceBits), e.key & ((std::uint64_t{1} << kSequenceBits) - 1),
              e.target, e.kind};
  now_ = out.time;
}

bool EventQueue::pop(Event& out) {
  if (now_head_ < now_fifo_.size()) {
    const bool heap_first = !heap_.empty() && heap_.front().time == now_ && (heap_.front().key >> kSequenceBits) == 0;
    if (!heap_first) {
      take(now_fifo_[now_head_++], out);
      if (now_head_ == now_fifo_.size()) {
        now_fifo_.clear();
        now_head_ = 0;
      }
      return true;
    }
  }
  if (heap_.empty()) return false;
  take(heap_.front(), out);
  pop_heap_top();
  return true;
}

}  // namespace attnsim::sim

// Where a kernel's time went, as SIMD time: from the kernel's start to its last workgroup's
// retirement each SIMD is busy (matrix work, or vector work alone), idle waiting on something
// (the cause of the operation that ended the idle stretch), or idle with nothing left to run.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/time.h"

namespace attnsim::sim {

// What an operation's finish was bound by, and so what a SIMD idle until then waited on.
enum class WaitCause : std::uint8_t {
  vector,   // VALU or transcendental work (of another wave group or SIMD)
  lds,      // the CU's LDS
  l2,       // L2 channels, or the CU's request issue path to them
  fabric,   // the L2-to-fabric links and the memory-side cache's channels
  hbm,      // HBM channels
  latency,  // unloaded round trips: the levels' latency, or the window of outstanding requests
  sync,     // barriers, phase boundaries, and matrix work on other SIMDs
  issue,    // a wave's own instruction stream: its issue turns and fixed-latency waits
  count
};
inline constexpr std::size_t kWaitCauses = static_cast<std::size_t>(WaitCause::count);
std::string_view to_string(WaitCause c);

// Why an operation finished when it did: its bound, and the share of its duration (of 255) that
// was unloaded memory latency rather than queueing and service at the bound.
struct FinishCause {
  WaitCause bound = WaitCause::sync;
  std::uint8_t latency_share = 0;
};

// SIMD time of a kernel (summed over SIMDs). Contract: matrix + vector + every wait + tail is the
// SIMDs' total time from the kernel's start to its last retirement.
struct TimeBreakdown {
  Tick matrix = 0;  // the matrix pipe busy
  Tick vector = 0;  // the VALU busy while the matrix pipe is not
  std::array<Tick, kWaitCauses> waiting{};
  Tick tail = 0;    // nothing left to run on the SIMD: the last wave and load imbalance

  // An idle stretch of `gap` that ended when an operation waiting on `c` could issue.
  void add_wait(const FinishCause& c, Tick gap) {
    const Tick latency = gap * c.latency_share / 255;
    waiting[static_cast<std::size_t>(WaitCause::latency)] += latency;
    waiting[static_cast<std::size_t>(c.bound)] += gap - latency;
  }
  void add(const TimeBreakdown& o) {
    matrix += o.matrix;
    vector += o.vector;
    for (std::size_t i = 0; i < kWaitCauses; ++i) waiting[i] += o.waiting[i];
    tail += o.tail;
  }
  Tick total() const {
    Tick t = matrix + vector + tail;
    for (Tick w : waiting) t += w;
    return t;
  }
};

// The share (of 255) of `duration` that `latency` is, capped at all of it.
inline std::uint8_t latency_share(Tick latency, Tick duration) {
  if (latency <= 0) return 0;
  if (duration <= 0 || latency >= duration) return 255;
  return static_cast<std::uint8_t>(latency * 255 / duration);
}

}  // namespace attnsim::sim

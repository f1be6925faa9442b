// Fast-forward of large grids (EngineOptions::fast_forward, either tag mode): a kernel whose grid
// fills many rounds of the GPU's workgroup slots simulates only some of its rounds. After a warm-up
// it alternates measured windows with skips: the workgroups next in dispatch order are not run, and
// what they would add (time, counters, busy time, instructions) is interpolated from the windows
// before and after the skip; the last rounds (the drain) are simulated. docs/model.md,
// **Fast-forward**.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "sim/counters.h"
#include "sim/engine.h"
#include "sim/memory_path.h"
#include "sim/time.h"
#include "sim/time_breakdown.h"

namespace attnsim::sim {

// Rounds are of the GPU's workgroup slots (dispatches). The warm-up lasts at least
// kFastForwardWarmRounds rounds, until the kernel has filled the caches' capacity (brought as many
// bytes into the L2s, read from the fabric or written, as the L2s and the memory-side cache hold:
// hits move nothing in) and its rate of tile operations changed by at most kFastForwardSteadyChange
// from one round to the next. A window spans at least kFastForwardMinWindowRounds rounds and
// closes once two rounds in a row agree (within kFastForwardSteadyChange in time and in
// L2-to-fabric requests per tile operation), or else after
// kFastForwardMaxWindowRounds rounds (unequal workgroups: as many whole periods of the grid as
// those hold): a grid whose traffic varies from round to round (along the heads of a batch, or in
// cycles of several batches) is measured over as many as that. Up to
// kFastForwardSkips skips of at least kFastForwardMinSkippedRounds; after each, a re-warm refills the
// caches before the next window: at least kFastForwardRewarmRounds rounds, until the kernel has
// filled the caches' capacity again since the skip and neither the L2-to-fabric requests nor the
// memory reads per tile operation of a round exceed the window's before the skip by more than
// kFastForwardSettledExcess (or both stay within kFastForwardSettledChange of the round before's),
// at most kFastForwardMaxRewarmRounds; a re-warm that one more round would leave without room for
// a window of kFastForwardMinWindowRounds before the tail need not wait for the refill. A window
// closes, and none opens, once an XCD has fewer than kFastForwardTailRounds rounds of its slots'
// workgroups left to start; kFastForwardTailRounds rounds and the last partial one are simulated.
inline constexpr std::uint64_t kFastForwardWarmRounds = 2;
inline constexpr double kFastForwardSteadyChange = 0.01;
inline constexpr std::uint64_t kFastForwardMinWindowRounds = 2;
inline constexpr std::uint64_t kFastForwardMaxWindowRounds = 8;
inline constexpr std::uint64_t kFastForwardSkips = 2;
inline constexpr std::uint64_t kFastForwardMinSkippedRounds = 2;
inline constexpr std::uint64_t kFastForwardRewarmRounds = 2;
inline constexpr std::uint64_t kFastForwardMaxRewarmRounds = 8;
inline constexpr double kFastForwardSettledExcess = 0.05;
inline constexpr double kFastForwardSettledChange = 0.02;
inline constexpr std::uint64_t kFastForwardTailRounds = 2;

// The additive results of a kernel so far, taken at one moment of its run.
struct KernelSnapshot {
  Tick time = 0;
  std::uint64_t tile_ops = 0, mfma = 0, valu = 0, trans = 0, lds_bytes = 0;
  Tick resident_time = 0;
  std::vector<TrafficCounters> per_xcd;
  Tick matrix = 0, vector = 0, lds = 0;  // busy, summed over SIMDs or CUs
  LevelBusy memory;
  TimeBreakdown breakdown;               // SIMD time from the kernel's start to `time`
  double clock_integral = 0;             // the engine clock integrated over time (Hz x ps)
  std::uint32_t clock_updates = 0;
  std::vector<std::uint64_t> dispatched;    // per XCD, skipped workgroups included
  std::vector<std::uint64_t> xcd_tile_ops;  // per XCD, the simulated ones
};

// What the engine tells fast-forward after each dispatch: the kernel's progress so far.
struct DispatchProgress {
  std::uint64_t dispatched = 0;       // workgroups simulated (skipped ones not counted)
  std::uint64_t filled_bytes = 0;     // into the L2s: read from the fabric (FETCH_SIZE) or written
  std::uint64_t fabric_requests = 0;  // L2-to-fabric read requests
  std::uint64_t memory_read_bytes = 0;  // read from the memory (HBM)
  // The fewest workgroups an XCD has still to start (neither dispatched nor skipped).
  std::uint64_t least_remaining = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t tile_ops = 0;
  Tick now = 0;
};

// Plans one kernel's fast-forward as the engine dispatches, and adds what was skipped at the end.
// Each skip spans a whole number of rounds' time: every XCD skips the workgroups next in its
// dispatch order whose tile operations it would run in that time at its own rate so far (an XCD
// whose CUs are slower, or whose workgroups are heavier, falls behind as it would), so that the
// XCDs resume where a full run has them against each other; a grid that runs in lockstep rounds
// skips whole rounds on each XCD and keeps its phase, and a grid of unequal workgroups whose XCDs'
// shares of a period are equal skips the same whole periods on every XCD. A skip's time and counts
// (with the re-warm after it, which ran at a cold start's rate) are its tile operations at the mean
// of the rates per tile operation of the windows before and after it, so a rate that drifts along
// the grid is followed linearly.
class FastForward {
 public:
  // Contract: `slots` is the GPU's workgroup slots, `xcd_slots` one XCD's, `warm_bytes` what the
  // warm-up must fill (the L2s' and the memory-side cache's capacity), `period` the grid's
  // workgroups per batch, `equal_work` whether its workgroups all run as many tile operations (they
  // then run in lockstep rounds); `enabled` false (or a grid too small to skip anything) plans nothing.
  FastForward(bool enabled, std::uint64_t workgroups, std::uint64_t slots, std::uint64_t xcd_slots,
              std::uint64_t warm_bytes, std::uint64_t period, bool equal_work);
  // Workgroups of unequal work: each XCD's sequence repeats every xcd_period() workgroups (0: the
  // workgroups are equal, or the period is longer than kFastForwardMaxWindowRounds rounds).
  std::uint64_t xcd_period() const { return xcd_period_; }
  // The grid's workgroups run from the heaviest to the lightest within each period (FlashAttention-3's
  // longest-first sections): a window that spans part of a period measures a mix of work that no
  // skip repeats, so windows span whole periods (one, or the fewest that fill
  // kFastForwardMinWindowRounds rounds) and skips are whole periods, however long. Contract: called
  // before the first dispatch, on a grid of unequal workgroups with a period.
  void set_sorted_periods();
  // The tile operations of XCD `xcd`'s `n`-th workgroup in its dispatch order (0 past the grid's
  // end). Contract: set before the first dispatch; it outlives this object's use.
  using SequenceOps = std::function<std::uint64_t(std::uint32_t xcd, std::uint64_t n)>;
  void set_sequence(SequenceOps ops_of);
  // Whether a window may still open or close (false: nothing more to do for this kernel).
  bool active() const { return state_ != State::done; }
  // After a dispatch: true when a window opens or closes now; the engine then calls boundary().
  bool after_dispatch(const DispatchProgress& p);
  // At a window boundary, with the kernel's snapshot now and each XCD's workgroups not dispatched
  // yet: how many workgroups each XCD skips now (all 0: none). The engine then reports the skipped
  // workgroups and their tile operations with skipped().
  std::vector<std::uint64_t> boundary(const KernelSnapshot& now, const std::vector<std::uint64_t>& remaining);
  void skipped(std::uint64_t workgroups, std::uint64_t tile_ops);
  // At the kernel's end: adds every skip to `r` (its end and last retirement move later, its counts
  // grow, its tile operations by exactly the skipped ones, its breakdown keeps summing to `simds`
  // times its span) and the clock's integral over the skips to `clock_integral`.
  void extrapolate(KernelResult& r, std::uint32_t simds, double& clock_integral) const;

 private:
  enum class State { warm, window, rewarm, done };
  // Workgroups skipped at one window's close, and their tile operations.
  struct Skip {
    std::size_t before = 0;  // the window before it (index into windows_); the one after is before + 1
    std::uint64_t workgroups = 0, tile_ops = 0;
  };
  // A measured stretch: the kernel's snapshots where it opened and closed.
  struct Window {
    KernelSnapshot open, close;
    bool closed = false;
  };
  // A round's tile operations per ps, and its L2-to-fabric requests and memory read bytes per tile operation.
  struct RoundRates {
    double time = 0, fabric = 0, memory = 0;
  };
  // The rates of the round that ends at `p` (the next one starts there).
  RoundRates end_round(const DispatchProgress& p);
  // A round ended at `p`: true when its rate of tile operations (and, `with_fabric`, its L2-to-fabric
  // requests per tile operation) agrees with the round before's.
  bool round_agrees(const DispatchProgress& p, bool with_fabric);
  // A re-warm's round ended at `p`: true when neither its L2-to-fabric requests nor its memory reads
  // per tile operation exceed the window's before the skip by more than kFastForwardSettledExcess,
  // or when both changed by at most kFastForwardSettledChange from the round before's (a plateau:
  // the traffic drifted from the window's along the grid).
  bool round_settled(const DispatchProgress& p);
  // A closed window's L2-to-fabric requests and memory read bytes per tile operation (time unused).
  static RoundRates window_rates(const Window& w);
  // Workgroups an XCD that started `in_window` of the window's `window` keeps after a skip: the
  // re-warm and window (as long as the last one) of each of `windows_after` windows still to come,
  // and the tail, at its own pace (no less than at the mean pace).
  std::uint64_t kept(std::uint64_t windows_after, std::uint64_t in_window, std::uint64_t window) const;
  // `workgroups` rounded to the nearest whole number of the XCD's periods, at most the whole
  // periods in `limit`. Contract: xcd_period_ > 0.
  std::uint64_t nearest_periods(std::uint64_t workgroups, std::uint64_t limit) const;
  // Whole periods of each XCD's sequence of unequal workgroups, the same on every XCD, the nearest
  // to `rounds` of the window's time at the mean rate.
  std::uint64_t equal_share_periods(const std::vector<std::uint64_t>& remaining, const std::vector<std::uint64_t>& in_window,
                                    std::uint64_t window, std::uint64_t rounds, std::uint64_t windows_after) const;
  // The workgroups of XCD `xcd`'s sequence from its `next` on whose tile operations come nearest to
  // `ops` (in whole rounds of its slots where `whole_rounds`), at most `limit`.
  std::uint64_t workgroups_for_ops(std::uint32_t xcd, std::uint64_t next, std::uint64_t ops, bool whole_rounds,
                                   std::uint64_t limit) const;
  // Whether every XCD's share of a period of unequal workgroups is the same work. Contract: xcd_period_ > 0.
  bool equal_shares() const;
  // Rounds of window time to skip now (`window`: all XCDs' dispatches in it, `in_window` each's),
  // leaving `windows_after` windows and the tail on every XCD.
  std::uint64_t rounds_to_skip(const std::vector<std::uint64_t>& remaining, const std::vector<std::uint64_t>& in_window,
                               std::uint64_t window, std::uint64_t windows_after) const;

  State state_ = State::done;
  std::uint64_t slots_ = 1, xcd_slots_ = 1, xcds_ = 1, warm_bytes_ = 0;
  std::uint64_t max_window_ = 1;    // dispatches a window spans at most
  std::uint64_t last_window_ = 1;   // dispatches the last window spanned (each window after a skip is kept as long)
  std::uint64_t xcd_period_ = 0;    // skips are whole multiples of it (0: whole rounds suffice)
  std::uint64_t period_ = 0;        // the grid's period (dispatches)
  std::uint64_t whole_window_ = 0;  // windows span exactly this many dispatches (0: they close when steady)
  std::uint64_t rewarm_filled_ = 0;  // filled bytes when the current re-warm began
  std::uint64_t mark_ = 0;          // dispatch count the current window or re-warm began at
  DispatchProgress last_;           // at the last dispatch
  DispatchProgress round_start_;    // the current round's start
  RoundRates last_round_;
  RoundRates settled_;  // a re-warm ends once its rounds' traffic is near this (the window's before the skip)
  bool have_last_round_ = false;
  std::vector<Window> windows_;
  std::vector<Skip> skips_;
  bool equal_work_ = true;
  SequenceOps ops_of_;
};

}  // namespace attnsim::sim

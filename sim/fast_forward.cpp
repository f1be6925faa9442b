#include "sim/fast_forward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace attnsim::sim {

FastForward::FastForward(bool enabled, std::uint64_t workgroups, std::uint64_t slots, std::uint64_t xcd_slots,
                         std::uint64_t warm_bytes, std::uint64_t period, bool equal_work)
    : slots_(std::max<std::uint64_t>(1, slots)), xcd_slots_(std::max<std::uint64_t>(1, xcd_slots)),
      warm_bytes_(warm_bytes) {
  max_window_ = kFastForwardMaxWindowRounds * slots_;
  xcds_ = std::max<std::uint64_t>(1, slots_ / xcd_slots_);
  equal_work_ = equal_work;
  period_ = period;
  if (!equal_work && period > 0 && period <= max_window_) {
    // Unequal workgroups whose rounds never agree: as many whole periods as 8 rounds hold, so that
    // the window's mix of work is the grid's.
    max_window_ = max_window_ / period * period;
    // Each XCD starts every xcds-th workgroup: its own sequence repeats every period / gcd(period, xcds).
    xcd_period_ = period / std::gcd(period, xcds_);
  }
  const std::uint64_t least = (kFastForwardWarmRounds + kFastForwardRewarmRounds + kFastForwardMinSkippedRounds +
                               kFastForwardTailRounds + 2 * kFastForwardMinWindowRounds) * slots_;
  state_ = enabled && slots > 0 && workgroups >= least ? State::warm : State::done;
}

namespace {

// `n` per tile operation of `ops` (0 without operations).
double per_op(std::uint64_t n, std::uint64_t ops) { return ops ? static_cast<double>(n) / static_cast<double>(ops) : 0.0; }

}  // namespace

FastForward::RoundRates FastForward::end_round(const DispatchProgress& p) {
  const std::uint64_t ops = p.tile_ops - round_start_.tile_ops;
  RoundRates r;
  r.time = p.now > round_start_.now ? static_cast<double>(ops) / static_cast<double>(p.now - round_start_.now) : 0;
  r.fabric = per_op(p.fabric_requests - round_start_.fabric_requests, ops);
  r.memory = per_op(p.memory_read_bytes - round_start_.memory_read_bytes, ops);
  round_start_ = p;
  return r;
}

FastForward::RoundRates FastForward::window_rates(const Window& w) {
  std::uint64_t fabric = 0, memory = 0;
  for (std::size_t x = 0; x < w.close.per_xcd.size(); ++x) {
    fabric += w.close.per_xcd[x].ea_rdreq - w.open.per_xcd.at(x).ea_rdreq;
    memory += w.close.per_xcd[x].hbm_read_bytes - w.open.per_xcd.at(x).hbm_read_bytes;
  }
  const std::uint64_t ops = w.close.tile_ops - w.open.tile_ops;
  RoundRates r;
  r.fabric = per_op(fabric, ops);
  r.memory = per_op(memory, ops);
  return r;
}

bool FastForward::round_agrees(const DispatchProgress& p, bool with_fabric) {
  const RoundRates r = end_round(p);
  const auto agree = [](double a, double b) { return a == b || (b > 0 && std::abs(a / b - 1) <= kFastForwardSteadyChange); };
  const bool agrees = have_last_round_ && agree(r.time, last_round_.time) && (!with_fabric || agree(r.fabric, last_round_.fabric));
  last_round_ = r;
  have_last_round_ = true;
  return agrees;
}

bool FastForward::round_settled(const DispatchProgress& p) {
  const RoundRates r = end_round(p);
  // Refetching what the skipped workgroups would have left in the caches raises the traffic per
  // operation above the window's before the skip; it falls (not always at once: it may peak in the
  // second round) as the caches refill. A rate that drifted from the window's along the grid
  // settles elsewhere: there the re-warm ends once its rounds level off.
  const auto near = [](double now, double before) { return now <= before * (1 + kFastForwardSettledExcess); };
  const auto flat = [](double now, double before) { return std::abs(now - before) <= before * kFastForwardSettledChange; };
  const bool settled = (near(r.fabric, settled_.fabric) && near(r.memory, settled_.memory)) ||
                       (have_last_round_ && flat(r.fabric, last_round_.fabric) && flat(r.memory, last_round_.memory));
  last_round_ = r;
  have_last_round_ = true;
  return settled;
}

bool FastForward::after_dispatch(const DispatchProgress& p) {
  last_ = p;
  switch (state_) {
    case State::done:
      return false;
    case State::warm: {
      if (p.dispatched % slots_ != 0) return false;
      // Only the rate of tile operations must settle: the caches' contents are the warm bytes' job.
      const bool steady = round_agrees(p, false);
      return p.dispatched >= kFastForwardWarmRounds * slots_ && p.filled_bytes >= warm_bytes_ && steady;
    }
    case State::window: {
      const std::uint64_t in = p.dispatched - mark_;
      // An XCD about to run out of workgroups ends the window while every XCD is still busy: the
      // drain, where the XCDs finish one by one, runs at another rate.
      if (in > 0 && p.least_remaining < kFastForwardTailRounds * xcd_slots_) return true;
      if (whole_window_ > 0) return in == whole_window_;
      if (in == max_window_) return true;
      if (in % slots_ != 0) return false;
      const bool agrees = round_agrees(p, true);
      return in >= kFastForwardMinWindowRounds * slots_ && agrees;
    }
    case State::rewarm: {
      const std::uint64_t in = p.dispatched - mark_;
      if (p.least_remaining < kFastForwardTailRounds * xcd_slots_) {  // no room left for a window
        state_ = State::done;
        return false;
      }
      if (in % slots_ != 0) return false;
      // As after the warm-up, the caches' contents are the kernel's again once it has filled as many
      // bytes as they hold since the skip; but a re-warm that one more round would leave without
      // room for a window before the tail ends now.
      const bool refilled = p.filled_bytes - rewarm_filled_ >= warm_bytes_;
      const bool no_room =
          p.least_remaining < (kFastForwardTailRounds + kFastForwardMinWindowRounds + 1) * xcd_slots_;
      const bool settled = round_settled(p) && (refilled || no_room);
      return in >= kFastForwardMaxRewarmRounds * slots_ || (in >= kFastForwardRewarmRounds * slots_ && settled);
    }
  }
  return false;
}

std::uint64_t FastForward::kept(std::uint64_t windows_after, std::uint64_t in_window, std::uint64_t window) const {
  const std::uint64_t at_mean = windows_after * (kFastForwardRewarmRounds * xcd_slots_ + (last_window_ + xcds_ - 1) / xcds_) +
                                kFastForwardTailRounds * xcd_slots_;
  // An XCD that starts more than its even share of the window's workgroups (lighter workgroups)
  // goes through its reserve sooner: it keeps as many more.
  return window > 0 ? std::max(at_mean, (at_mean * in_window * xcds_ + window - 1) / window) : at_mean;
}

std::uint64_t FastForward::nearest_periods(std::uint64_t workgroups, std::uint64_t limit) const {
  const std::uint64_t down = workgroups / xcd_period_ * xcd_period_;
  const std::uint64_t up = down + xcd_period_;
  const std::uint64_t nearest = workgroups - down > up - workgroups ? up : down;
  return std::min(nearest, limit / xcd_period_ * xcd_period_);
}

void FastForward::set_sequence(SequenceOps ops_of) { ops_of_ = std::move(ops_of); }

void FastForward::set_sorted_periods() {
  if (equal_work_ || period_ == 0) throw std::logic_error("fast-forward: sorted periods need unequal workgroups and a period");
  xcd_period_ = period_ / std::gcd(period_, xcds_);
  const std::uint64_t least = kFastForwardMinWindowRounds * slots_;
  whole_window_ = (least + period_ - 1) / period_ * period_;
}

bool FastForward::equal_shares() const {
  std::uint64_t first = 0;
  for (std::uint32_t x = 0; x < xcds_; ++x) {
    std::uint64_t share = 0;
    for (std::uint64_t n = 0; n < xcd_period_; ++n) share += ops_of_(x, n);
    if (x == 0) first = share;
    if (share != first) return false;
  }
  return true;
}

std::uint64_t FastForward::equal_share_periods(const std::vector<std::uint64_t>& remaining,
                                               const std::vector<std::uint64_t>& in_window, std::uint64_t window,
                                               std::uint64_t rounds, std::uint64_t windows_after) const {
  // At the mean rate, not each XCD's own count in the window (which depends on where the window
  // cuts its period), so that the XCDs stay where they are against each other.
  std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t x = 0; x < remaining.size(); ++x) most = std::min(most, remaining[x] - kept(windows_after, in_window[x], window));
  return nearest_periods(rounds * xcd_slots_, most);
}

std::uint64_t FastForward::workgroups_for_ops(std::uint32_t xcd, std::uint64_t next, std::uint64_t ops,
                                              bool whole_rounds, std::uint64_t limit) const {
  const std::uint64_t step = whole_rounds ? xcd_slots_ : 1;
  std::uint64_t workgroups = 0, taken = 0;
  while (workgroups + step <= limit) {
    std::uint64_t more = 0;
    for (std::uint64_t i = 0; i < step; ++i) more += ops_of_(xcd, next + workgroups + i);
    if (more == 0) break;  // past the grid's end
    if (taken + more > ops) {
      if (2 * (ops - taken) >= more) workgroups += step;  // the nearer of stopping before the step and taking it
      break;
    }
    taken += more;
    workgroups += step;
  }
  return workgroups;
}

std::uint64_t FastForward::rounds_to_skip(const std::vector<std::uint64_t>& remaining,
                                          const std::vector<std::uint64_t>& in_window, std::uint64_t window,
                                          std::uint64_t windows_after) const {
  std::uint64_t rounds = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t x = 0; x < remaining.size(); ++x) {
    const std::uint64_t keep = kept(windows_after, in_window[x], window);
    if (remaining[x] < keep) return 0;
    if (in_window[x] == 0) continue;  // an XCD that started nothing in the window skips nothing
    rounds = std::min(rounds, (remaining[x] - keep) * window / (in_window[x] * slots_));
  }
  return rounds == std::numeric_limits<std::uint64_t>::max() ? 0 : rounds;
}

std::vector<std::uint64_t> FastForward::boundary(const KernelSnapshot& now, const std::vector<std::uint64_t>& remaining) {
  std::vector<std::uint64_t> skip(remaining.size(), 0);
  if (state_ != State::window) {  // a window opens: after the warm-up, or after a skip's re-warm
    windows_.push_back(Window{now, {}, false});
    state_ = State::window;
    mark_ = last_.dispatched;
    round_start_ = last_;  // the window's first round starts now (not where the re-warm began)
    have_last_round_ = false;
    return skip;
  }
  Window& w = windows_.back();
  w.close = now;
  w.closed = true;
  state_ = State::done;
  const std::uint64_t skips_left = kFastForwardSkips - skips_.size();
  if (skips_left == 0) return skip;
  std::vector<std::uint64_t> in_window(remaining.size());
  for (std::size_t x = 0; x < remaining.size(); ++x) in_window[x] = w.close.dispatched[x] - w.open.dispatched[x];
  const std::uint64_t window = last_.dispatched - mark_;  // all XCDs' dispatches in the window
  last_window_ = window;
  // Share what can be skipped evenly among the skips left, keeping a window after each; fewer
  // skips where the grid is too short for all of them.
  std::uint64_t rounds = 0, windows_after = skips_left;
  for (; windows_after > 0; --windows_after) {
    rounds = rounds_to_skip(remaining, in_window, window, windows_after) / windows_after;
    // Whole periods: at least half of one, which rounds to one.
    if (rounds >= kFastForwardMinSkippedRounds && (xcd_period_ == 0 || 2 * rounds * xcd_slots_ >= xcd_period_)) break;
  }
  if (windows_after == 0) return skip;
  // The skip's tile operations are the window's rate over `rounds`; each XCD takes its share of
  // the operations run so far (its CUs' rate, over the whole run rather than one short window) and
  // skips the workgroups next in its sequence that hold that many. That keeps the XCDs where a full
  // run has them against each other: a slower XCD, or one of heavier workgroups, falls behind as it
  // would, and none lands on other heads than the rest (whose K and V it would then read alone).
  // Equal workgroups run in lockstep rounds, whose phase sets the tail: they skip whole rounds.
  // Unequal workgroups whose XCDs' shares of a period are equal skip the same whole periods on
  // every XCD (an XCD's own count depends on where a short window cuts its period).
  Skip planned{windows_.size() - 1, 0, 0};
  if (xcd_period_ > 0 && equal_shares()) {
    std::fill(skip.begin(), skip.end(), equal_share_periods(remaining, in_window, window, rounds, windows_after));
  } else {
    const double skip_ops = static_cast<double>(w.close.tile_ops - w.open.tile_ops) * static_cast<double>(rounds * slots_) /
                            static_cast<double>(window);
    const double simulated = static_cast<double>(std::accumulate(now.xcd_tile_ops.begin(), now.xcd_tile_ops.end(), std::uint64_t{0}));
    for (std::uint32_t x = 0; x < skip.size() && simulated > 0; ++x) {
      const auto target = static_cast<std::uint64_t>(std::llround(skip_ops * static_cast<double>(now.xcd_tile_ops.at(x)) / simulated));
      skip[x] = workgroups_for_ops(x, now.dispatched.at(x), target, equal_work_,
                                   remaining[x] - kept(windows_after, in_window[x], window));
    }
  }
  // Nothing to skip (each XCD's share came to no whole workgroup, round or period): no skip, and no
  // re-warm to replace, which would take a stretch that ran warm out at the windows' rate.
  if (std::all_of(skip.begin(), skip.end(), [](std::uint64_t n) { return n == 0; })) return skip;
  skips_.push_back(planned);
  state_ = State::rewarm;
  rewarm_filled_ = last_.filled_bytes;
  mark_ = last_.dispatched;
  round_start_ = last_;
  have_last_round_ = false;
  settled_ = window_rates(w);
  return skip;
}

void FastForward::skipped(std::uint64_t workgroups, std::uint64_t tile_ops) {
  if (skips_.empty()) throw std::logic_error("fast-forward: workgroups skipped outside a skip");
  Skip& s = skips_.back();
  s.workgroups += workgroups;
  s.tile_ops += tile_ops;
}

namespace {

// The window's count `to - from`, scaled. A negative scale (taking a stretch out) gives an unsigned
// count's two's complement, which the caller's addition wraps back to a subtraction.
template <class T>
T scaled(T from, T to, double scale) {
  return static_cast<T>(std::llround(static_cast<double>(to - from) * scale));
}

// Adds `scale` times what the kernel did from `open` to `close`; returns the time added.
Tick add_window(KernelResult& r, const KernelSnapshot& open, const KernelSnapshot& close, double scale,
                std::uint32_t simds, double& clock_integral) {
  const Tick shift = scaled(open.time, close.time, scale);
  r.end += shift;
  r.last_retire += shift;
  r.mfma_instructions += scaled(open.mfma, close.mfma, scale);
  r.valu_instructions += scaled(open.valu, close.valu, scale);
  r.trans_instructions += scaled(open.trans, close.trans, scale);
  r.lds_bytes += scaled(open.lds_bytes, close.lds_bytes, scale);
  r.resident_time += scaled(open.resident_time, close.resident_time, scale);
  r.clock_updates += scaled(open.clock_updates, close.clock_updates, scale);
  clock_integral += (close.clock_integral - open.clock_integral) * scale;
  r.busy.matrix += scaled(open.matrix, close.matrix, scale);
  r.busy.vector += scaled(open.vector, close.vector, scale);
  r.busy.lds += scaled(open.lds, close.lds, scale);
  r.busy.memory.l2 += scaled(open.memory.l2, close.memory.l2, scale);
  r.busy.memory.link += scaled(open.memory.link, close.memory.link, scale);
  r.busy.memory.mall += scaled(open.memory.mall, close.memory.mall, scale);
  r.busy.memory.hbm += scaled(open.memory.hbm, close.memory.hbm, scale);
  for (std::size_t x = 0; x < r.per_xcd.size(); ++x) {
    TrafficCounters window = close.per_xcd[x];
    TrafficCounters::zip(window, open.per_xcd[x], [](std::uint64_t& c, std::uint64_t o) { c -= o; });
    TrafficCounters::zip(r.per_xcd[x], window,
                         [scale](std::uint64_t& c, std::uint64_t w) { c += scaled<std::uint64_t>(0, w, scale); });
  }
  // The breakdown's parts scale like the counts; the tail takes what rounding leaves, so that the
  // parts still sum to every SIMD's time over the longer span.
  TimeBreakdown added;
  added.matrix = scaled(open.breakdown.matrix, close.breakdown.matrix, scale);
  added.vector = scaled(open.breakdown.vector, close.breakdown.vector, scale);
  for (std::size_t i = 0; i < kWaitCauses; ++i) {
    added.waiting[i] = scaled(open.breakdown.waiting[i], close.breakdown.waiting[i], scale);
  }
  added.tail = static_cast<Tick>(simds) * shift - added.total();
  r.breakdown.add(added);
  return shift;
}

}  // namespace

void FastForward::extrapolate(KernelResult& r, std::uint32_t simds, double& clock_integral) const {
  for (const Skip& s : skips_) {
    const Window& before = windows_.at(s.before);
    // The re-warm after the skip ran at a cold start's rate (data the skipped workgroups would have
    // left in the caches is fetched again): it is replaced, like the skip, by the windows' rate.
    const bool after_closed = s.before + 1 < windows_.size() && windows_[s.before + 1].closed;
    const Window& after = after_closed ? windows_[s.before + 1] : before;
    const KernelSnapshot* rewarmed = s.before + 1 < windows_.size() ? &windows_[s.before + 1].open : nullptr;
    std::uint64_t ops = s.tile_ops;
    if (rewarmed) {
      ops += rewarmed->tile_ops - before.close.tile_ops;
      r.fast_forward.extrapolated += add_window(r, before.close, *rewarmed, -1.0, simds, clock_integral);
    }
    // The skip's tile operations at the mean of the two windows' rates per tile operation.
    Tick by_ops = 0;
    for (const Window* w : {&before, &after}) {
      const std::uint64_t window_ops = w->close.tile_ops - w->open.tile_ops;
      if (window_ops == 0) throw std::logic_error("fast-forward: a window ran no tile operations");
      const double scale = static_cast<double>(ops) / (2.0 * static_cast<double>(window_ops));
      by_ops += add_window(r, w->open, w->close, scale, simds, clock_integral);
    }
    r.fast_forward.extrapolated += by_ops;
    r.tile_ops += s.tile_ops;
    r.fast_forward.skipped_workgroups += s.workgroups;
  }
  r.fast_forward.windows = skips_.empty() ? 0 : static_cast<std::uint32_t>(windows_.size());
  r.counters = TrafficCounters{};
  for (const TrafficCounters& c : r.per_xcd) r.counters.add(c);
}

}  // namespace attnsim::sim

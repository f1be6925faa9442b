// The power probe's host-side logic, free of any GPU runtime (the unit tests build it with g++):
// the phase lines `attnsim_gpu --power-probe` prints, the clock and power samples a sampler took
// meanwhile ("unix_ms,sm_mhz,power_w" lines, validation/scripts/power_probe.sh), and their join:
// each phase's median clock and board power while its work was steady.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness_core.h"

namespace attn {

// One phase of the probe: `launches` launches of one kind of sustained work between two wall-clock
// instants (milliseconds since the Unix epoch), at `rate` `unit` (FLOP/s, exp/s, B/s; 0 and "-"
// for the idle phase).
struct PowerPhase {
  std::string name;
  long long start_ms = 0, end_ms = 0, launches = 0;
  double rate = 0;
  std::string unit = "-";
};

// One sample of the GPU's clock and board power.
struct PowerSample {
  long long ms = 0;
  double sm_mhz = 0, power_w = 0;
};

// A phase's median clock and power over the samples taken from `settle_ms` after its start to its end.
struct PowerSummary {
  PowerPhase phase;
  std::size_t samples = 0;
  double sm_mhz = 0, power_w = 0;
};

inline constexpr const char* kPowerPhaseTag = "power-phase";

// "power-phase NAME START_MS END_MS LAUNCHES RATE UNIT" (one line, no spaces in NAME or UNIT).
inline std::string power_phase_line(const PowerPhase& p) {
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.6g", p.rate);
  return std::string(kPowerPhaseTag) + " " + p.name + " " + std::to_string(p.start_ms) + " " + std::to_string(p.end_ms) + " " +
         std::to_string(p.launches) + " " + rate + " " + p.unit;
}

// The phase a probe output line reports, or nullopt for any other line. Contract: throws BadInput
// naming `where` for a power-phase line that is malformed or whose end precedes its start.
inline std::optional<PowerPhase> parse_power_phase(const std::string& line, const std::string& where) {
  std::istringstream in(line);
  std::string tag;
  if (!(in >> tag) || tag != kPowerPhaseTag) return std::nullopt;
  PowerPhase p;
  std::string extra;
  if (!(in >> p.name >> p.start_ms >> p.end_ms >> p.launches >> p.rate >> p.unit) || (in >> extra)) {
    throw BadInput(where + ": expected '" + kPowerPhaseTag + " NAME START_MS END_MS LAUNCHES RATE UNIT', got '" + line + "'");
  }
  if (p.end_ms < p.start_ms || p.launches < 0 || !(p.rate >= 0)) throw BadInput(where + ": a phase that ends before it starts: '" + line + "'");
  return p;
}

// A sampler line "unix_ms,sm_mhz,power_w". Contract: throws BadInput naming `where` otherwise.
inline PowerSample parse_power_sample(const std::string& line, const std::string& where) {
  const std::vector<std::string> f = attnsim::report::split_csv(line);
  const auto number = [&](const std::string& text) {
    const std::optional<double> v = to_number<double>(text);
    if (!v || !(*v >= 0)) {
      throw BadInput(where + ": expected 'unix_ms,sm_mhz,power_w' with non-negative numbers, got '" + line + "'");
    }
    return *v;
  };
  if (f.size() != 3) throw BadInput(where + ": expected 'unix_ms,sm_mhz,power_w', got '" + line + "'");
  return PowerSample{static_cast<long long>(number(f[0])), number(f[1]), number(f[2])};
}

// The median of `v` (the mean of the middle two of an even count). Contract: not empty.
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Each phase's medians over the samples from start + settle_ms to its end (a phase shorter than
// twice settle_ms settles for half its length). Contract: throws BadInput for a phase with no
// sample in that window (the sampler did not run, or ran too slowly).
inline std::vector<PowerSummary> summarize_power(const std::vector<PowerPhase>& phases, const std::vector<PowerSample>& samples,
                                                 long long settle_ms) {
  std::vector<PowerSummary> out;
  for (const PowerPhase& p : phases) {
    const long long settle = std::min(settle_ms, (p.end_ms - p.start_ms) / 2);
    std::vector<double> mhz, watts;
    for (const PowerSample& s : samples) {
      if (s.ms < p.start_ms + settle || s.ms > p.end_ms) continue;
      mhz.push_back(s.sm_mhz);
      watts.push_back(s.power_w);
    }
    if (mhz.empty()) {
      throw BadInput("power probe: no clock sample in phase '" + p.name + "' (" + std::to_string(p.start_ms + settle) + " to " +
                     std::to_string(p.end_ms) + " ms)");
    }
    out.push_back(PowerSummary{p, mhz.size(), median_of(mhz), median_of(watts)});
  }
  return out;
}

inline constexpr const char* kPowerCsvHeader = "gpu,phase,rate,unit,launches,seconds,samples,sm_mhz_median,power_w_median,conditions\n";

// The summaries as CSV rows (kPowerCsvHeader's columns), `gpu` and `conditions` quoted.
inline std::string power_csv_rows(const std::vector<PowerSummary>& rows, const std::string& gpu, const std::string& conditions) {
  const auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::string out;
  for (const PowerSummary& r : rows) {
    char line[512];
    std::snprintf(line, sizeof line, ",%s,%.6g,%s,%lld,%.3f,%zu,%.1f,%.1f,", r.phase.name.c_str(), r.phase.rate, r.phase.unit.c_str(),
                  r.phase.launches, static_cast<double>(r.phase.end_ms - r.phase.start_ms) / 1e3, r.samples, r.sm_mhz, r.power_w);
    out += quoted(gpu) + line + quoted(conditions) + "\n";
  }
  return out;
}

}  // namespace attn

#include "arch/units.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace attnsim::arch {
namespace {

struct UnitName {
  std::string_view name;
  double factor;  // multiply the written number by this to get the canonical unit
};

constexpr std::array kByteUnits{
    UnitName{"B", 1.0},           UnitName{"KB", 1e3},          UnitName{"MB", 1e6},
    UnitName{"GB", 1e9},          UnitName{"TB", 1e12},         UnitName{"KiB", 1024.0},
    UnitName{"MiB", 1048576.0},   UnitName{"GiB", 1073741824.0}, UnitName{"TiB", 1099511627776.0},
};
constexpr std::array kHertzUnits{
    UnitName{"Hz", 1.0}, UnitName{"kHz", 1e3}, UnitName{"MHz", 1e6}, UnitName{"GHz", 1e9},
};
constexpr std::array kRateUnits{
    UnitName{"B/s", 1.0},         UnitName{"KB/s", 1e3},         UnitName{"MB/s", 1e6},
    UnitName{"GB/s", 1e9},        UnitName{"TB/s", 1e12},        UnitName{"KiB/s", 1024.0},
    UnitName{"MiB/s", 1048576.0}, UnitName{"GiB/s", 1073741824.0}, UnitName{"TiB/s", 1099511627776.0},
};
constexpr std::array kPerClockUnits{UnitName{"B/clk", 1.0}};
constexpr std::array kCycleUnits{UnitName{"cyc", 1.0}};
constexpr std::array kTimeUnits{
    UnitName{"ps", 1.0}, UnitName{"ns", 1e3}, UnitName{"us", 1e6}, UnitName{"ms", 1e9}, UnitName{"s", 1e12},
};
constexpr std::array kPowerUnits{UnitName{"W", 1.0}, UnitName{"kW", 1e3}};

template <std::size_t N>
std::optional<double> factor_of(const std::array<UnitName, N>& units, std::string_view unit) {
  for (const auto& u : units) {
    if (u.name == unit) return u.factor;
  }
  return std::nullopt;
}

std::optional<double> unit_factor(UnitKind kind, std::string_view unit) {
  switch (kind) {
    case UnitKind::bytes: return factor_of(kByteUnits, unit);
    case UnitKind::hertz: return factor_of(kHertzUnits, unit);
    case UnitKind::bytes_per_second: return factor_of(kRateUnits, unit);
    case UnitKind::bytes_per_clock: return factor_of(kPerClockUnits, unit);
    case UnitKind::cycles: return factor_of(kCycleUnits, unit);
    case UnitKind::picoseconds: return factor_of(kTimeUnits, unit);
    case UnitKind::watts: return factor_of(kPowerUnits, unit);
  }
  return std::nullopt;
}

bool integral_kind(UnitKind kind) {
  return kind == UnitKind::bytes || kind == UnitKind::bytes_per_clock || kind == UnitKind::cycles ||
         kind == UnitKind::picoseconds;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string expected_text(UnitKind kind) {
  return "expected " + std::string(unit_example(kind)) + " (units: " + std::string(unit_list(kind)) + ")";
}

// Prints a double with up to 4 significant decimals and no trailing zeros.
std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  std::string s(buf);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

template <std::size_t N>
std::string scaled(double v, const std::array<UnitName, N>& ladder) {
  // The ladder is ordered from the smallest unit up; pick the largest that keeps v >= 1.
  const UnitName* best = &ladder[0];
  for (const auto& u : ladder) {
    if (std::fabs(v) >= u.factor) best = &u;
  }
  return number(v / best->factor) + " " + std::string(best->name);
}

}  // namespace

std::string_view unit_example(UnitKind kind) {
  switch (kind) {
    case UnitKind::bytes: return "a size such as \"64KiB\"";
    case UnitKind::hertz: return "a frequency such as \"2.1GHz\"";
    case UnitKind::bytes_per_second: return "a bandwidth such as \"5.3TB/s\"";
    case UnitKind::bytes_per_clock: return "bytes per clock such as \"128B/clk\"";
    case UnitKind::cycles: return "a cycle count such as \"118cyc\"";
    case UnitKind::picoseconds: return "a duration such as \"218ns\"";
    case UnitKind::watts: return "a power such as \"750W\"";
  }
  return "";
}

std::string_view unit_list(UnitKind kind) {
  switch (kind) {
    case UnitKind::bytes: return "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
    case UnitKind::hertz: return "Hz, kHz, MHz, GHz";
    case UnitKind::bytes_per_second: return "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s";
    case UnitKind::bytes_per_clock: return "B/clk";
    case UnitKind::cycles: return "cyc";
    case UnitKind::picoseconds: return "ps, ns, us, ms, s";
    case UnitKind::watts: return "W, kW";
  }
  return "";
}

UnitParse parse_quantity(std::string_view text, UnitKind kind) {
  const std::string_view s = trim(text);
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '-' ||
                          s[i] == '+' || s[i] == 'e' || s[i] == 'E')) {
    // 'e' belongs to the number only when followed by a digit or sign (else it starts a unit).
    if ((s[i] == 'e' || s[i] == 'E') &&
        (i + 1 >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' ||
                                s[i + 1] == '+'))) {
      break;
    }
    ++i;
  }
  const std::string_view num_text = s.substr(0, i);
  const std::string_view unit_text = trim(s.substr(i));
  if (num_text.empty()) {
    return {std::nullopt, expected_text(kind) + ", got \"" + std::string(text) + "\" (no number)"};
  }
  double number_value = 0;
  const auto [end, ec] = std::from_chars(num_text.data(), num_text.data() + num_text.size(), number_value);
  if (ec != std::errc{} || end != num_text.data() + num_text.size() || !std::isfinite(number_value)) {
    return {std::nullopt, expected_text(kind) + ", got \"" + std::string(text) + "\" (bad number)"};
  }
  if (unit_text.empty()) {
    return {std::nullopt, expected_text(kind) + ", got \"" + std::string(text) + "\" (no unit)"};
  }
  const auto factor = unit_factor(kind, unit_text);
  if (!factor) {
    return {std::nullopt,
            expected_text(kind) + ", got \"" + std::string(text) + "\" (unknown unit \"" + std::string(unit_text) + "\")"};
  }
  if (number_value < 0) {
    return {std::nullopt, expected_text(kind) + ", got \"" + std::string(text) + "\" (negative)"};
  }
  const double canonical = number_value * *factor;
  if (integral_kind(kind) && std::fabs(canonical - std::round(canonical)) > 1e-6 * std::max(1.0, canonical)) {
    return {std::nullopt, expected_text(kind) + ", got \"" + std::string(text) + "\" (not a whole number of " +
                              std::string(kind == UnitKind::picoseconds ? "picoseconds"
                                          : kind == UnitKind::cycles    ? "cycles"
                                                                        : "bytes") +
                              ")"};
  }
  return {integral_kind(kind) ? std::round(canonical) : canonical, {}};
}

std::string format(Bytes b) {
  // Whichever of the IEC and SI forms is shorter reads best: "1.5 KiB", "4 MiB", "50 MB".
  const double v = static_cast<double>(b.value);
  constexpr std::array iec{UnitName{"B", 1.0}, UnitName{"KiB", 1024.0}, UnitName{"MiB", 1048576.0},
                           UnitName{"GiB", 1073741824.0}, UnitName{"TiB", 1099511627776.0}};
  constexpr std::array si{UnitName{"B", 1.0}, UnitName{"KB", 1e3}, UnitName{"MB", 1e6}, UnitName{"GB", 1e9},
                          UnitName{"TB", 1e12}};
  std::string a = scaled(v, iec), b_si = scaled(v, si);
  return b_si.size() < a.size() ? b_si : a;
}
std::string format(Hertz f) { return scaled(f.value, kHertzUnits); }
std::string format(BytesPerSecond bw) {
  constexpr std::array si{UnitName{"B/s", 1.0}, UnitName{"KB/s", 1e3}, UnitName{"MB/s", 1e6},
                          UnitName{"GB/s", 1e9}, UnitName{"TB/s", 1e12}};
  return scaled(bw.value, si);
}
std::string format(BytesPerClock bpc) { return std::to_string(bpc.value) + " B/clk"; }
std::string format(Cycles c) { return std::to_string(c.value) + " cyc"; }
std::string format(Picoseconds t) {
  constexpr std::array ladder{UnitName{"ps", 1.0}, UnitName{"ns", 1e3}, UnitName{"us", 1e6}, UnitName{"ms", 1e9}};
  return scaled(static_cast<double>(t.value), ladder);
}
std::string format(Watts w) { return number(w.value) + " W"; }

}  // namespace attnsim::arch

// Physical quantities with their units in the type, and the parser for the unit text in configs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnsim::arch {

// A byte count ("64KiB", "128B", "50MB"). SI prefixes are powers of 1000, IEC prefixes of 1024.
struct Bytes {
  std::uint64_t value = 0;
  friend bool operator==(Bytes, Bytes) = default;
};

// A frequency in hertz ("2.1GHz", "1300MHz").
struct Hertz {
  double value = 0;
  friend bool operator==(Hertz, Hertz) = default;
};

// A data rate in bytes per second ("5.3TB/s"); TB is 10^12 bytes.
struct BytesPerSecond {
  double value = 0;
  friend bool operator==(BytesPerSecond, BytesPerSecond) = default;
};

// Bytes moved per clock of the owning unit's clock domain ("128B/clk").
struct BytesPerClock {
  std::uint64_t value = 0;
  friend bool operator==(BytesPerClock, BytesPerClock) = default;
};

// A latency in clock cycles of the owning unit's clock domain ("118cyc").
struct Cycles {
  std::uint64_t value = 0;
  friend bool operator==(Cycles, Cycles) = default;
};

// A duration in picoseconds ("218ns"); integer so that simulated time is exact.
struct Picoseconds {
  std::int64_t value = 0;
  friend bool operator==(Picoseconds, Picoseconds) = default;
};

// Electrical power in watts ("750W").
struct Watts {
  double value = 0;
  friend bool operator==(Watts, Watts) = default;
};

// The unit families a config value can be written in.
enum class UnitKind { bytes, hertz, bytes_per_second, bytes_per_clock, cycles, picoseconds, watts };

// What a parse of unit text gives: the value in the canonical unit, or why it failed.
struct UnitParse {
  std::optional<double> canonical;  // bytes, Hz, B/s, B/clk, cycles, ps or W
  std::string error;                // set when canonical is empty
};

// Parses text such as "2.1GHz" or "64 KiB" as a quantity of the given kind.
// Contract: never throws; a malformed number, an unknown or wrong-family unit, or a negative
// value yields an error naming what was expected.
UnitParse parse_quantity(std::string_view text, UnitKind kind);

// Examples and the accepted unit names for a kind, for error messages and docs.
std::string_view unit_example(UnitKind kind);
std::string_view unit_list(UnitKind kind);

// Human-readable text with a sensible prefix ("4 MiB", "2.1 GHz", "5.3 TB/s", "218 ns").
std::string format(Bytes b);
std::string format(Hertz f);
std::string format(BytesPerSecond bw);
std::string format(BytesPerClock bpc);
std::string format(Cycles c);
std::string format(Picoseconds t);
std::string format(Watts w);

}  // namespace attnsim::arch

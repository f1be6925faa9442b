// Unit text parsing and formatting: each accepted form and each way of getting it wrong.
#include <doctest/doctest.h>

#include "arch/units.h"

using namespace attnsim::arch;

namespace {
double parsed(std::string_view text, UnitKind kind) {
  const UnitParse p = parse_quantity(text, kind);
  REQUIRE_MESSAGE(p.canonical.has_value(), p.error);
  return *p.canonical;
}
std::string error_of(std::string_view text, UnitKind kind) {
  const UnitParse p = parse_quantity(text, kind);
  REQUIRE_FALSE(p.canonical.has_value());
  return p.error;
}
}  // namespace

TEST_CASE("sizes use SI prefixes as powers of 1000 and IEC prefixes as powers of 1024") {
  CHECK(parsed("128B", UnitKind::bytes) == 128);
  CHECK(parsed("64KiB", UnitKind::bytes) == 65536);
  CHECK(parsed("4MiB", UnitKind::bytes) == 4194304);
  CHECK(parsed("50MB", UnitKind::bytes) == 50'000'000);
  CHECK(parsed(" 64 KiB ", UnitKind::bytes) == 65536);
  CHECK(parsed("0.5KiB", UnitKind::bytes) == 512);
}

TEST_CASE("frequencies and bandwidths and per-clock rates and cycles and durations and power") {
  CHECK(parsed("2.1GHz", UnitKind::hertz) == doctest::Approx(2.1e9));
  CHECK(parsed("1300MHz", UnitKind::hertz) == doctest::Approx(1.3e9));
  CHECK(parsed("5.3TB/s", UnitKind::bytes_per_second) == doctest::Approx(5.3e12));
  CHECK(parsed("900GB/s", UnitKind::bytes_per_second) == doctest::Approx(9e11));
  CHECK(parsed("128B/clk", UnitKind::bytes_per_clock) == 128);
  CHECK(parsed("118cyc", UnitKind::cycles) == 118);
  CHECK(parsed("218ns", UnitKind::picoseconds) == 218'000);
  CHECK(parsed("1.5ns", UnitKind::picoseconds) == 1'500);
  CHECK(parsed("2us", UnitKind::picoseconds) == 2'000'000);
  CHECK(parsed("750W", UnitKind::watts) == 750);
  CHECK(parsed("1.2kW", UnitKind::watts) == doctest::Approx(1200));
  CHECK(parsed("1e3MHz", UnitKind::hertz) == doctest::Approx(1e9));
}

TEST_CASE("malformed unit text names what was expected") {
  CHECK(error_of("64", UnitKind::bytes) ==
        "expected a size such as \"64KiB\" (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), got \"64\" (no unit)");
  CHECK(error_of("64Kib", UnitKind::bytes) ==
        "expected a size such as \"64KiB\" (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), got \"64Kib\" "
        "(unknown unit \"Kib\")");
  CHECK(error_of("2.1GHz", UnitKind::bytes).find("(unknown unit \"GHz\")") != std::string::npos);
  CHECK(error_of("GHz", UnitKind::hertz).find("(no number)") != std::string::npos);
  CHECK(error_of("-1GHz", UnitKind::hertz).find("(negative)") != std::string::npos);
  CHECK(error_of("1.5B", UnitKind::bytes).find("(not a whole number of bytes)") != std::string::npos);
  CHECK(error_of("0.5ps", UnitKind::picoseconds).find("(not a whole number of picoseconds)") != std::string::npos);
  CHECK(error_of("1..5GHz", UnitKind::hertz).find("(bad number)") != std::string::npos);
  CHECK(error_of("5.3 TB", UnitKind::bytes_per_second).find("(unknown unit \"TB\")") != std::string::npos);
}

TEST_CASE("formatting picks a readable prefix") {
  CHECK(format(Bytes{4194304}) == "4 MiB");
  CHECK(format(Bytes{65536}) == "64 KiB");
  CHECK(format(Bytes{128}) == "128 B");
  CHECK(format(Bytes{50'000'000}) == "50 MB");
  CHECK(format(Hertz{2.1e9}) == "2.1 GHz");
  CHECK(format(Hertz{1.207e9}) == "1.207 GHz");
  CHECK(format(BytesPerSecond{5.3e12}) == "5.3 TB/s");
  CHECK(format(Picoseconds{218'000}) == "218 ns");
  CHECK(format(BytesPerClock{128}) == "128 B/clk");
  CHECK(format(Cycles{90}) == "90 cyc");
  CHECK(format(Watts{750}) == "750 W");
}

// The power probe's host side (validation/harness/power_probe_core.h): the phase lines
// `attnsim_gpu --power-probe` prints, the sampler's lines, and their join per phase, with hand
// counts; and the options that select it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "validation/harness/harness_core.h"
#include "validation/harness/power_probe_core.h"

using attn::BadInput;
using attn::PowerPhase;
using attn::PowerSample;

TEST_CASE("a power phase line reads back as the phase it prints") {
  PowerPhase p;
  p.name = "matrix";
  p.start_ms = 1764900000123;
  p.end_ms = 1764900006125;
  p.launches = 240;
  p.rate = 3.6e14;
  p.unit = "FLOP/s";
  const std::string line = attn::power_phase_line(p);
  CHECK(line == "power-phase matrix 1764900000123 1764900006125 240 3.6e+14 FLOP/s");
  const auto back = attn::parse_power_phase(line, "log:7");
  REQUIRE(back);
  CHECK(back->name == "matrix");
  CHECK(back->start_ms == p.start_ms);
  CHECK(back->end_ms == p.end_ms);
  CHECK(back->launches == 240);
  CHECK(back->rate == doctest::Approx(3.6e14));
  CHECK(back->unit == "FLOP/s");
  // Other lines are not phases; a malformed phase line is an error naming where it was.
  CHECK_FALSE(attn::parse_power_phase("power probe on NVIDIA H200: 6 s per phase", "log:1"));
  CHECK_FALSE(attn::parse_power_phase("", "log:2"));
  CHECK_THROWS_WITH_AS(attn::parse_power_phase("power-phase fma 10 20 3", "log:9"), doctest::Contains("log:9"), BadInput);
  CHECK_THROWS_WITH_AS(attn::parse_power_phase("power-phase fma 20 10 3 1e12 FLOP/s", "log:9"),
                       doctest::Contains("ends before it starts"), BadInput);
}

TEST_CASE("sampler lines are unix ms then SM MHz then watts") {
  const PowerSample s = attn::parse_power_sample("1764900000200,1830,652.41", "samples:3");
  CHECK(s.ms == 1764900000200);
  CHECK(s.sm_mhz == 1830);
  CHECK(s.power_w == doctest::Approx(652.41));
  CHECK_THROWS_WITH_AS(attn::parse_power_sample("1764900000200,[N/A],652", "samples:4"), doctest::Contains("samples:4"), BadInput);
  CHECK_THROWS_WITH_AS(attn::parse_power_sample("1764900000200,1830", "samples:5"), doctest::Contains("unix_ms,sm_mhz,power_w"),
                       BadInput);
  CHECK_THROWS_AS(attn::parse_power_sample("1764900000200,-5,600", "samples:6"), BadInput);
}

TEST_CASE("each phase gets the medians of the samples taken once it settled") {
  // Two phases of 4 s; samples every 500 ms from 0 to 8 s: the first second of each phase is
  // skipped, so the idle phase has the samples at 1.0-4.0 s (7), the matrix phase those at 5.0-8.0 s.
  PowerPhase idle{"idle", 0, 4000, 0, 0, "-"}, matrix{"matrix", 4000, 8000, 160, 3.6e14, "FLOP/s"};
  std::vector<PowerSample> samples;
  for (long long t = 0; t <= 8000; t += 500) {
    const bool busy = t > 4000;
    samples.push_back(PowerSample{t, busy ? 1700.0 + static_cast<double>(t % 1000) / 10 : 345.0, busy ? 600.0 + static_cast<double>(t) / 1000 : 80.0});
  }
  const auto rows = attn::summarize_power({idle, matrix}, samples, 1000);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].samples == 7);
  CHECK(rows[0].sm_mhz == 345);
  CHECK(rows[0].power_w == 80);
  // The matrix phase's samples at 5.0, 5.5, ..., 8.0 s: clocks 1700 and 1750 alternating (1700 four
  // times, 1750 three), power 605 to 608 W: medians 1700 MHz and 606.5 W.
  CHECK(rows[1].samples == 7);
  CHECK(rows[1].sm_mhz == 1700);
  CHECK(rows[1].power_w == doctest::Approx(606.5));
  // A phase no sample fell in is an error, not a row of zeros.
  PowerPhase late{"fma", 9000, 12000, 10, 1e13, "FLOP/s"};
  CHECK_THROWS_WITH_AS(attn::summarize_power({late}, samples, 1000), doctest::Contains("no clock sample in phase 'fma'"), BadInput);
  // A phase shorter than twice the settling time settles for half its length.
  const auto shortened = attn::summarize_power({PowerPhase{"idle", 0, 1000, 0, 0, "-"}}, samples, 1000);
  CHECK(shortened[0].samples == 2);  // the samples at 0.5 and 1.0 s
}

TEST_CASE("the joined rows are CSV with the GPU and conditions quoted") {
  const attn::PowerSummary r{PowerPhase{"exp", 0, 6000, 300, 2.5e12, "exp/s"}, 55, 1755.0, 612.25};
  CHECK(attn::power_csv_rows({r}, "NVIDIA H200", "driver 580.159.04; \"as set\"") ==
        "\"NVIDIA H200\",exp,2.5e+12,exp/s,300,6.000,55,1755.0,612.2,\"driver 580.159.04; \"\"as set\"\"\"\n");
  CHECK(std::string(attn::kPowerCsvHeader).rfind("gpu,phase,rate,unit,", 0) == 0);
}

TEST_CASE("the power probe's options") {
  CHECK(attn::parse_options({"--power-probe", "6"}).power_probe_seconds == 6);
  CHECK_THROWS_WITH_AS(attn::parse_options({"--power-probe", "1"}), doctest::Contains("2 to 60"), BadInput);
  CHECK_THROWS_AS(attn::parse_options({"--power-probe", "six"}), BadInput);
  const attn::Options o = attn::parse_options({"--power-join", "probe.log", "samples.csv", "--csv", "out.csv"});
  CHECK(o.power_phases == "probe.log");
  CHECK(o.power_samples == "samples.csv");
  CHECK(o.csv == "out.csv");
  CHECK_THROWS_WITH_AS(attn::parse_options({"--power-join", "probe.log"}), doctest::Contains("missing value"), BadInput);
}

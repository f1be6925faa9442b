// Golden runs (DESIGN.md, tests' second level): small problems and microbenchmarks whose whole JSON
// report is checked in (tests/golden/<name>.json, the cases in tests/golden/cases.toml) and
// compared field by field, so that a change which moves any figure anywhere is seen, with the
// figures it moved named. ATTNSIM_UPDATE_GOLDEN=1 rewrites the files instead (tests/golden/README.md).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "cli_runner.h"
#include "config_fixture.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(ATTNSIM_SOURCE_DIR) / "tests" / "golden";
const std::set<std::string> kGroups = {"mi300x", "other_gpus", "micro", "tools"};

// One case of cases.toml: the file stem, the test case that runs it, the command line.
struct GoldenCase {
  std::string name, group;
  std::vector<std::string> args;
};

std::vector<GoldenCase> load_cases() {
  const toml::table t = toml::parse_file((kGoldenDir / "cases.toml").string());
  std::vector<GoldenCase> cases;
  const toml::array* list = t["case"].as_array();
  REQUIRE_MESSAGE(list != nullptr, "tests/golden/cases.toml: no [[case]] entries");
  for (const toml::node& n : *list) {
    const toml::table& c = *n.as_table();
    GoldenCase g{c["name"].value_or(std::string{}), c["group"].value_or(std::string{}), {}};
    if (const toml::array* a = c["args"].as_array()) {
      for (const toml::node& arg : *a) g.args.push_back(arg.value_or(std::string{}));
    }
    cases.push_back(std::move(g));
  }
  return cases;
}

// The report with the checkout's own path (an arch file's, in `arch show`) written as
// "<source>", so that the golden files do not depend on where the repository lies.
std::string without_source_dir(std::string report) {
  const std::string dir = std::string(ATTNSIM_SOURCE_DIR) + "/";
  for (std::size_t at = report.find(dir); at != std::string::npos; at = report.find(dir, at)) {
    report.replace(at, dir.size(), "<source>/");
  }
  return report;
}

std::string shell_quoted(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += " '" + a + "'";
  return s;
}

// Two numbers agree when both are integers and equal, or within a relative 1e-9 (the last digits
// a platform's rounding may move; x86-64 reproduces them exactly).
bool numbers_agree(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) return a == b;
  const double x = a.get<double>(), y = b.get<double>();
  return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
}

// Appends "path: golden G, now N" for each field where `now` departs from `golden`, and for each
// field one of them lacks.
void compare(const json& golden, const json& now, const std::string& path, std::vector<std::string>& diffs) {
  const auto differ = [&](const std::string& what) { diffs.push_back((path.empty() ? "(root)" : path) + ": " + what); };
  if (golden.is_number() && now.is_number()) {
    if (!numbers_agree(golden, now)) differ("golden " + golden.dump() + ", now " + now.dump());
    return;
  }
  if (golden.type() != now.type()) {
    differ("golden " + golden.dump() + ", now " + now.dump());
    return;
  }
  if (golden.is_object()) {
    for (const auto& [key, value] : golden.items()) {
      if (!now.contains(key)) {
        diffs.push_back(path + "." + key + ": in the golden file, gone now");
      } else {
        compare(value, now[key], path + "." + key, diffs);
      }
    }
    for (const auto& [key, value] : now.items()) {
      if (!golden.contains(key)) diffs.push_back(path + "." + key + ": new, not in the golden file");
    }
    return;
  }
  if (golden.is_array()) {
    if (golden.size() != now.size()) {
      differ(std::to_string(golden.size()) + " elements in the golden file, " + std::to_string(now.size()) + " now");
      return;
    }
    for (std::size_t i = 0; i < golden.size(); ++i) compare(golden[i], now[i], path + "[" + std::to_string(i) + "]", diffs);
    return;
  }
  if (golden != now) differ("golden " + golden.dump() + ", now " + now.dump());
}

// The first dozen moved fields, the report's totals (the shallowest paths) first.
std::string summary(std::vector<std::string> diffs) {
  const auto depth = [](const std::string& d) {
    const std::string path = d.substr(0, d.find(':'));
    return std::count(path.begin(), path.end(), '.') + std::count(path.begin(), path.end(), '[');
  };
  std::stable_sort(diffs.begin(), diffs.end(), [&](const std::string& a, const std::string& b) { return depth(a) < depth(b); });
  std::ostringstream s;
  s << diffs.size() << " field(s) moved:";
  for (std::size_t i = 0; i < std::min<std::size_t>(diffs.size(), 12); ++i) s << "\n  " << diffs[i];
  if (diffs.size() > 12) s << "\n  ...";
  s << "\nIf the change is meant, regenerate (tests/golden/README.md) and say in the commit what moved and why.";
  return s.str();
}

// Runs every case of `group` and compares its report with its golden file (or rewrites the file).
void run_group(const std::string& group) {
  const bool update = std::getenv("ATTNSIM_UPDATE_GOLDEN") != nullptr;
  std::size_t ran = 0;
  for (const GoldenCase& c : load_cases()) {
    if (c.group != group) continue;
    CAPTURE(c.name);
    const attnsim::test::CliRun r = attnsim::test::run_attnsim(shell_quoted(c.args), false);
    REQUIRE(r.exit_code == 0);
    const std::string report = without_source_dir(r.out);
    const json now = json::parse(report);
    const fs::path file = kGoldenDir / (c.name + ".json");
    ++ran;
    if (update) {
      std::ofstream(file) << report;
      MESSAGE("rewrote " << file.string());
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(file), "no golden file " << file.string() << ": run with ATTNSIM_UPDATE_GOLDEN=1 (tests/golden/README.md)");
    std::vector<std::string> diffs;
    compare(json::parse(attnsim::test::read_text(file.string())), now, "", diffs);
    CHECK_MESSAGE(diffs.empty(), summary(diffs));
  }
  CHECK(ran > 0);
}

}  // namespace

TEST_CASE("golden runs: MI300X kernels in both tag modes with fast-forward and what-ifs") { run_group("mi300x"); }

TEST_CASE("golden runs: MI325X MI355X H100 and H200 kernels") { run_group("other_gpus"); }

TEST_CASE("golden runs: memory and compute microbenchmarks") { run_group("micro"); }

TEST_CASE("golden runs: derived figures of the five GPUs and the analytic traffic and functional check") {
  run_group("tools");
}

TEST_CASE("golden runs: every case is well formed and every golden file has its case") {
  std::set<std::string> names;
  for (const GoldenCase& c : load_cases()) {
    CAPTURE(c.name);
    CHECK_FALSE(c.name.empty());
    CHECK(names.insert(c.name).second);  // unique
    CHECK(kGroups.count(c.group) == 1);
    CHECK(std::find(c.args.begin(), c.args.end(), "--json") != c.args.end());
  }
  for (const fs::directory_entry& e : fs::directory_iterator(kGoldenDir)) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path().filename().string());
    CHECK(names.count(e.path().stem().string()) == 1);  // no stale file without a case
    CHECK_FALSE(attnsim::test::contains(attnsim::test::read_text(e.path().string()), ATTNSIM_SOURCE_DIR));  // where the checkout lies is not recorded
  }
}

TEST_CASE("golden runs: the comparison names each moved field and tolerates only rounding") {
  const json golden = json::parse(R"({"time_us": 130.930393, "tiles": 57344, "kernels": [{"name": "fwd", "bytes": 10}],
                                      "arch": "MI300X"})");
  std::vector<std::string> diffs;
  compare(golden, golden, "", diffs);
  CHECK(diffs.empty());

  json rounded = golden;
  rounded["time_us"] = 130.930393 * (1 + 1e-12);  // a last-digit rounding difference
  compare(golden, rounded, "", diffs);
  CHECK(diffs.empty());

  json moved = golden;
  moved["time_us"] = 130.9304;                 // a relative 5e-8
  moved["kernels"][0]["bytes"] = 11;           // an integer by one
  moved["arch"] = "MI325X";
  moved.erase("tiles");
  moved["new_field"] = 1;
  compare(golden, moved, "", diffs);
  REQUIRE(diffs.size() == 5);
  const std::string all = summary(diffs);
  CHECK(attnsim::test::contains(all, ".time_us: golden 130.930393, now 130.9304"));
  CHECK(attnsim::test::contains(all, ".kernels[0].bytes: golden 10, now 11"));
  CHECK(attnsim::test::contains(all, ".arch: golden \"MI300X\", now \"MI325X\""));
  CHECK(attnsim::test::contains(all, ".tiles: in the golden file, gone now"));
  CHECK(attnsim::test::contains(all, ".new_field: new, not in the golden file"));

  CHECK(all.find(".arch:") < all.find(".kernels[0].bytes:"));  // the totals before a kernel's figures

  diffs.clear();
  json shorter = golden;
  shorter["kernels"] = json::array();
  compare(golden, shorter, "", diffs);
  REQUIRE(diffs.size() == 1);
  CHECK(attnsim::test::contains(diffs[0], ".kernels: 1 elements in the golden file, 0 now"));
}

// Sweeps: spec expansion, identity of points, parallel runs, resume, shards, merge, the report.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/spec_loader.h"
#include "arch/toml_parse.h"
#include "workloads/schedule.h"
#include "cli_runner.h"
#include "sweep/html_report.h"
#include "sweep/merge.h"
#include "sweep/progress.h"
#include "sweep/result_store.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_spec.h"

namespace fs = std::filesystem;
using namespace attnsim;
using namespace attnsim::sweep;
using attnsim::test::contains;
using attnsim::test::run_attnsim;

namespace {

const std::string kTiny = std::string(ATTNSIM_SOURCE_DIR) + "/tests/data/sweep_tiny.toml";

const std::string kBase = R"([base]
arch = "mi300x"
kernel = "aiter-v3,fwd.block_n=64"
direction = "fwd"
set = ["hbm.peak_bandwidth=6TB/s"]
[base.problem]
batch = 1
heads_q = 2
heads_kv = 1
seqlen = 256
head_dim = 128
dtype = "bf16"
causal = false
layout = "bshd"
)";

std::string error_of(const std::string& text) {
  try {
    load_sweep_text(text, "s.toml");
  } catch (const arch::ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string slurp(const fs::path& p) { return arch::read_text_file(p.string()); }

// A fresh directory under the build tree's temporary space.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attnsim_test_sweep_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

SweepSummary run(const fs::path& dir, unsigned threads, Shard shard = {}, bool retry = false) {
  SweepOptions o;
  o.threads = threads;
  o.shard = shard;
  o.retry_failed = retry;
  return run_sweep(load_sweep_file(kTiny), ResultStore(dir), o);
}

}  // namespace

TEST_CASE("sweep axes combine as a product with the first axis outermost and zipped keys together") {
  const SweepSpec s = load_sweep_text(kBase + R"(
[[axis]]
"problem.seqlen" = [256, 512, 1024]
"kernel.fwd.block_m" = [128, 64, 32]
[[axis]]
"arch.cu.lds_size" = ["64KiB", "160KiB"]
)", "s.toml");
  REQUIRE(s.point_count() == 6);
  const auto points = expand(s);
  REQUIRE(points.size() == 6);
  // Point 3 = second zip value (512, 64) with the second LDS size.
  const SweepPoint& p = points[3];
  CHECK(p.index == 3);
  CHECK(p.params["problem.seqlen"] == 512);
  CHECK(p.params["kernel.fwd.block_m"] == 64);
  CHECK(p.params["arch.cu.lds_size"] == "160KiB");
  CHECK(p.spec.problem.seqlen_q == 512);
  CHECK(p.spec.problem.seqlen_k == 512);  // the seqlen shorthand sets both
  CHECK(p.spec.kernel == "aiter-v3,fwd.block_n=64,fwd.block_m=64");
  REQUIRE(p.spec.sets.size() == 2);
  CHECK(p.spec.sets[0] == "hbm.peak_bandwidth=6TB/s");  // base overrides first, axis overrides after
  CHECK(p.spec.sets[1] == "cu.lds_size=160KiB");
  CHECK(points[0].params.dump() == R"({"problem.seqlen":256,"kernel.fwd.block_m":128,"arch.cu.lds_size":"64KiB"})");
  CHECK(points[5].spec.problem.seqlen_q == 1024);
}

TEST_CASE("a spec without axes is one point: the base") {
  const SweepSpec s = load_sweep_text(kBase, "s.toml");
  const auto points = expand(s);
  REQUIRE(points.size() == 1);
  CHECK(points[0].params.empty());
  CHECK(points[0].spec.direction == "fwd");
}

TEST_CASE("point ids are equal for equal specs and differ when any part differs") {
  const auto points = expand(load_sweep_text(kBase + R"(
[[axis]]
"problem.batch" = [1, 2, 1]
)", "s.toml"));
  CHECK(points[0].id == points[2].id);
  CHECK(points[0].id != points[1].id);
  CHECK(points[0].id.size() == 16);
  CHECK(points[0].id.find_first_not_of("0123456789abcdef") == std::string::npos);
  report::PointSpec other = points[0].spec;
  other.sets.push_back("cu.lds_size=160KiB");
  CHECK(point_id(other) != points[0].id);
  other = points[0].spec;
  other.direction = "bwd";
  CHECK(point_id(other) != points[0].id);
  other = points[0].spec;
  other.approximate = true;
  CHECK(point_id(other) != points[0].id);
}

TEST_CASE("a sweep's base may choose the approximate tag mode and nothing else but exact") {
  const std::string approximate = std::string(kBase).replace(0, 7, "[base]\ntags = \"approximate\"\n");
  CHECK(expand(load_sweep_text(approximate, "s.toml"))[0].spec.approximate);
  CHECK_FALSE(expand(load_sweep_text(kBase, "s.toml"))[0].spec.approximate);
  const std::string exact = std::string(kBase).replace(0, 7, "[base]\ntags = \"exact\"\n");
  CHECK_FALSE(expand(load_sweep_text(exact, "s.toml"))[0].spec.approximate);
  CHECK(contains(error_of(std::string(kBase).replace(0, 7, "[base]\ntags = \"coarse\"\n")),
                 "s.toml:2:8: error: key 'base.tags': 'coarse': expected \"exact\" or \"approximate\""));
}

TEST_CASE("a sweep's base may ask for fast-forward and its points keep apart from full runs") {
  const std::string on = std::string(kBase).replace(0, 7, "[base]\nfast_forward = true\n");
  const auto points = expand(load_sweep_text(on, "s.toml"));
  CHECK(points[0].spec.fast_forward);
  CHECK_FALSE(expand(load_sweep_text(kBase, "s.toml"))[0].spec.fast_forward);
  CHECK(points[0].id != expand(load_sweep_text(kBase, "s.toml"))[0].id);
  CHECK(contains(error_of(std::string(kBase).replace(0, 7, "[base]\nfast_forward = \"yes\"\n")),
                 "s.toml:2:16: error: key 'base.fast_forward': expected true or false"));
  // A warm-up run before each point's measured one: points of their own too.
  const auto warm = expand(load_sweep_text(std::string(kBase).replace(0, 7, "[base]\nwarm_up = true\n"), "s.toml"));
  CHECK(warm[0].spec.warm_up);
  CHECK(warm[0].id != expand(load_sweep_text(kBase, "s.toml"))[0].id);
  CHECK(contains(error_of(std::string(kBase).replace(0, 7, "[base]\nwarm_up = 1\n")),
                 "s.toml:2:11: error: key 'base.warm_up': expected true or false"));
}

TEST_CASE("bad sweep specs name the file position and the key") {
  CHECK(contains(error_of("[base\n"), "s.toml:1:"));
  CHECK(contains(error_of(kBase + "[extra]\n"), "s.toml:15:1"));
  CHECK(contains(error_of(kBase + "[extra]\n"), "unknown table"));
  CHECK(contains(error_of(kBase + "[[axis]]\n\"problem.seqlenq\" = [1]\n"), "s.toml:16:21"));
  CHECK(contains(error_of(kBase + "[[axis]]\n\"problem.seqlenq\" = [1]\n"), "unknown problem field"));
  CHECK(contains(error_of(kBase + "[[axis]]\n\"lds\" = [1]\n"), "unknown axis key"));
  CHECK(contains(error_of(kBase + "[[axis]]\n\"problem.batch\" = []\n"), "non-empty list"));
  const std::string zip = error_of(kBase + "[[axis]]\n\"problem.batch\" = [1, 2]\n\"arch.cu.lds_size\" = [\"64KiB\"]\n");
  CHECK(contains(zip, "s.toml:17:22"));
  CHECK(contains(zip, "has 1 values but problem.batch in the same [[axis]] has 2"));
  CHECK(contains(error_of(kBase + "[[axis]]\n\"arch\" = [{a = 1}]\n"), "expected a string, number or boolean"));
  CHECK(contains(error_of("[base]\narch = \"mi300x\"\n"), "missing table [base.problem]"));
  CHECK(contains(error_of(kBase + "weird = 1\n"), "base.problem.weird"));
  // Errors of the base problem's values point at their line, shorthands included.
  CHECK(contains(error_of(std::string(kBase).replace(kBase.find("batch = 1"), 9, "batch = 0")),
                 "s.toml:7:9: error: key 'base.problem.batch': expected an integer"));
  CHECK(contains(error_of(std::string(kBase).replace(kBase.find("seqlen = 256"), 12, "seqlen = -4")),
                 "s.toml:10:10: error: key 'base.problem.seqlen_q'"));
  CHECK(contains(error_of(std::string(kBase).replace(kBase.find("heads_kv = 1"), 12, "heads_kv = 3")),
                 "key 'base.problem.heads_q': 2 is not a multiple of heads_kv = 3"));
  CHECK(contains(error_of("[base]\nweird = 1\n" + kBase.substr(7)), "s.toml:2:9: error: key 'base.weird'"));
  CHECK(contains(error_of(std::string(kBase).replace(kBase.find("direction = \"fwd\""), 17, "direction = \"up\"")),
                 "expected fwd, bwd or both"));
}

TEST_CASE("a point whose problem value is invalid fails alone and names the field") {
  std::vector<std::string> errors;
  const auto points = expand(load_sweep_text(kBase + "[[axis]]\n\"problem.heads_kv\" = [1, 3]\n", "s.toml"), &errors);
  REQUIRE(points.size() == 2);
  CHECK(errors[0].empty());
  CHECK(contains(errors[1], "heads_q"));
  CHECK(contains(errors[1], "not a multiple of heads_kv = 3"));
  const PointRecord r = run_point(points[1], errors[1]);
  CHECK(r["status"] == "error");
  CHECK(contains(r["error"].get<std::string>(), "heads_kv = 3"));
}

TEST_CASE("a sweep gives the same results with one thread and two and records failed points") {
  const fs::path one = fresh_dir("one"), two = fresh_dir("two");
  const SweepSummary a = run(one, 1), b = run(two, 2);
  CHECK(a.points == 6);
  CHECK(a.simulated == 6);
  CHECK(a.failed == 2);  // the two 8 KiB points: aiter-v3's tiles need 64 KiB of LDS
  CHECK(a.ok == 4);
  CHECK(a.rows == 6);
  CHECK(b.failed == 2);
  CHECK(slurp(one / "results.csv") == slurp(two / "results.csv"));
  CHECK(slurp(one / "results.jsonl") == slurp(two / "results.jsonl"));
  const std::string csv = slurp(one / "results.csv");
  CHECK(csv.rfind("point,id,status,error,param.arch.cu.lds_size,param.problem.seqlen,param.problem.causal,", 0) == 0);
  CHECK(contains(csv, ",tflops,"));
  CHECK(contains(csv, ",traffic.hbm_read_bytes,"));
  CHECK(contains(csv, ",kernels[0].time_us,"));
  CHECK(contains(csv, "\n4,"));  // the failed points keep their rows, in point order
  CHECK(contains(csv, ",error,--set cu.lds_size=8KiB: error: key 'cu.lds_size'"));
  fs::remove_all(one);
  fs::remove_all(two);
}

TEST_CASE("results CSV quotes fields with commas and quotes and takes the union of columns") {
  const PointRecord ok{{"id", "a"}, {"status", "ok"}, {"params", {{"arch", "x"}}}, {"report", {{"t", 1}, {"k", {{"n", "a,b"}}}}}};
  const PointRecord bad{{"id", "b"}, {"status", "error"}, {"params", {{"arch", "y"}}}, {"error", "say \"no\", twice"}};
  const std::string csv = results_csv({{0, ok}, {1, bad}});
  CHECK(csv == "point,id,status,error,param.arch,t,k.n\n0,a,ok,,x,1,\"a,b\"\n1,b,error,\"say \"\"no\"\", twice\",y,,\n");
}

TEST_CASE("a re-run resumes: recorded points are not simulated again and lost ones are") {
  const fs::path dir = fresh_dir("resume");
  run(dir, 2);
  const std::string first = slurp(dir / "results.csv");
  const auto manifest = ResultStore(dir).read_manifest();
  // A kill leaves at most a temporary file and a missing record; an old record may be corrupt.
  fs::remove(dir / "points" / (manifest["points"][1]["id"].get<std::string>() + ".json"));
  std::ofstream(dir / "points" / (manifest["points"][2]["id"].get<std::string>() + ".json")) << "{\"id\": tru";
  std::ofstream(dir / "points" / ".x.json.tmp.1.0") << "partial";
  fs::remove(dir / "results.csv");
  const SweepSummary s = run(dir, 1);
  CHECK(s.reused == 4);
  CHECK(s.simulated == 2);
  CHECK(slurp(dir / "results.csv") == first);
  const SweepSummary again = run(dir, 1);
  CHECK(again.simulated == 0);
  CHECK(again.reused == 6);
  const SweepSummary retry = run(dir, 1, {}, true);
  CHECK(retry.simulated == 2);  // the two recorded failures
  CHECK(slurp(dir / "results.csv") == first);
  fs::remove_all(dir);
}

TEST_CASE("identical points are simulated once and keep a row each") {
  const fs::path dir = fresh_dir("dup");
  const fs::path spec = dir.string() + ".toml";
  std::ofstream(spec) << kBase << "[[axis]]\n\"problem.batch\" = [1, 1]\n";
  const SweepSummary s = run_sweep(load_sweep_file(spec.string()), ResultStore(dir), SweepOptions{});
  CHECK(s.points == 2);
  CHECK(s.distinct == 1);
  CHECK(s.simulated == 1);
  CHECK(s.rows == 2);
  fs::remove_all(dir);
  fs::remove(spec);
}

TEST_CASE("shards cover the sweep and their merge equals the whole run") {
  const fs::path whole = fresh_dir("whole"), s0 = fresh_dir("s0"), s1 = fresh_dir("s1"), s2 = fresh_dir("s2"),
                 merged = fresh_dir("merged");
  run(whole, 2);
  const SweepSummary a = run(s0, 1, {0, 3}), b = run(s1, 1, {1, 3});
  CHECK(a.in_shard == 2);
  CHECK(b.in_shard == 2);
  const MergeSummary partial = merge_sweeps({s0, s1}, merged);
  CHECK(partial.rows == 4);
  CHECK(partial.missing == 2);
  run(s2, 1, {2, 3});
  const MergeSummary full = merge_sweeps({s0, s1, s2}, merged);
  CHECK(full.rows == 6);
  CHECK(full.missing == 0);
  CHECK(slurp(merged / "results.csv") == slurp(whole / "results.csv"));
  for (const auto& d : {whole, s0, s1, s2, merged}) fs::remove_all(d);
}

TEST_CASE("merging directories of different sweeps is refused") {
  const fs::path a = fresh_dir("ma"), b = fresh_dir("mb"), out = fresh_dir("mout");
  run(a, 1, {0, 6});
  const fs::path spec = b.string() + ".toml";
  std::ofstream(spec) << kBase;
  run_sweep(load_sweep_file(spec.string()), ResultStore(b), SweepOptions{});
  CHECK_THROWS_WITH_AS(merge_sweeps({a, b}, out), doctest::Contains("holds another sweep"), arch::ConfigError);
  CHECK_THROWS_WITH_AS(merge_sweeps({a, a / "nothing"}, out), doctest::Contains("not a directory"), arch::ConfigError);
  for (const auto& d : {a, b, out}) fs::remove_all(d);
  fs::remove(spec);
}

TEST_CASE("shards parse as I/N and from a Slurm job array") {
  const Shard s = parse_shard("3/8");
  CHECK(s.index == 3);
  CHECK(s.count == 8);
  CHECK_THROWS_AS(parse_shard("8/8"), arch::ConfigError);
  CHECK_THROWS_AS(parse_shard("1"), arch::ConfigError);
  CHECK_THROWS_AS(parse_shard("-1/4"), arch::ConfigError);
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  CHECK_FALSE(shard_from_slurm(env({})).has_value());
  // --array=1-8: ids 1..8, count 8, min 1 -> shards 0..7.
  const auto slurm = shard_from_slurm(env({{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_COUNT", "8"}, {"SLURM_ARRAY_TASK_MIN", "1"}}));
  REQUIRE(slurm.has_value());
  CHECK(slurm->index == 7);
  CHECK(slurm->count == 8);
  CHECK_THROWS_AS(shard_from_slurm(env({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "8"}, {"SLURM_ARRAY_TASK_MIN", "1"}})),
                  arch::ConfigError);
}

TEST_CASE("the report page has a TFLOP/s line chart a time line chart and traffic bars per swept axis") {
  const fs::path dir = fresh_dir("report");
  run(dir, 2);
  write_sweep_report(dir, dir / "report.html");
  const std::string html = slurp(dir / "report.html");
  const auto count = [&](const std::string& part) {
    std::size_t n = 0;
    for (auto p = html.find(part); p != std::string::npos; p = html.find(part, p + 1)) ++n;
    return n;
  };
  // Two axes (LDS size; seqlen zipped with causal): 2 line charts and 1 bar chart each.
  CHECK(count("<svg class=\"chart line\"") == 4);
  CHECK(count("<svg class=\"chart bar\"") == 2);
  CHECK(count("<h2>problem.seqlen + problem.causal</h2>") == 1);
  // Line per series: the LDS chart has one series per (seqlen, causal) pair, failures are gaps.
  CHECK(count("<polyline") == 4 + 4);
  CHECK(contains(html, "no successful point"));
  CHECK(contains(html, "Best point: <b>"));
  CHECK_FALSE(contains(html, "<script"));
  CHECK_FALSE(contains(html, "src=\"http"));
  CHECK_FALSE(contains(html, "href=\"http"));
  fs::remove_all(dir);
}

TEST_CASE("attnsim sweep --list prints the points without simulating") {
  const auto r = run_attnsim("sweep " + kTiny + " --list", false);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, R"({"arch.cu.lds_size":"160KiB","problem.seqlen":512,"problem.causal":"bottom_right"})"));
  CHECK(contains(r.out, "\n6 points, 6 distinct\n"));
}

TEST_CASE("attnsim sweep exits 2 with a clear message on bad input") {
  auto r = run_attnsim("sweep " + kTiny);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "-o,--out"));
  r = run_attnsim("sweep /nonexistent.toml -o /tmp/x");
  CHECK(r.exit_code == 2);
  r = run_attnsim("sweep " + kTiny + " -o /tmp/x --shard 2/2");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "--shard 2/2"));
  r = run_attnsim("sweep report /nonexistent_dir_attnsim");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "not a directory"));
  r = run_attnsim("sweep merge /nonexistent_dir_attnsim -o /tmp/y");
  CHECK(r.exit_code == 2);
  // A directory that is not a sweep's is refused and left as it was.
  const fs::path plain = fresh_dir("plain");
  fs::create_directories(plain);
  r = run_attnsim("sweep report " + plain.string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "sweep.json"));
  r = run_attnsim("sweep merge " + plain.string() + " -o " + plain.string() + "_out");
  CHECK(r.exit_code == 2);
  CHECK(fs::is_empty(plain));
  CHECK_FALSE(fs::exists(plain.string() + "_out"));
  fs::remove_all(plain);
}

TEST_CASE("the example sweeps in configs/sweeps load and every point's overrides and kernel are valid") {
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(std::string(ATTNSIM_SOURCE_DIR) + "/configs/sweeps")) {
    if (entry.path().extension() != ".toml") continue;
    ++files;
    CAPTURE(entry.path().string());
    std::vector<std::string> errors;
    const auto points = expand(load_sweep_file(entry.path().string()), &errors);
    CHECK(points.size() >= 4);
    for (std::size_t i = 0; i < points.size(); ++i) {
      CHECK(errors[i].empty());
      CHECK_NOTHROW(arch::load_arch_file(arch::resolve_arch(points[i].spec.arch), points[i].spec.sets));
      CHECK_NOTHROW(workloads::parse_kernel_spec(points[i].spec.kernel));
    }
  }
  CHECK(files == 5);
}

TEST_CASE("progress prints plain lines off a terminal and redraws one line on it") {
  std::ostringstream plain;
  Progress p(plain, 3, false, std::chrono::seconds(0));
  p.done(false);
  p.done(true);
  p.finish();
  const std::string s = plain.str();
  CHECK(s.rfind("sweep: 1/3 points (0 failed)  ", 0) == 0);
  CHECK(contains(s, "\nsweep: 2/3 points (1 failed)  "));
  CHECK(contains(s, " points/s  elapsed "));
  CHECK(contains(s, "  ETA "));
  CHECK(std::count(s.begin(), s.end(), '\n') == 3);
  std::ostringstream tty;
  Progress t(tty, 2, true);
  t.done(false);
  t.finish();
  const std::string drawn = tty.str();
  CHECK(drawn.rfind("\r[###############...............] 1/2 points", 0) == 0);
  CHECK(std::count(drawn.begin(), drawn.end(), '\n') == 1);  // only after the last redraw
}

// `attnsim run` and `attnsim validate` end to end: the documented JSON keys, the trace, the
// measurements reader's errors, and validate agreeing with run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "arch/config_error.h"
#include "cli_runner.h"
#include "report/measurements.h"
#include "report/simulate_point.h"

namespace {

using Run = attnsim::test::CliRun;
using attnsim::test::run_attnsim;

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

const char* kHeader =
    "arch,gpu,kernel,preset,direction,batch,heads_q,heads_kv,seqlen_q,seqlen_k,head_dim,dtype,causal,metric,measured,unit,"
    "source\n";
const char* kSmall = "--batch 1 --heads 8:2 --seqlen 512 --causal --kernel ck";

// `attnsim validate --json` on a measurements file of kHeader and `rows`; the file's path in *path.
nlohmann::json validate_rows(const std::string& name, const std::string& rows, std::string* path) {
  *path = temp_file(name, std::string(kHeader) + rows);
  const Run v = run_attnsim("validate --json " + *path);
  REQUIRE(v.exit_code == 0);
  return nlohmann::json::parse(v.out);
}

}  // namespace

TEST_CASE("run --json has the documented keys and consistent totals") {
  const Run r = run_attnsim(std::string("run --json --direction both ") + kSmall);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"time_us", "tflops", "kernels", "traffic", "counters"}) CHECK(j.contains(key));
  for (const char* key : {"l2_fabric_read_bytes", "l2_fabric_write_bytes", "hbm_read_bytes", "hbm_write_bytes", "l2_hit_rate"}) {
    CHECK(j["traffic"].contains(key));
  }
  double kernels_us = 0;
  for (const auto& k : j["kernels"]) {
    CHECK(k.contains("name"));
    kernels_us += k["time_us"].get<double>();
  }
  CHECK(kernels_us == doctest::Approx(j["time_us"].get<double>()).epsilon(1e-9));
  CHECK(j["kernels"][0]["name"] == "fwd");
  // TFLOP/s in the FA convention: 4 B Hq N^2 d halved for causal, x 3.5 for forward and backward.
  const double flops = 3.5 * 4.0 * 8 * 512.0 * 512.0 * 128 / 2;
  CHECK(j["tflops"].get<double>() == doctest::Approx(flops / (j["time_us"].get<double>() * 1e-6) / 1e12));
  CHECK(j["traffic"]["l2_fabric_write_bytes"] == j["counters"]["WRITE_SIZE_bytes"]);
}

TEST_CASE("run --stats: the channels' figures add up to the run's counters in either tag mode") {
  for (const char* mode : {"", "--approximate "}) {
    CAPTURE(mode);
    const Run r = run_attnsim(std::string("run --json --stats ") + mode + kSmall);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.contains("stats"));
    const auto& st = j["stats"];
    const auto& c = j["counters"];
    const bool exact = std::string(mode).empty();
    std::uint64_t requests = 0, hits = 0, xcd_requests = 0, read = 0, link = 0;
    for (const auto& x : st["xcd"]) {
      xcd_requests += x["l2"]["requests"].get<std::uint64_t>();
      for (const auto& ch : x["l2"]["channel"]) {
        CHECK(ch.contains("requests") == exact);  // attributed per line in the exact mode only
        requests += ch.value("requests", std::uint64_t{0});
        hits += ch.value("hits", std::uint64_t{0});
        read += ch["read_bytes"].get<std::uint64_t>();
        link += ch["link_bytes"].get<std::uint64_t>();
      }
    }
    CHECK(xcd_requests == c["TCC_REQ"].get<std::uint64_t>());
    if (exact) {
      CHECK(requests == c["TCC_REQ"].get<std::uint64_t>());
      CHECK(hits == c["TCC_HIT"].get<std::uint64_t>());
    }
    CHECK(read == j["traffic"]["l2_read_request_bytes"].get<std::uint64_t>());
    const auto fabric = c["FETCH_SIZE_bytes"].get<std::uint64_t>() + c["WRITE_SIZE_bytes"].get<std::uint64_t>();
    CHECK(link == fabric);
    double mall = 0, hbm = 0;
    for (const auto& ch : st["mall"]["channel"]) mall += ch["bytes"].get<double>();
    for (const auto& ch : st["hbm"]["channel"]) hbm += ch["bytes"].get<double>();
    CHECK(mall == doctest::Approx(static_cast<double>(fabric)).epsilon(1e-12));
    CHECK(hbm == doctest::Approx(static_cast<double>(c["hbm_read_bytes"].get<std::uint64_t>() + c["hbm_write_bytes"].get<std::uint64_t>())).epsilon(1e-12));
    CHECK(st["time_ps"].get<double>() == doctest::Approx(j["time_us"].get<double>() * 1e6));
    // Per kernel: its own L2 counters and time, and channel figures that add up to the run's.
    std::uint64_t kernel_link = 0, kernel_hbm_busy = 0, run_hbm_busy = 0;
    double kernel_hbm_bytes = 0;
    for (const auto& k : j["kernels"]) {
      CAPTURE(k["name"].get<std::string>());
      REQUIRE(k.contains("stats"));
      const auto& ks = k["stats"];
      std::uint64_t k_requests = 0;
      for (const auto& x : ks["xcd"]) {
        k_requests += x["l2"]["requests"].get<std::uint64_t>();
        for (const auto& ch : x["l2"]["channel"]) kernel_link += ch["link_bytes"].get<std::uint64_t>();
      }
      CHECK(k_requests == k["counters"]["TCC_REQ"].get<std::uint64_t>());
      for (const auto& ch : ks["hbm"]["channel"]) {
        kernel_hbm_busy += ch["busy_ps"].get<std::uint64_t>();
        kernel_hbm_bytes += ch["bytes"].get<double>();
      }
      CHECK(ks["time_ps"].get<double>() == doctest::Approx(k["time_us"].get<double>() * 1e6));
    }
    for (const auto& ch : st["hbm"]["channel"]) run_hbm_busy += ch["busy_ps"].get<std::uint64_t>();
    CHECK(kernel_link == link);
    CHECK(kernel_hbm_busy == run_hbm_busy);
    CHECK(kernel_hbm_bytes == doctest::Approx(hbm).epsilon(1e-12));
  }
  const Run plain = run_attnsim(std::string("run --json ") + kSmall);
  CHECK_FALSE(nlohmann::json::parse(plain.out).contains("stats"));
  const Run text = run_attnsim(std::string("run --stats ") + kSmall);
  CHECK(text.out.find("channels, busy over the run's time (mean, busiest): L2 read ") != std::string::npos);
  CHECK(text.out.find("    fwd, over its time: L2 read ") != std::string::npos);
  const Run both = run_attnsim(std::string("run --stats --fast-forward ") + kSmall);
  CHECK(both.exit_code == 2);
  CHECK(both.out.find("key 'fast_forward': fast-forward skips workgroups, and the channel statistics count what was served") !=
        std::string::npos);
}

TEST_CASE("counters carry the profiler names of the GPU's vendor") {
  // H100 (NVIDIA): Nsight Compute names. FlashAttention-2's d=128 bf16 rows are 256 B, aligned to
  // the 128 B line, so every read request covers whole 32 B sectors: sectors x 32 = bytes read.
  const Run h = run_attnsim("run --json --arch h100 --kernel fa2 --direction both --batch 1 --heads 8:2 --seqlen 512 --causal");
  REQUIRE(h.exit_code == 0);
  const auto nv = nlohmann::json::parse(h.out)["counters"];
  CHECK(nv["lts__t_sectors_srcunit_tex_op_read.sum"].get<std::uint64_t>() * 32 == nv["requested_read_bytes"].get<std::uint64_t>());
  CHECK(nv["lts__t_sectors_srcunit_tex_op_write.sum"].get<std::uint64_t>() * 32 == nv["requested_write_bytes"].get<std::uint64_t>());
  CHECK(nv["dram__bytes_read.sum"] == nv["hbm_read_bytes"]);
  CHECK(nv["dram__bytes_write.sum"] == nv["hbm_write_bytes"]);
  CHECK_FALSE(nv.contains("TCC_REQ"));
  // MI300X (AMD): rocprofiler names, and no Nsight ones.
  const Run a = run_attnsim("run --json --direction fwd " + std::string(kSmall));
  REQUIRE(a.exit_code == 0);
  const auto amd = nlohmann::json::parse(a.out)["counters"];
  CHECK(amd.contains("TCC_REQ"));
  CHECK(amd.contains("FETCH_SIZE_bytes"));
  CHECK_FALSE(amd.contains("dram__bytes_read.sum"));
}

TEST_CASE("the readable report says when the approximate tag mode ran") {
  const Run approx = run_attnsim("run --approximate --direction fwd " + std::string(kSmall));
  REQUIRE(approx.exit_code == 0);
  CHECK(approx.out.find("[approximate tags]") != std::string::npos);
  const Run exact = run_attnsim("run --direction fwd " + std::string(kSmall));
  REQUIRE(exact.exit_code == 0);
  CHECK(exact.out.find("approximate") == std::string::npos);
}

TEST_CASE("each kernel's reported clock is a time average within the clocks it ran at") {
  // Regression: a control interval that ended after the kernel's last workgroup pushed the clock
  // integral past the kernel's end (time averages of 2363 MHz and -1041 MHz on MI300X, whose peak is
  // 2100 MHz).
  for (const char* args : {"--heads 32:8 --seqlen 1024", "--heads 16:4 --seqlen 2048 --no-causal"}) {
    CAPTURE(args);
    const Run r = run_attnsim(std::string("run --json ") + args, false);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& k : j["kernels"]) {
      CAPTURE(k["name"].get<std::string>());
      const double mhz = k["clock"]["engine_mhz"].get<double>();
      CHECK(mhz >= k["clock"]["min_mhz"].get<double>() - 1e-6);
      CHECK(mhz <= k["clock"]["max_mhz"].get<double>() + 1e-6);
      CHECK(k["clock"]["max_mhz"].get<double>() <= 2100 + 1e-6);
    }
  }
}

TEST_CASE("each kernel reports its XCDs' clocks: the spread around the controller's and none above the maximum") {
  // clock.xcd_spread 0.03 on MI300X: XCD i of 8 at 1 + 0.03 x (1/2 - i/7) of the controller's clock,
  // capped at 2100 MHz; pinned at 1.5 GHz, XCD 0 runs at 1.5 x 1.015 = 1522.5 MHz and XCD 7 at
  // 1.5 x 0.985 = 1477.5 MHz. An H100 (one die, no spread) reports its one clock.
  const Run pinned = run_attnsim("run --json --direction fwd --set clock.engine=1.5GHz " + std::string(kSmall));
  REQUIRE(pinned.exit_code == 0);
  const auto xcd = nlohmann::json::parse(pinned.out)["kernels"][0]["clock"]["xcd_mhz"];
  REQUIRE(xcd.size() == 8);
  CHECK(xcd[0].get<double>() == doctest::Approx(1522.5));
  CHECK(xcd[7].get<double>() == doctest::Approx(1477.5));
  const Run modelled = run_attnsim("run --json --direction fwd " + std::string(kSmall));
  REQUIRE(modelled.exit_code == 0);
  const auto report = nlohmann::json::parse(modelled.out);  // held: the loop ranges over a part of it
  for (const auto& k : report["kernels"]) {
    for (const auto& mhz : k["clock"]["xcd_mhz"]) CHECK(mhz.get<double>() <= 2100 + 1e-6);
  }
  const Run h100 = run_attnsim("run --json --arch h100 --kernel fa2 --direction fwd --batch 1 --heads 8:2 --seqlen 512 --causal");
  REQUIRE(h100.exit_code == 0);
  const auto k0 = nlohmann::json::parse(h100.out)["kernels"][0]["clock"];
  REQUIRE(k0["xcd_mhz"].size() == 1);
  CHECK(k0["xcd_mhz"][0].get<double>() == doctest::Approx(k0["engine_mhz"].get<double>()));
}

// The vector class (clock.power.vector, 0 W as shipped: docs/model.md) adds activity_vector x P_vector
// x (f / engine_max)^3 to the board power. At a pinned clock the timing, and so every activity, is
// the same with and without it, and the power differs by exactly that term: (1.5 / 2.1)^3 x a x 1341 W.
TEST_CASE("vector work draws clock.power.vector: the power at a pinned clock and the modelled clock") {
  // aiter v3's forward on 64 heads' worth of workgroups keeps the VALUs about a quarter busy.
  const std::string fwd = "run --json --direction fwd --batch 2 --heads 32:8 --seqlen 1024 --approximate";
  const Run without = run_attnsim(fwd + " --set clock.engine=1.5GHz");
  const Run with = run_attnsim(fwd + " --set clock.engine=1.5GHz --set clock.power.vector=1341W");
  REQUIRE(without.exit_code == 0);
  REQUIRE(with.exit_code == 0);
  const auto a = nlohmann::json::parse(without.out)["kernels"][0];
  const auto b = nlohmann::json::parse(with.out)["kernels"][0];
  const double activity = a["clock"]["vector_activity"].get<double>();
  CHECK(activity > 0.2);
  CHECK(activity == doctest::Approx(a["utilisation"]["vector"].get<double>()));
  CHECK(b["clock"]["vector_activity"].get<double>() == activity);
  CHECK(b["clock"]["power_w"].get<double>() - a["clock"]["power_w"].get<double>() ==
        doctest::Approx(std::pow(1.5 / 2.1, 3) * activity * 1341));
  // Modelled: the class takes power from the matrix work, so the clock falls (1763 -> 1498 MHz).
  const Run modelled = run_attnsim(fwd);
  const Run vector = run_attnsim(fwd + " --set clock.power.vector=1341W");
  REQUIRE(modelled.exit_code == 0);
  REQUIRE(vector.exit_code == 0);
  CHECK(nlohmann::json::parse(vector.out)["kernels"][0]["clock"]["engine_mhz"].get<double>() <
        nlohmann::json::parse(modelled.out)["kernels"][0]["clock"]["engine_mhz"].get<double>() - 200);
}

TEST_CASE("each kernel reports the fixed fabric and memory clocks it ran with") {
  // MI300X: clock.fabric 2100 MHz (the MALL's 17.2 TB/s over 128 channels of 64 B), clock.memory
  // 1300 MHz (configs/arch/mi300x.toml); an override is what the kernels report.
  const Run base = run_attnsim("run --json --direction fwd " + std::string(kSmall));
  REQUIRE(base.exit_code == 0);
  const auto clock = nlohmann::json::parse(base.out)["kernels"][0]["clock"];
  CHECK(clock["fabric_mhz"].get<double>() == doctest::Approx(2100));
  CHECK(clock["memory_mhz"].get<double>() == doctest::Approx(1300));
  const Run slow = run_attnsim("run --direction fwd --set clock.fabric=1.6GHz " + std::string(kSmall));
  REQUIRE(slow.exit_code == 0);
  CHECK(attnsim::test::contains(slow.out, "the fabric runs at 1600 MHz and HBM at 1300 MHz"));
}

TEST_CASE("run --trace writes a Chrome trace with a span per workgroup and bandwidth counters") {
  const auto path = (std::filesystem::temp_directory_path() / "attnsim_trace_test.json").string();
  const Run r = run_attnsim("run --json --direction fwd --trace " + path + " " + kSmall);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  std::size_t spans = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "workgroup") ++spans;
    if (e["ph"] == "C") ++counters;
  }
  CHECK(spans == report["kernels"][0]["workgroups"].get<std::size_t>());
  CHECK(counters >= 2);
  CHECK(run_attnsim("run --direction fwd --trace /nonexistent/dir/t.json " + std::string(kSmall)).exit_code == 2);
}

namespace {
// `attnsim run [flags]` on a small ck forward, and a measurements CSV (written to `name`) that
// records its TFLOP/s (times `scale`) as the measured value.
std::string self_measured_csv(const std::string& name, const std::string& run_flags, double scale = 1) {
  const Run r = run_attnsim("run --json " + run_flags + " --direction fwd --no-causal --batch 1 --heads 8:2 --seqlen 512 --kernel ck");
  REQUIRE(r.exit_code == 0);
  const double tflops = nlohmann::json::parse(r.out)["tflops"].get<double>();
  return temp_file(name, std::string(kHeader) + "mi300x,MI300X,ck fwd,ck,fwd,1,8,2,512,512,128,bf16,0,tflops," +
                             std::to_string(scale * tflops) + ",TFLOP/s,this test\n");
}
}  // namespace

TEST_CASE("validate reproduces run: a case measured at the simulator's own figure has no error") {
  const std::string csv = self_measured_csv("attnsim_validate_self.csv", "");
  const Run v = run_attnsim("validate --json " + csv);
  REQUIRE(v.exit_code == 0);
  const auto j = nlohmann::json::parse(v.out);
  REQUIRE(j["cases"].size() == 1);
  CHECK(std::abs(j["cases"][0]["modelled"]["error"].get<double>()) < 1e-5);
  // The config's clock.measured.matrix_bf16 (BLOG-MAF2's 1207 MHz) is the slowest XCD's: with
  // clock.xcd_spread 0.03 the controller is pinned at 1207 / (1 - 0.015) = 1225.4 MHz.
  CHECK(j["cases"][0]["pinned"]["clock"] == "1225MHz");
  // --set moves the recorded clock the pinned run uses; a GPU without one pins to the clock model's
  // full-load clock (H100: the 1830 MHz tensor clock, test_clock_model.cpp).
  const Run moved = run_attnsim("validate --json --set clock.measured.matrix_bf16=1300MHz " + csv);
  REQUIRE(moved.exit_code == 0);
  CHECK(nlohmann::json::parse(moved.out)["cases"][0]["pinned"]["clock"] == "1320MHz");  // 1300 / 0.985
  const std::string h100 = temp_file("attnsim_validate_h100.csv",
                                     std::string(kHeader) + "h100,H100,fa2 fwd,fa2,fwd,1,8,2,512,512,128,bf16,0,tflops,100,TFLOP/s,this test\n");
  const Run nv = run_attnsim("validate --json " + h100);
  REQUIRE(nv.exit_code == 0);
  CHECK(nlohmann::json::parse(nv.out)["cases"][0]["pinned"]["clock"] == "1830MHz");
  // A bound the case cannot meet makes the command fail with exit code 3.
  const std::string off = self_measured_csv("attnsim_validate_off.csv", "", 2);
  CHECK(run_attnsim("validate --max-mape 10 " + off).exit_code == 3);
}

TEST_CASE("validate: a measured zero has no relative error and the means are given per metric") {
  // A forward has no atomics: the suite records 0 for l2_atomic_request_bytes, which has no relative
  // error (it made the file's mean NaN before); the mean is the TFLOP/s row's own.
  std::string csv;
  const auto j = validate_rows("attnsim_validate_zero.csv",
                               "h100,H100,fa2 fwd,fa2,fwd,1,8,2,512,512,128,bf16,0,tflops,100,TFLOP/s,this test\n"
                               "h100,H100,fa2 fwd,fa2,fwd,1,8,2,512,512,128,bf16,0,l2_atomic_request_bytes,0,B,this test\n",
                               &csv);
  REQUIRE(j["cases"].size() == 2);
  CHECK(j["cases"][1]["modelled"]["error"].is_null());
  CHECK(j["cases"][1]["pinned"]["error"].is_null());
  CHECK(j["summary"]["values_without_relative_error"] == 1);
  const double tflops_error = std::abs(j["cases"][0]["modelled"]["error"].get<double>());
  CHECK(j["summary"]["mape_modelled_clock"].get<double>() == doctest::Approx(tflops_error));
  CHECK(j["summary"]["mape_by_metric"].size() == 1);
  CHECK(j["summary"]["mape_by_metric"]["tflops"]["values"] == 1);
  CHECK(j["summary"]["mape_by_metric"]["tflops"]["mape_modelled_clock"].get<double>() == doctest::Approx(tflops_error));
  const Run text = run_attnsim("validate " + csv);
  CHECK(text.out.find("n/a") != std::string::npos);
  CHECK(text.out.find("1 measured zero has no relative error") != std::string::npos);
}

TEST_CASE("validate groups its errors by metric and kernel and direction and mask as its tables are read") {
  // Two dense forwards (N = 512 and 1024) in one group, a causal one in another, and a time row in a
  // third: each group's range and mean come from its cases' own errors.
  std::string csv;
  const auto j = validate_rows("attnsim_validate_groups.csv",
                               "h100,H100,fa2 fwd,fa2,fwd,1,8,2,512,512,128,bf16,0,tflops,100,TFLOP/s,this test\n"
                               "h100,H100,fa2 fwd,fa2,fwd,1,8,2,1024,1024,128,bf16,0,tflops,100,TFLOP/s,this test\n"
                               "h100,H100,fa2 fwd,fa2,fwd,1,8,2,512,512,128,bf16,1,tflops,100,TFLOP/s,this test\n"
                               "h100,H100,fa2 fwd,fa2,fwd,1,8,2,512,512,128,bf16,0,time_us,10,us,this test\n",
                               &csv);
  REQUIRE(j["cases"].size() == 4);
  const auto error = [&](int i) { return j["cases"][i]["modelled"]["error"].get<double>(); };
  const auto& groups = j["summary"]["by_group"];
  REQUIRE(groups.size() == 3);
  // In key order: (time_us, ...) after (tflops, ..., dense) and (tflops, ..., causal).
  const auto& dense = groups[0];
  CHECK(dense["metric"] == "tflops");
  CHECK(dense["kernel"] == "fa2");
  CHECK(dense["direction"] == "fwd");
  CHECK(dense["causal"] == false);
  CHECK(dense["values"] == 2);
  CHECK(dense["min_error"].get<double>() == doctest::Approx(std::min(error(0), error(1))));
  CHECK(dense["max_error"].get<double>() == doctest::Approx(std::max(error(0), error(1))));
  CHECK(dense["mape"].get<double>() == doctest::Approx((std::abs(error(0)) + std::abs(error(1))) / 2));
  CHECK(groups[1]["causal"] == true);
  CHECK(groups[1]["mape"].get<double>() == doctest::Approx(std::abs(error(2))));
  CHECK(groups[2]["metric"] == "time_us");
  CHECK(groups[2]["min_error"].get<double>() == doctest::Approx(error(3)));
  const Run text = run_attnsim("validate " + csv);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("by group, modelled clock") != std::string::npos);
  CHECK(text.out.find("causal") != std::string::npos);
}

TEST_CASE("validate --approximate simulates in the approximate tag mode as run --approximate does") {
  const std::string csv = self_measured_csv("attnsim_validate_approx.csv", "--approximate");
  const Run v = run_attnsim("validate --json --approximate " + csv);
  REQUIRE(v.exit_code == 0);
  const auto j = nlohmann::json::parse(v.out);
  CHECK(j["summary"]["tags"] == "approximate");
  CHECK(std::abs(j["cases"][0]["modelled"]["error"].get<double>()) < 1e-5);
  CHECK(nlohmann::json::parse(run_attnsim("validate --json " + csv).out)["summary"]["tags"] == "exact");
}

TEST_CASE("validate --fast-forward simulates as run --fast-forward does") {
  // A grid of 31 rounds of the H100's 264 slots: fast-forward skips about half of it. Its departure
  // from a full run on this short causal grid is -1.03 % in time since session 18 (84 lines in
  // flight per SM, FA2's own softmax counts; -0.05 % before): held within 1.5 % here, the other
  // problems of docs/model.md's fast-forward table within 1 %.
  const std::string problem = "--arch h100 --kernel fa2 --direction fwd --batch 64 --heads 16:4 --seqlen 1024 --causal";
  const Run r = run_attnsim("run --json --approximate --fast-forward " + problem);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  CHECK(report["kernels"][0]["fast_forward"]["skipped_workgroups"].get<std::uint64_t>() > 0);
  const std::string csv = temp_file("attnsim_validate_ff.csv", std::string(kHeader) +
                                                                   "h100,H100,fa2 fwd,fa2,fwd,64,16,4,1024,1024,128,bf16,1,tflops," +
                                                                   std::to_string(report["tflops"].get<double>()) +
                                                                   ",TFLOP/s,this test\n");
  const Run v = run_attnsim("validate --json --approximate --fast-forward " + csv);
  REQUIRE(v.exit_code == 0);
  const auto j = nlohmann::json::parse(v.out);
  CHECK(j["summary"]["fast_forward"] == true);
  CHECK(std::abs(j["cases"][0]["modelled"]["error"].get<double>()) < 1e-5);
  const Run full = run_attnsim("validate --json --approximate " + csv);
  REQUIRE(full.exit_code == 0);
  const auto jf = nlohmann::json::parse(full.out);
  CHECK(jf["summary"]["fast_forward"] == false);
  CHECK(std::abs(jf["cases"][0]["modelled"]["error"].get<double>()) < 0.015);
}

TEST_CASE("the shipped measurements parse into the cases they describe") {
  const auto cases = attnsim::report::read_measurements(std::string(ATTNSIM_SOURCE_DIR) +
                                                        "/validation/measurements/mi300x_aiter_v3.csv");
  REQUIRE(cases.size() == 12);  // ROCm/aiter PR #1270: 4 + 4 non-causal, 2 + 2 causal
  CHECK(cases[0].point.kernel == "aiter-v3");
  CHECK(cases[0].point.problem.batch == 8);
  CHECK(cases[0].point.problem.heads_q == 32);
  CHECK(cases[0].point.problem.heads_kv == 8);
  CHECK(cases[0].measured == doctest::Approx(459.43));
  CHECK(cases[8].point.problem.causal);
}

TEST_CASE("the MI355X baselines of the HipKittens paper parse into the cases they describe") {
  // HazyResearch/HipKittens@7bd6c82 analysis/attn/fwd/plot.py: CK and Triton forwards on MI355X,
  // B = 16, d = 128, MHA (16 heads) and GQA (64:8), causal or not, N = 1024..16384: 2 x 2 x 2 x 5.
  const auto cases = attnsim::report::read_measurements(std::string(ATTNSIM_SOURCE_DIR) +
                                                        "/validation/measurements/mi355x_hipkittens_fwd.csv");
  REQUIRE(cases.size() == 40);
  std::size_t causal = 0, gqa = 0, ck = 0;
  for (const auto& c : cases) {
    CHECK(c.point.arch == "mi355x");
    CHECK(c.point.direction == "fwd");
    CHECK(c.metric == "tflops");
    CHECK(c.point.problem.batch == 16);
    CHECK(c.point.problem.head_dim_qk == 128);
    causal += c.point.problem.causal ? 1 : 0;
    gqa += c.point.problem.heads_q == 64 && c.point.problem.heads_kv == 8 ? 1 : 0;
    ck += c.point.kernel == "ck" ? 1 : 0;
  }
  CHECK(causal == 20);
  CHECK(gqa == 20);
  CHECK(ck == 20);
  CHECK(cases[0].point.kernel == "ck");
  CHECK(cases[0].point.problem.heads_q == 16);
  CHECK(cases[0].point.problem.seqlen_q == 1024);
  CHECK(cases[0].measured == doctest::Approx(761));  // mi355x_mha_baselines_non_causal["ck"]["1024"]
  // The Triton baselines: the better of ROCm Triton's perf-kernels flash-attention.py and its
  // tutorial 06-fused-attention.py (HipKittens analysis/baselines/README.md), both launched blocks first.
  CHECK(cases[39].point.kernel == "triton-amd,fwd.grid=blocks_first");
  CHECK(cases[39].point.problem.seqlen_q == 16384);
  CHECK(cases[39].measured == doctest::Approx(848));  // mi355x_gqa_baselines_causal["triton"]["16384"]
}

// midiareshadi/attn-dsl-bench@603819b3 (results/raw/sweep_v1.csv and counters_v1.csv): four MI300X
// forward kernels, causal, B = 16, 16 heads, d = 64 and 128, N = 1024..16384, timed and profiled
// with rocprofv3 (validation/measurements/mi300x_attn_dsl_bench_fwd.csv).
std::vector<attnsim::report::MeasuredCase> attn_dsl_bench_cases() {
  return attnsim::report::read_measurements(std::string(ATTNSIM_SOURCE_DIR) +
                                            "/validation/measurements/mi300x_attn_dsl_bench_fwd.csv");
}

TEST_CASE("the MI300X forwards of attn-dsl-bench parse into the cases they describe with their layouts") {
  const auto cases = attn_dsl_bench_cases();
  // 3 implementations x 2 head dimensions x 5 lengths, each timed and its MFMA FLOPs counted; the
  // MFMA utilisation of all but the Triton baseline's (whose profile mixed its autotuner's runs).
  REQUIRE(cases.size() == 80);
  std::size_t time = 0, flops = 0, utilisation = 0, bhsd = 0;
  for (const auto& c : cases) {
    CHECK(c.point.arch == "mi300x");
    CHECK(c.point.direction == "fwd");
    CHECK(c.point.problem.causal);
    CHECK(c.point.problem.batch == 16);
    CHECK(c.point.problem.heads_q == 16);
    CHECK(c.point.problem.heads_kv == 16);
    time += c.metric == "time_us" ? 1 : 0;
    flops += c.metric == "matrix_flops" ? 1 : 0;
    utilisation += c.metric == "matrix_utilisation" ? 1 : 0;
    // The Triton baseline and PyTorch's SDPA (AOTriton) read the harness's B H N D tensors; aiter
    // is called on B N H D copies.
    const bool triton_family = c.point.kernel.rfind("triton-amd", 0) == 0 || c.point.kernel == "aotriton";
    CHECK((c.point.problem.layout == attnsim::workloads::Layout::bhsd) == triton_family);
    bhsd += triton_family ? 1 : 0;
  }
  CHECK(time == 30);
  CHECK(flops == 30);
  CHECK(utilisation == 20);
  CHECK(bhsd == 50);
  CHECK(cases[0].point.kernel == "aiter-v3");
  CHECK(cases[0].measured == doctest::Approx(299.0745007991791));  // median_time_ms 0.2990745007991791
  CHECK(cases[2].metric == "matrix_utilisation");
  CHECK(cases[2].measured == doctest::Approx(0.42157375125));  // MfmaUtil 42.157375125 %
}

TEST_CASE("issued matrix FLOPs equal rocprofv3's MfmaFlopsBF16 for four MI300X kernels' causal tiles") {
  // The counter counts the MFMA work each kernel issued, the diagonal tiles' masked part included:
  // 256 x 32 tiles (aiter v3, 0.625 of the dense work at N = 1024) and 128 x 64 (CK at d = 64, the
  // Triton baseline, AOTriton: 0.5625). The model issues the same instructions exactly.
  std::size_t checked = 0;
  for (const auto& c : attn_dsl_bench_cases()) {
    if (c.metric != "matrix_flops" || c.point.problem.seqlen_q != 1024) continue;
    attnsim::report::PointSpec spec = c.point;
    spec.approximate = true;
    CAPTURE(c.label());
    CAPTURE(c.point.kernel);
    CHECK(attnsim::report::predicted(attnsim::report::simulate_point(spec), c.metric) == c.measured);
    ++checked;
  }
  CHECK(checked == 6);
}

TEST_CASE("aiter v3 and CK forwards on MI300X keep their MFMA pipes as busy as rocprofv3 measured within 10 percent") {
  // MfmaUtil is busy matrix cycles over the kernel's active cycles: independent of the clock, it
  // checks the compute model (tiles, waves, the exp and VALU work beside the matrix work) apart
  // from the clock model. Session 36: aiter v3 +0.2 %, CK +2.3 % at N = 2048 (docs/validation.md).
  std::size_t checked = 0;
  for (const auto& c : attn_dsl_bench_cases()) {
    if (c.metric != "matrix_utilisation" || c.point.problem.seqlen_q != 2048) continue;
    if (c.point.kernel != "aiter-v3" && c.point.kernel.rfind("ck", 0) != 0) continue;
    attnsim::report::PointSpec spec = c.point;
    spec.approximate = true;
    const double error = attnsim::report::predicted(attnsim::report::simulate_point(spec), c.metric) / c.measured - 1;
    CAPTURE(c.label());
    CAPTURE(c.point.kernel);
    CHECK(std::abs(error) < 0.10);
    ++checked;
  }
  CHECK(checked == 2);
}

TEST_CASE("matrix_utilisation is the busiest matrix kernel's: a profiler's MFMA utilisation is one kernel's") {
  // Two kernels: a short one with busy pipes, a long one with idle ones; the second's matrix busy
  // time is larger (0.2 x 100 > 0.9 x 10), so its utilisation is the pass's.
  const nlohmann::json report = nlohmann::json::parse(R"({"kernels": [
      {"time_us": 10, "utilisation": {"matrix": 0.9}},
      {"time_us": 100, "utilisation": {"matrix": 0.2}}]})");
  CHECK(attnsim::report::predicted(report, "matrix_utilisation") == doctest::Approx(0.2));
  const nlohmann::json one = nlohmann::json::parse(R"({"kernels": [{"time_us": 5, "utilisation": {"matrix": 0.7}}]})");
  CHECK(attnsim::report::predicted(one, "matrix_utilisation") == doctest::Approx(0.7));
}

TEST_CASE("FlashAttention-2's profiled counters on the H200 are simulated as ncu ran them") {
  // validation/measurements/h200_torch_fa2_ncu_20261204.csv, from this project's ncu run of torch's
  // FlashAttention-2 (h200_detail_20261204/h200_torch_fa2_ncu_raw_20261204.csv, B = 4, 16 heads,
  // N = 4096, d = 128): every row was read by ncu, which emptied the caches before each kernel.
  const auto cases = attnsim::report::read_measurements(std::string(ATTNSIM_SOURCE_DIR) +
                                                        "/validation/measurements/h200_torch_fa2_ncu_20261204.csv");
  REQUIRE(cases.size() == 10);
  std::size_t utilisation = 0;
  for (const auto& c : cases) {
    CHECK(c.point.empty_caches_per_kernel);
    CHECK(c.point.kernel == "fa2");
    utilisation += c.metric == "matrix_utilisation" ? 1 : 0;
  }
  CHECK(utilisation == 4);
  // The dense forward's tensor pipe: 54.89 % of mma.sync's rate measured; the model keeps it 9.3 %
  // busier (session 36, docs/validation.md): held within 15 %.
  const auto& forward = cases[0];
  REQUIRE(forward.metric == "matrix_utilisation");
  CHECK(forward.measured == doctest::Approx(0.5489));
  attnsim::report::PointSpec spec = forward.point;
  spec.approximate = true;
  const double error = attnsim::report::predicted(attnsim::report::simulate_point(spec), forward.metric) / forward.measured - 1;
  CHECK(std::abs(error) < 0.15);
}

TEST_CASE("the H200 suite's profiled rows are simulated as ncu ran them and its dQ atomics match the red sectors") {
  // Nsight Compute flushed and invalidated the caches before each kernel it profiled (its default
  // cache control, NCU-CACHE): the rows whose conditions name ncu are simulated with empty caches
  // per kernel, the timed rows as the hardware runs. The backward's atomicAdd per accumulator
  // element adds half of each 32 B sector it touches: ncu counted 2.0 red sectors per 32 B of dQ in
  // every case (H200-REF), which the model now predicts (it was -50.0 % with a request per sector).
  const auto cases = attnsim::report::read_measurements(std::string(ATTNSIM_SOURCE_DIR) +
                                                        "/validation/measurements/h200_ref_kernels_20261204.csv");
  std::size_t profiled = 0, timed = 0;
  const attnsim::report::MeasuredCase* atomics = nullptr;
  for (const auto& c : cases) {
    const bool from_ncu = c.metric != "time_us" && c.metric != "tflops";
    CHECK(c.point.empty_caches_per_kernel == from_ncu);
    (from_ncu ? profiled : timed) += 1;
    if (!atomics && c.metric == "l2_atomic_request_bytes" && c.measured > 0) atomics = &c;
  }
  CHECK(profiled == 200);
  CHECK(timed == 80);
  REQUIRE(atomics != nullptr);
  CHECK(atomics->label() == "bwd B=16 Hq=16 Hkv=16 N=1024 d=64 bf16");
  attnsim::report::PointSpec spec = atomics->point;
  spec.approximate = true;
  const double predicted = attnsim::report::predicted(attnsim::report::simulate_point(spec), atomics->metric);
  CHECK(predicted == doctest::Approx(atomics->measured).epsilon(0.01));
}

TEST_CASE("validate simulates its cases on every core with the results of one thread") {
  // Four distinct points (two kernels, both directions, two lengths; one measured twice), each
  // simulated at the modelled and the pinned clock: the same JSON whatever the thread count.
  std::string path;
  validate_rows("attnsim_validate_threads.csv",
                "mi300x,MI300X,ck,ck,fwd,1,8,2,512,512,128,bf16,0,tflops,100,TFLOP/s,t\n"
                "mi300x,MI300X,ck,ck,fwd,1,8,2,512,512,128,bf16,0,time_us,50,us,t\n"
                "mi300x,MI300X,ck,ck,bwd,1,8,2,512,512,128,bf16,1,tflops,100,TFLOP/s,t\n"
                "mi300x,MI300X,a,aiter-v3,fwd,1,8,2,1024,1024,128,bf16,1,tflops,100,TFLOP/s,t\n"
                "h100,H100,fa2,fa2,fwd,1,8,2,512,512,128,bf16,0,hbm_read_bytes,1000000,B,t\n",
                &path);
  const Run one = run_attnsim("validate --json --approximate --threads 1 " + path, false);
  const Run two = run_attnsim("validate --json --approximate --threads 2 " + path, false);
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  CHECK(nlohmann::json::parse(one.out)["cases"].size() == 5);
  CHECK(one.out == two.out);
}

TEST_CASE("validate: a case that cannot be simulated names its file and line (the first in file order)") {
  // Rows 3 and 4 ask aiter v3 for head dimensions no code object of it covers; row 2 is fine. Run
  // in parallel, the error is still the one row 3 meets first.
  const std::string path = temp_file("attnsim_validate_unrunnable.csv",
                                     std::string(kHeader) +
                                         "mi300x,MI300X,ck,ck,fwd,1,8,2,512,512,128,bf16,0,tflops,100,TFLOP/s,t\n"
                                         "mi300x,MI300X,a,aiter-v3,fwd,1,8,2,512,512,96,bf16,0,tflops,100,TFLOP/s,t\n"
                                         "mi300x,MI300X,a,aiter-v3,fwd,1,8,2,512,512,80,bf16,0,tflops,100,TFLOP/s,t\n");
  for (const char* threads : {"1", "2"}) {
    const Run v = run_attnsim("validate --approximate --threads " + std::string(threads) + " " + path);
    CAPTURE(v.out);
    CHECK(v.exit_code == 2);
    CHECK(attnsim::test::contains(v.out, "attnsim_validate_unrunnable.csv:3: "));
    CHECK(attnsim::test::contains(v.out, "head dimension 96"));
    CHECK(!attnsim::test::contains(v.out, "head dimension 80"));
  }
}

TEST_CASE("bad measurements name the file and line and column") {
  const auto bad = [](const std::string& row) {
    const std::string path = temp_file("attnsim_bad.csv", std::string(kHeader) + row + "\n");
    try {
      attnsim::report::read_measurements(path);
    } catch (const attnsim::arch::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(bad("mi300x,g,k,ck,fwd,1,8,2,512,512,128,bf16,0,tflops,fast,TFLOP/s,s").find("attnsim_bad.csv:2:15") != std::string::npos);
  CHECK(bad("mi300x,g,k,ck,fwd,1,8,2,512,512,128,bf16,0,watts,1,W,s").find("unknown metric") != std::string::npos);
  CHECK(bad("mi300x,g,k,ck,sideways,1,8,2,512,512,128,bf16,0,tflops,1,x,s").find("fwd, bwd or both") != std::string::npos);
  CHECK(bad("mi300x,g,k,ck,fwd,0,8,2,512,512,128,bf16,0,tflops,1,x,s").find("batch") != std::string::npos);
  // An optional layout column: bshd or bhsd, else an error naming its line and column.
  const std::string with_layout = temp_file(
      "attnsim_bad_layout.csv",
      "arch,preset,layout,direction,batch,heads_q,heads_kv,seqlen_q,seqlen_k,head_dim,dtype,causal,metric,measured\n"
      "mi300x,ck,bhsd,fwd,1,8,2,512,512,128,bf16,0,tflops,1\n"
      "mi300x,ck,,fwd,1,8,2,512,512,128,bf16,0,tflops,1\n"
      "mi300x,ck,sbhd,fwd,1,8,2,512,512,128,bf16,0,tflops,1\n");
  std::string layout_error = "no error";
  try {
    attnsim::report::read_measurements(with_layout);
  } catch (const attnsim::arch::ConfigError& e) {
    layout_error = e.what();
  }
  CHECK(layout_error.find("attnsim_bad_layout.csv:4:3") != std::string::npos);
  CHECK(layout_error.find("bshd or bhsd") != std::string::npos);
  const std::string good = temp_file(
      "attnsim_good_layout.csv",
      "arch,preset,layout,direction,batch,heads_q,heads_kv,seqlen_q,seqlen_k,head_dim,dtype,causal,metric,measured\n"
      "mi300x,ck,bhsd,fwd,1,8,2,512,512,128,bf16,0,tflops,1\n"
      "mi300x,ck,,fwd,1,8,2,512,512,128,bf16,0,tflops,1\n");
  const auto laid_out = attnsim::report::read_measurements(good);
  REQUIRE(laid_out.size() == 2);
  CHECK(laid_out[0].point.problem.layout == attnsim::workloads::Layout::bhsd);
  CHECK(laid_out[1].point.problem.layout == attnsim::workloads::Layout::bshd);
  CHECK(run_attnsim("validate /nonexistent.csv").exit_code == 2);
}

// ROCm/aiter PR #1270 on MI300X (validation/measurements/mi300x_aiter_v3.csv): the issue's bound
// is 10 % per case with the modelled clock. The N=1024 cases run here; docs/validation.md records
// all twelve (the longer ones take minutes).
TEST_CASE("aiter v3 on MI300X at N=1024: forward and backward within 10 percent of the published TFLOP/s") {
  const auto cases = attnsim::report::read_measurements(std::string(ATTNSIM_SOURCE_DIR) +
                                                        "/validation/measurements/mi300x_aiter_v3.csv");
  std::size_t checked = 0;
  for (const auto& c : cases) {
    if (c.point.problem.seqlen_q != 1024) continue;
    const auto report = attnsim::report::simulate_point(c.point);
    const double error = attnsim::report::predicted(report, c.metric) / c.measured - 1;
    CAPTURE(c.label());
    CHECK(std::abs(error) < 0.10);
    ++checked;
  }
  CHECK(checked == 4);
}

TEST_CASE("a persistent kernel is named in the report and its JSON") {
  const char* fa3 = "--arch h100 --kernel fa3 --direction both --batch 1 --heads 8:2 --seqlen 512 --causal";
  const Run j = run_attnsim(std::string("run --json ") + fa3);
  REQUIRE(j.exit_code == 0);
  const auto kernels = nlohmann::json::parse(j.out)["kernels"];
  REQUIRE(kernels.size() > 1);
  for (const auto& k : kernels) {
    CAPTURE(k["name"].get<std::string>());
    CHECK(k["persistent"] == (k["name"] == "fwd"));  // FA3's forward only (FA-SCHED B4)
  }
  const Run text = run_attnsim(std::string("run ") + fa3);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("persistent: fwd (") != std::string::npos);
  const Run ck = run_attnsim(std::string("run ") + kSmall);
  REQUIRE(ck.exit_code == 0);
  CHECK(ck.out.find("persistent:") == std::string::npos);
}

// attnsim_gpu: runs the validation kernels on random inputs, checks every output against the CPU
// reference, times them with events and appends measurement rows for `attnsim validate`; or turns
// a profiler's CSV of one run into rows (--profile-csv). Built by hipcc (AMD) or nvcc (NVIDIA) from
// this one source. Exit codes in harness_core.h and validation/README.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../kernels/attention_kernels.h"
#include "../kernels/cpu_reference.h"
#include "../kernels/dispatch_probe.h"
#include "../kernels/l1_probe.h"
#include "../kernels/matrix_rate_probe.h"
#include "../kernels/memory_probe.h"
#include "../kernels/placement_probe.h"
#include "../kernels/power_probe.h"
#include "harness_core.h"
#include "power_probe_core.h"

namespace {

using namespace attn;

#if defined(ATTN_GPU_AMD)
const char* kPreset = "ref-hip";
const char* kVendorName = "AMD";
const char* kMmaName = "v_mfma_f32_16x16x16_bf16";
#else
const char* kPreset = "ref-cuda";
const char* kVendorName = "NVIDIA";
const char* kMmaName = "2 mma.sync.m16n8k16 (bf16, fp32 accumulate)";
#endif

struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define GPU_CHECK(x)                                                                                       \
  do {                                                                                                     \
    const gpuError_t e_ = (x);                                                                             \
    if (e_ != gpuSuccess) throw GpuError(std::string(#x) + ": " + gpuGetErrorString(e_));                 \
  } while (0)

// A device allocation of n elements of T, freed on scope exit.
template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(std::size_t count) : n(count) { GPU_CHECK(gpuMalloc(reinterpret_cast<void**>(&ptr), std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~DeviceArray() { (void)gpuFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  // Copies `h` into the first h.size() elements (all of them but for the L1 probe's chains).
  void upload(const std::vector<T>& h) {
    if (h.size() > n) throw std::length_error("DeviceArray::upload: more elements than the array holds");
    GPU_CHECK(gpuMemcpy(ptr, h.data(), h.size() * sizeof(T), gpuMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> h(n);
    GPU_CHECK(gpuMemcpy(h.data(), ptr, n * sizeof(T), gpuMemcpyDeviceToHost));
    return h;
  }
};

// Every tensor of one call on the device, with random inputs.
struct Problem {
  HostInputs host;
  std::size_t q_elems, kv_elems, rows;
  DeviceArray<std::uint16_t> q, k, v, o, d_o, dq, dk, dv;
  DeviceArray<float> lse, delta, dq_acc;
  explicit Problem(const Shape& s)
      : q_elems(static_cast<std::size_t>(s.batch) * s.seqlen_q * s.heads_q * s.head_dim),
        kv_elems(static_cast<std::size_t>(s.batch) * s.seqlen_k * s.heads_kv * s.head_dim),
        rows(static_cast<std::size_t>(s.batch) * s.heads_q * s.seqlen_q),
        q(q_elems), k(kv_elems), v(kv_elems), o(q_elems), d_o(q_elems), dq(q_elems), dk(kv_elems), dv(kv_elems),
        lse(rows), delta(rows), dq_acc(q_elems) {
    host.shape = s;
    host.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    host.q.resize(q_elems);
    host.k.resize(kv_elems);
    host.v.resize(kv_elems);
    host.d_o.resize(q_elems);
    fill_random(host.q, 1);
    fill_random(host.k, 2);
    fill_random(host.v, 3);
    fill_random(host.d_o, 4);
    q.upload(host.q);
    k.upload(host.k);
    v.upload(host.v);
    d_o.upload(host.d_o);
  }
  Tensors tensors() const {
    Tensors t;
    t.q = q.ptr;
    t.k = k.ptr;
    t.v = v.ptr;
    t.o = o.ptr;
    t.d_o = d_o.ptr;
    t.out = o.ptr;
    t.dq = dq.ptr;
    t.dk = dk.ptr;
    t.dv = dv.ptr;
    t.lse = lse.ptr;
    t.lse_in = lse.ptr;
    t.delta = delta.ptr;
    t.dq_acc = dq_acc.ptr;
    t.shape = host.shape;
    t.scale = host.scale;
    return t;
  }
};

template <class Kernel>
void allow_lds(Kernel kernel, int bytes) {
#if defined(ATTN_GPU_NVIDIA)
  GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
#else
  (void)kernel;
  (void)bytes;
#endif
}

template <int D>
void launch_forward(const Tensors& t) {
  const Shape& s = t.shape;
  allow_lds(attention_fwd<D>, fwd_lds_bytes(D));
  const dim3 grid(ceil_div(s.seqlen_q, kFwdBlockM), s.heads_q, s.batch);
  attention_fwd<D><<<grid, kWaves * kWaveLanes, fwd_lds_bytes(D)>>>(t);
  GPU_CHECK(gpuGetLastError());
}

// The backward pass as attnsim models it: dQ accumulator zeroed, preprocess, main, convert.
template <int D>
void launch_backward(const Problem& p, const Tensors& t) {
  const Shape& s = t.shape;
  attention_bwd_zero_dq_acc<<<ceil_div(static_cast<int>(p.rows), kConvertRows), 256>>>(t);
  GPU_CHECK(gpuGetLastError());
  attention_bwd_preprocess<<<ceil_div(static_cast<int>(p.rows), kPreprocessRows), kPreprocessRows>>>(t);
  GPU_CHECK(gpuGetLastError());
  allow_lds(attention_bwd<D>, bwd_lds_bytes(D));
  const dim3 grid(ceil_div(s.seqlen_k, kBwdBlockN), s.heads_q, s.batch);
  attention_bwd<D><<<grid, kWaves * kWaveLanes, bwd_lds_bytes(D)>>>(t);
  GPU_CHECK(gpuGetLastError());
  attention_bwd_convert<<<ceil_div(static_cast<int>(p.rows), kConvertRows), 256>>>(t);
  GPU_CHECK(gpuGetLastError());
}

void run(const Problem& p, const std::string& direction) {
  const Tensors t = p.tensors();
  const bool d64 = t.shape.head_dim == 64;
  if (direction != "bwd") d64 ? launch_forward<64>(t) : launch_forward<128>(t);
  if (direction != "fwd") d64 ? launch_backward<64>(p, t) : launch_backward<128>(p, t);
}

// Rows to check: all of them for small problems, else a spread including the first and last.
std::vector<int> sample(int n, int count) {
  std::vector<int> out;
  if (n <= count) {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (int k = 0; k < count; ++k) out.push_back(static_cast<int>(static_cast<long long>(k) * (n - 1) / (count - 1)));
  return out;
}

// Compares the outputs of `direction` with the CPU reference (every row when `rows_each` covers
// them). Returns the worst relative row error and reports each output's.
double check(const Problem& p, const std::string& direction, int rows_each) {
  const Shape& s = p.host.shape;
  run(p, direction == "bwd" ? "both" : direction);  // the backward needs the forward's O and LSE
  GPU_CHECK(gpuDeviceSynchronize());
  const auto o = p.o.download();
  const auto lse = p.lse.download();
  double worst = 0;
  const auto report = [&](const char* what, double err) {
    std::fprintf(stderr, "  check %-4s max relative row error %.2e\n", what, err);
    worst = std::max(worst, err);
  };
  const int b = s.batch - 1, h = s.heads_q - 1;  // the last (batch, head): every offset term non-zero
  std::vector<double> ref;
  double ref_lse = 0, err_o = 0, err_lse = 0;
  for (int i : sample(s.seqlen_q, rows_each)) {
    reference_forward_row(p.host, b, h, i, ref, ref_lse);
    err_o = std::max(err_o, row_error(ref, [&](std::size_t d) { return from_bf16(o[q_offset(s, b, i, h, static_cast<int>(d))]); }));
    const double got = lse[row_offset(s, b, h, i)];
    if (std::isinf(ref_lse) || std::isinf(got)) {
      err_lse = std::max(err_lse, ref_lse == got ? 0.0 : 1.0);
    } else {
      err_lse = std::max(err_lse, std::abs(got - ref_lse) / std::max(1.0, std::abs(ref_lse)));
    }
  }
  report("O", err_o);
  report("LSE", err_lse);
  if (direction == "fwd") return worst;
  const auto dq = p.dq.download();
  const auto dk = p.dk.download();
  const auto dv = p.dv.download();
  const auto delta = p.delta.download();
  // The head's LSE and delta as the GPU computed them (checked above and here) drive dQ, dK, dV.
  std::vector<double> head_lse(s.seqlen_q), head_delta(s.seqlen_q);
  double err_delta = 0;
  for (int i = 0; i < s.seqlen_q; ++i) {
    head_lse[i] = lse[row_offset(s, b, h, i)];
    head_delta[i] = delta[row_offset(s, b, h, i)];
  }
  std::vector<double> ref_dq, ref_dk, ref_dv;
  double err_dq = 0, err_dk = 0, err_dv = 0;
  for (int i : sample(s.seqlen_q, rows_each)) {
    double want = 0;
    for (int d = 0; d < s.head_dim; ++d) want += from_bf16(p.host.d_o[q_offset(s, b, i, h, d)]) * from_bf16(o[q_offset(s, b, i, h, d)]);
    err_delta = std::max(err_delta, std::abs(want - head_delta[i]) / std::max(1.0, std::abs(want)));
    reference_dq_row(p.host, b, h, i, head_lse[i], head_delta[i], ref_dq);
    err_dq = std::max(err_dq, row_error(ref_dq, [&](std::size_t d) { return from_bf16(dq[q_offset(s, b, i, h, static_cast<int>(d))]); }));
  }
  for (int j : sample(s.seqlen_k, rows_each)) {
    reference_dkdv_row(p.host, b, h, j, head_lse, head_delta, ref_dk, ref_dv);
    err_dk = std::max(err_dk, row_error(ref_dk, [&](std::size_t d) { return from_bf16(dk[kv_offset(s, b, j, h, static_cast<int>(d))]); }));
    err_dv = std::max(err_dv, row_error(ref_dv, [&](std::size_t d) { return from_bf16(dv[kv_offset(s, b, j, h, static_cast<int>(d))]); }));
  }
  report("dlt", err_delta);
  report("dQ", err_dq);
  report("dK", err_dk);
  report("dV", err_dv);
  return worst;
}

std::string device_name() {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  std::string name = prop.name;
#if defined(ATTN_GPU_AMD)
  name += std::string(" (") + prop.gcnArchName + ")";
#endif
  return name;
}

std::string conditions(const Options& o, const std::string& gpu) {
  int runtime = 0, driver = 0, clock_khz = 0;
#if defined(ATTN_GPU_AMD)
  (void)hipRuntimeGetVersion(&runtime);
  (void)hipDriverGetVersion(&driver);
  (void)hipDeviceGetAttribute(&clock_khz, hipDeviceAttributeClockRate, 0);
#else
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
#endif
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string c = gpu + "; " + kRuntimeName + " runtime " + std::to_string(runtime) + ", driver " + std::to_string(driver) +
                  "; max engine clock " + std::to_string(clock_khz / 1000) + " MHz (clock not locked); " + date +
                  "; mean of " + std::to_string(o.reps) + " runs after " + std::to_string(o.warmup) + " warm-up";
  if (!o.conditions.empty()) c += "; " + o.conditions;
  return c;
}

void emit(const Options& o, const std::string& rows) {
  if (o.csv.empty()) {
    std::cout << kMeasurementsHeader << rows;
    return;
  }
  std::ifstream probe(o.csv);
  const bool fresh = !probe.good() || probe.peek() == std::ifstream::traits_type::eof();
  probe.close();
  std::ofstream out(o.csv, std::ios::app);
  if (!out) throw BadInput(o.csv + ": cannot be written");
  if (fresh) out << kMeasurementsHeader;
  out << rows;
}

// The milliseconds between events recorded before and after `launch()` (on the default stream),
// once the second has completed.
template <class Launch>
float elapsed_ms(Launch&& launch) {
  gpuEvent_t start, stop;
  GPU_CHECK(gpuEventCreate(&start));
  GPU_CHECK(gpuEventCreate(&stop));
  GPU_CHECK(gpuEventRecord(start, 0));
  launch();
  GPU_CHECK(gpuEventRecord(stop, 0));
  GPU_CHECK(gpuEventSynchronize(stop));
  float ms = 0;
  GPU_CHECK(gpuEventElapsedTime(&ms, start, stop));
  (void)gpuEventDestroy(start);
  (void)gpuEventDestroy(stop);
  return ms;
}

// Calls `launch()` (kernel launches on the default stream) and waits for the GPU to finish them,
// throwing on a launch or execution error.
template <class Launch>
void launch_and_wait(Launch&& launch) {
  launch();
  GPU_CHECK(gpuGetLastError());
  GPU_CHECK(gpuDeviceSynchronize());
}

// The mean milliseconds of `reps` calls of `launch()` timed together, after `warmup` untimed ones.
template <class Launch>
double mean_launch_ms(Launch&& launch, int warmup, int reps) {
  launch_and_wait([&] {
    for (int i = 0; i < warmup; ++i) launch();
  });
  const float ms = elapsed_ms([&] {
    for (int i = 0; i < reps; ++i) launch();
  });
  GPU_CHECK(gpuGetLastError());
  return static_cast<double>(ms) / reps;
}

// The dispatch probe (kernels/dispatch_probe.h): 64 rounds of the GPU's compute units with 8
// workgroups of 256 threads each, every eighth id spinning 8 times as long. Prints the largest
// run-ahead and what it says about attnsim's dispatch.order. The first workgroups start together
// and take their tickets in no set order, so in-order dispatch still reads up to about one resident
// set (an H200 read 0.37 of one, 2026-12-04); on an MI300X whose XCDs run ahead, the fast XCDs start
// their 64th round when the slow one has started its 8th: by hand about (64 x 8 - 64 x 7 - 8) x 304
// = 56 x 304 ids, 7 resident sets of 2432 (16 rounds gave 1.75, too close to the jitter to tell).
int run_dispatch_probe(const std::string& gpu) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  constexpr std::uint32_t kModulus = 8, kPerUnit = 8, kRounds = 64, kThreads = 256;
  const std::uint32_t units = static_cast<std::uint32_t>(prop.multiProcessorCount);
  const std::uint32_t workgroups = units * kPerUnit * kRounds;
  DeviceArray<std::uint32_t> counter(1), tickets(workgroups);
  counter.upload(std::vector<std::uint32_t>{0});
  constexpr long long kShort = 20000, kLong = 8 * kShort;  // clock64 ticks
  launch_and_wait([&] { dispatch_probe_kernel<<<workgroups, kThreads>>>(counter.ptr, tickets.ptr, kShort, kLong, kModulus); });
  const std::vector<std::uint32_t> ticket = tickets.download();
  check_tickets(ticket);
  const std::int64_t ahead = largest_run_ahead(ticket);
  const std::uint64_t resident = static_cast<std::uint64_t>(units) * kPerUnit;
  std::printf("dispatch probe on %s: %u workgroups of %u threads, %u compute units; every %uth id spins %dx longer.\n"
              "largest run-ahead: %lld ids (%.2f of the %llu workgroups that fit at once).\n"
              "read: at most about one resident set (the first workgroups take their tickets in no set order) "
              "means workgroups start in id order (attnsim: dispatch.order = \"round_robin_blocking\"); several "
              "(an MI300X by hand: about 7) means XCDs run ahead of each other (\"round_robin\", the shipped "
              "default).\n",
              gpu.c_str(), workgroups, kThreads, units, kModulus, static_cast<int>(kLong / kShort), static_cast<long long>(ahead),
              static_cast<double>(ahead) / static_cast<double>(resident), static_cast<unsigned long long>(resident));
  return kExitOk;
}

// The matrix rate probe (kernels/matrix_rate_probe.h): one workgroup of kRateWaves waves per compute
// unit, each wave kRateChains independent chains of mma(). Prints the matrix FLOPs per clock per
// compute unit (from the workgroups' own cycle counts, so whatever clock they ran at) beside the
// peak attnsim's config gives the fastest matrix instruction of the GPU; then one wave's chain of
// dependent mma(): the cycles per mma(), its result latency.
int run_matrix_rate_probe(const std::string& gpu) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  const auto units = static_cast<std::uint32_t>(prop.multiProcessorCount);
  constexpr int kIterations = 20000;
  constexpr unsigned kThreads = kRateWaves * kWaveLanes;
  DeviceArray<float> sink(units);
  DeviceArray<long long> cycles(units);
  // A warm-up: clocks up, code loaded.
  launch_and_wait([&] { matrix_rate_kernel<kRateChains><<<units, kThreads>>>(sink.ptr, cycles.ptr, kIterations / 10); });
  const float ms = elapsed_ms([&] { matrix_rate_kernel<kRateChains><<<units, kThreads>>>(sink.ptr, cycles.ptr, kIterations); });
  GPU_CHECK(gpuGetLastError());
  const long long median = median_cycles(cycles.download());
  const double per_clock = matrix_flop_per_clock(kRateWaves, kRateChains, kIterations, kFlopPerMma, median);
  const double flops = static_cast<double>(units) * kRateWaves * kRateChains * kIterations * kFlopPerMma;
  std::printf("matrix rate probe on %s: %u compute units x %d waves, %d independent chains of %d x %s each.\n"
              "%.0f matrix FLOP per clock per compute unit (median workgroup: %lld cycles); %.1f TFLOP/s over "
              "the launch (%.3f ms), a clock of about %.0f MHz.\n"
              "read: attnsim's configs give the fastest matrix instruction's peak (H100/H200 wgmma 4096 FLOP "
              "per clock per SM; MI300X bf16 MFMA 2048 per CU) and this instruction's cycles "
              "(cu.matrix.instructions: H100/H200 mma.sync.m16n8k16 at 6 cycles per sub-partition = 2731 per "
              "SM, measured on an H200, docs/sources.md H200-PROBE).\n",
              gpu.c_str(), units, kRateWaves, kRateChains, kIterations, kMmaName, per_clock, median, flops / (ms * 1e-3) / 1e12,
              static_cast<double>(ms), static_cast<double>(median) / (ms * 1e3));
  // The latency: one wave on one compute unit, one chain, each mma() waiting for the one before.
  DeviceArray<long long> chain_cycles(1);
  for (const int iterations : {kIterations / 10, kIterations}) {  // a warm-up, then the measured chain
    launch_and_wait([&] { matrix_rate_kernel<1><<<1, kWaveLanes>>>(sink.ptr, chain_cycles.ptr, iterations); });
  }
  const long long chain = chain_cycles.download()[0];
  std::printf("dependent chain: one wave, %d mma() each waiting for the last: %.2f cycles per mma() (its latency; on NVIDIA "
              "the two mma.sync of an mma() are independent, so one mma.sync's latency)\n",
              kIterations, static_cast<double>(chain) / kIterations);
  return kExitOk;
}

// The workgroups of `threads` threads the whole GPU holds at once (at least one per compute unit).
unsigned full_occupancy_workgroups(const gpuDeviceProp& prop, unsigned threads) {
  return static_cast<unsigned>(prop.multiProcessorCount) *
         std::max(1u, static_cast<unsigned>(prop.maxThreadsPerMultiProcessor) / threads);
}

// The memory probe (kernels/memory_probe.h): stream read, write and copy of a 1 GiB buffer (beyond
// every cache: the HBM) and 64 read passes over a 16 MiB one (held by the L2: an H200's 50 MB, an
// MI300X's eight 4 MB, each holding its XCD's 2 MiB; 4 MiB gave each thread one word a pass, and a
// pass's fixed work and one load's latency held an H200 to 2.8 TB/s), each launch the GPU's
// full occupancy of 256-thread workgroups, timed over 10 launches after 2 warm-ups. Prints the
// bandwidths beside the `attnsim micro` command that simulates each.
int run_memory_probe(const std::string& gpu, const std::string& arch) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  constexpr unsigned kThreads = 256;
  const unsigned blocks = full_occupancy_workgroups(prop, kThreads);
  constexpr std::uint64_t kHbmBytes = 1ull << 30, kL2Bytes = 16ull << 20;
  constexpr int kReps = 10, kWarmup = 2;
  DeviceArray<Word16> src(kHbmBytes / sizeof(Word16)), dst(kHbmBytes / sizeof(Word16));
  DeviceArray<std::uint32_t> sink(1);
  GPU_CHECK(gpuMemset(src.ptr, 0, kHbmBytes));
  GPU_CHECK(gpuMemset(dst.ptr, 0, kHbmBytes));
  std::printf("memory probe on %s: %u workgroups of %u threads, %d x 16-byte words per thread and step; mean of %d launches "
              "after %d warm-up\n",
              gpu.c_str(), blocks, kThreads, kProbeWordsPerStep, kReps, kWarmup);
  struct Case {
    StreamPattern kind;
    const char* pattern;  // attnsim micro's name of it
    const char* level;
    std::uint64_t bytes;
    int passes;
  };
  const Case hbm_read{StreamPattern::read, "stream-read", "hbm", kHbmBytes, 1}, l2_read{StreamPattern::read, "stream-read", "l2", kL2Bytes, 64};
  const Case cases[] = {hbm_read, {StreamPattern::write, "stream-write", "hbm", kHbmBytes, 1},
                        {StreamPattern::copy, "copy", "hbm", kHbmBytes, 1}, l2_read};
  // The mean milliseconds of a launch of case `c` by `grid` workgroups of `threads` threads.
  const auto time_case = [&](const Case& c, unsigned grid, unsigned threads) {
    const std::size_t words = c.bytes / sizeof(Word16);
    return mean_launch_ms(
        [&] {
          switch (c.kind) {
            case StreamPattern::read:
              memory_probe_kernel<StreamPattern::read><<<grid, threads>>>(src.ptr, dst.ptr, words, c.passes, sink.ptr);
              break;
            case StreamPattern::write:
              memory_probe_kernel<StreamPattern::write><<<grid, threads>>>(src.ptr, dst.ptr, words, c.passes, sink.ptr);
              break;
            case StreamPattern::copy:
              memory_probe_kernel<StreamPattern::copy><<<grid, threads>>>(src.ptr, dst.ptr, words, c.passes, sink.ptr);
              break;
          }
        },
        kWarmup, kReps);
  };
  for (const Case& c : cases) {
    const double ms = time_case(c, blocks, kThreads);
    const double bw = stream_bandwidth(c.bytes, c.passes, c.kind == StreamPattern::copy, ms);
    std::printf("%-12s %-3s %6llu MiB x %3d passes: %7.3f TB/s (%.3f ms per launch)   attnsim micro --arch %s --pattern %s "
                "--level %s --footprint %lluMiB\n",
                c.pattern, c.level, static_cast<unsigned long long>(c.bytes >> 20), c.passes, bw / 1e12,
                ms, arch.empty() ? "?" : arch.c_str(), c.pattern, c.level,
                static_cast<unsigned long long>(c.bytes >> 20));
  }
  // The read streams against the requests each unit can have outstanding: k workgroups of 64
  // threads per unit, each thread four 16-byte words at once, ask for at most 32 k lines of 128 B.
  std::printf("in-flight sweep: stream-read by k workgroups of 64 threads per unit (at most 32 k lines of 128 B in flight "
              "per unit; attnsim micro ... --inflight 32k)\n");
  constexpr unsigned kSweepThreads = 64;
  for (const unsigned k : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u, 24u, 32u}) {
    const unsigned sweep_blocks = static_cast<unsigned>(prop.multiProcessorCount) * k;
    double bw[2] = {0, 0};
    for (int level = 0; level < 2; ++level) {
      const Case& c = level == 0 ? hbm_read : l2_read;
      bw[level] = stream_bandwidth(c.bytes, c.passes, false, time_case(c, sweep_blocks, kSweepThreads));
    }
    std::printf("  k %2u  lines %4u  hbm (1024 MiB) %7.3f TB/s  l2 (16 MiB) %7.3f TB/s\n", k, 32 * k, bw[0] / 1e12, bw[1] / 1e12);
  }
  return kExitOk;
}

// The L2 probe (kernels/memory_probe.h's kernels): read streams of 16 passes over sets of 8 to 64
// MiB (an H200's 50 MB L2 is two partitions of about 25: a set read by every SM in turn is held
// twice below 25 MB, and beyond it either the copies or the lines themselves give way), and one
// pass of writes over 8 to 48 MiB (how much of a fresh write the L2 keeps dirty). Three launches
// after one warm-up each. Run under ncu with its cache control (profile_detail.sh), each launch
// starts cold and its dram__bytes and lts__t_sectors_srcunit_ltcfabric say what was evicted and what
// crossed between the partitions.
int run_l2_probe(const std::string& gpu, const std::string& arch) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  constexpr unsigned kThreads = 256;
  const unsigned blocks = full_occupancy_workgroups(prop, kThreads);
  constexpr std::uint64_t kMaxBytes = 64ull << 20;
  constexpr int kReps = 3, kWarmup = 1, kReadPasses = 16;
  DeviceArray<Word16> src(kMaxBytes / sizeof(Word16)), dst(kMaxBytes / sizeof(Word16));
  DeviceArray<std::uint32_t> sink(1);
  GPU_CHECK(gpuMemset(src.ptr, 0, kMaxBytes));
  std::printf("L2 probe on %s: %u workgroups of %u threads; mean of %d launches after %d warm-up\n", gpu.c_str(), blocks,
              kThreads, kReps, kWarmup);
  for (const std::uint64_t mib : {8ull, 16ull, 20ull, 24ull, 28ull, 32ull, 40ull, 48ull, 64ull}) {
    const std::size_t words = (mib << 20) / sizeof(Word16);
    const double ms = mean_launch_ms(
        [&] { memory_probe_kernel<StreamPattern::read><<<blocks, kThreads>>>(src.ptr, dst.ptr, words, kReadPasses, sink.ptr); },
        kWarmup, kReps);
    std::printf("stream-read  %3llu MiB x %d passes: %7.3f TB/s   attnsim micro --arch %s --pattern stream-read --level l2 "
                "--footprint %lluMiB\n",
                static_cast<unsigned long long>(mib), kReadPasses, stream_bandwidth(mib << 20, kReadPasses, false, ms) / 1e12,
                arch.empty() ? "?" : arch.c_str(), static_cast<unsigned long long>(mib));
  }
  for (const std::uint64_t mib : {8ull, 16ull, 24ull, 32ull, 40ull, 48ull}) {
    const std::size_t words = (mib << 20) / sizeof(Word16);
    const double ms = mean_launch_ms(
        [&] { memory_probe_kernel<StreamPattern::write><<<blocks, kThreads>>>(src.ptr, dst.ptr, words, 1, sink.ptr); },
        kWarmup, kReps);
    std::printf("write once   %3llu MiB: %.3f ms per launch\n", static_cast<unsigned long long>(mib), ms);
  }
  return kExitOk;
}

// The L1 probe (kernels/l1_probe.h): one thread chases cycles of lines through the L1 of one compute
// unit. Per stride, chains of 2 to 2048 lines spanning at most 8 MiB: the largest count the L1 still
// serves is the ways of one set where the stride maps every line to it (a modulo index at strides
// that are multiples of sets x line), more where a hash spreads them; beside no shared memory and
// beside 195 KiB of it (on NVIDIA the ways a carve-out leaves, if it takes ways). Then chains of
// 8-256 KiB in a row (128 B apart): the capacity, beside the same two (on NVIDIA, 195 KiB gets the
// d = 128 forward's carve-out of 196 KB; attnsim models the L1 as what the carve-out leaves of the
// 256 KiB array).
int run_l1_probe(const std::string& gpu) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
#if defined(ATTN_GPU_NVIDIA)
  const std::size_t lds_limit = prop.sharedMemPerBlockOptin;
#else
  const std::size_t lds_limit = prop.sharedMemPerBlock;
#endif
  constexpr std::uint32_t kLaps = 4;                  // laps of the cycle per pass (at least 256 steps)
  constexpr std::uint64_t kSpan = std::uint64_t{8} << 20;  // the most bytes a chain spans
  const std::vector<std::uint32_t> strides{256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
  const std::vector<std::uint32_t> rows{64, 128, 192, 224, 256, 384, 448, 480, 512, 768, 1024, 1536, 1792, 2048};
  DeviceArray<std::uint32_t> chain(kSpan / 4), sink(1);
  DeviceArray<unsigned long long> cycles(1);
  allow_lds(l1_chase_kernel, static_cast<int>(lds_limit));
  // Clocks per step of a chase of `count` lines `stride` apart beside `lds` bytes of shared memory.
  const auto chase = [&](std::uint32_t count, std::uint32_t stride, std::size_t lds) {
    chain.upload(l1_chase_chain(count, stride));
    const std::uint32_t steps = std::max<std::uint32_t>(256, kLaps * count);
    launch_and_wait([&] { l1_chase_kernel<<<1, kWaveLanes, lds>>>(chain.ptr, 0, steps, cycles.ptr, sink.ptr); });
    return static_cast<double>(cycles.download()[0]) / steps;
  };
  // Chases of each of `ns` lines, printed as count:clocks; returns the largest count the L1 held.
  const auto sweep = [&](const std::vector<std::uint32_t>& ns, std::uint32_t stride, std::size_t lds) {
    std::vector<double> clocks;
    for (const std::uint32_t n : ns) {
      clocks.push_back(chase(n, stride, lds));
      std::printf(" %u:%.0f", n, clocks.back());
    }
    return largest_l1_held(ns, clocks);
  };
  std::printf("L1 probe on %s: one thread chases a cycle of lines; clocks per step of the second lap\n", gpu.c_str());
  for (const std::size_t lds : {std::size_t{0}, std::size_t{195} << 10}) {
    if (lds > lds_limit) {
      std::printf("beside %zu B of shared memory: skipped (the limit per workgroup is %zu B)\n", lds, lds_limit);
      continue;
    }
    for (const std::uint32_t stride : strides) {
      std::printf("beside %6zu B of shared memory, stride %5u B:", lds, stride);
      std::printf("  -> L1 held up to %u lines\n", sweep(l1_probe_counts(stride, kSpan), stride, lds));
    }
    std::printf("capacity beside %6zu B of shared memory, lines 128 B apart:", lds);
    const std::uint32_t held = sweep(rows, 128, lds);
    std::printf("  -> L1 held up to %u lines (%u KiB)\n", held, held / 8);
  }
  std::printf("read: attnsim's H100/H200 L1 has 4 sets, modulo-indexed (ACCEL-SIM), and the ways its carve-out leaves: at "
              "strides of 512 B and more every line falls in one set, which holds a quarter of the L1 (about 496 lines "
              "beside no shared memory, 120 beside 195 KiB); the capacity is what the carve-out leaves (248-256 and 60 "
              "KiB here).\n");
  return kExitOk;
}

// The placement probe (kernels/placement_probe.h): four waves of 128-thread workgroups that each ask
// for `lds` bytes of dynamic LDS (so as many fit per compute unit as with a kernel of that size:
// 58112 is the d=128 forward's), each spinning about 100 us so that the first wave starts together.
// Prints how many fit, the summary of the first wave's placement and the units of its first ids.
int run_placement_probe(const std::string& gpu, int lds) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  constexpr unsigned kThreads = 128;
  allow_lds(placement_probe_kernel, lds);
  int per_unit = 0;
  GPU_CHECK(gpuOccupancyMaxActiveBlocksPerMultiprocessor(&per_unit, placement_probe_kernel, kThreads, static_cast<std::size_t>(lds)));
  if (per_unit < 1) throw BadInput("--placement-probe: " + std::to_string(lds) + " bytes of LDS leave no room for a workgroup");
  const auto units = static_cast<std::uint32_t>(prop.multiProcessorCount);
  const std::uint32_t first_wave = units * static_cast<std::uint32_t>(per_unit), workgroups = 4 * first_wave;
  DeviceArray<std::uint32_t> unit(workgroups);
  DeviceArray<unsigned long long> started(workgroups);
  constexpr long long kSpin = 200000;  // clock64 ticks: about 100 us at 2 GHz
  launch_and_wait([&] { placement_probe_kernel<<<workgroups, kThreads, static_cast<std::size_t>(lds)>>>(unit.ptr, started.ptr, kSpin); });
  const std::vector<std::uint32_t> u = unit.download();
  const std::vector<unsigned long long> t = started.download();
  const PlacementSummary p = placement_summary(u, first_wave);
  // How far apart the first wave started, and when the second did (NVIDIA: ns; AMD: the 100 MHz counter's ticks).
  const auto [first, last] = std::minmax_element(t.begin(), t.begin() + first_wave);
  const unsigned long long second = *std::min_element(t.begin() + first_wave, t.end());
  std::printf("placement probe on %s: %u workgroups of %u threads with %d bytes of LDS each, %d per compute unit "
              "(%u at once on %u units).\n"
              "first wave: %.3f of consecutive id pairs on the same unit; most common id stride on a unit %llu; "
              "started within %llu timer ticks, the next id %llu ticks after the first (%s).\n"
              "units of ids 0-63:",
              gpu.c_str(), workgroups, kThreads, lds, per_unit, first_wave, units, p.neighbour_share,
              static_cast<unsigned long long>(p.common_stride), *last - *first, second - *first,
              kVendor == Vendor::nvidia ? "ns" : "100 MHz ticks");
  for (std::uint32_t i = 0; i < std::min<std::uint32_t>(64, workgroups); ++i) std::printf(" %u", u[i]);
  std::printf("\nread: attnsim gives a one-die GPU's workgroups to the unit with the most room (share 0, stride = "
              "the unit count); a share near (k - 1) / k and stride 1 means k consecutive ids per unit.\n");
  return kExitOk;
}

// Milliseconds since the Unix epoch (the sampler's clock: power_probe.sh stamps its samples so).
long long unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Calls `launch()` back to back, each waited for, for `seconds`: phase `name`, whose rate is
// `work_per_launch` `unit` per launch over the phase's duration.
template <class Launch>
PowerPhase sustain(const std::string& name, int seconds, double work_per_launch, const char* unit, Launch&& launch) {
  PowerPhase p;
  p.name = name;
  p.unit = unit;
  p.start_ms = unix_ms();
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (elapsed() < seconds) {
    launch_and_wait(launch);
    ++p.launches;
  }
  p.end_ms = unix_ms();
  p.rate = work_per_launch * static_cast<double>(p.launches) / elapsed();
  return p;
}

// The iterations that make one launch of `launch_with(iterations)` last about 25 ms, from a timed
// launch of `trial` iterations (after a warm-up one), at least `trial`.
template <class LaunchWith>
int iterations_for_25ms(LaunchWith&& launch_with, int trial) {
  launch_and_wait([&] { launch_with(trial); });
  const float ms = elapsed_ms([&] { launch_with(trial); });
  GPU_CHECK(gpuGetLastError());
  const double scaled = trial * 25.0 / std::max(static_cast<double>(ms), 1e-3);
  return static_cast<int>(std::clamp(scaled, static_cast<double>(trial), 2e9));
}

// The power probe (kernels/power_probe.h with the matrix rate and memory probes' kernels): phases
// of `seconds` each of no work, matrix work (mma() chains, kRateWaves waves per unit), FP32 FMAs and
// exponentials (full occupancy of 256-thread workgroups) and an HBM read stream (1 GiB, 64 passes a
// launch), each printed as a power-phase line (power_probe_core.h) for the sampler's log to be
// joined with (--power-join). It changes no GPU setting.
int run_power_probe(const std::string& gpu, int seconds) {
  gpuDeviceProp prop;
  GPU_CHECK(gpuGetDeviceProperties(&prop, 0));
  const auto units = static_cast<unsigned>(prop.multiProcessorCount);
  constexpr unsigned kThreads = 256;
  const unsigned blocks = full_occupancy_workgroups(prop, kThreads);
  std::printf("power probe on %s: %d s per phase; %u compute units; vector phases %u workgroups of %u threads x %d chains\n",
              gpu.c_str(), seconds, units, blocks, kThreads, kPowerChains);
  std::vector<PowerPhase> phases;
  {
    PowerPhase idle;
    idle.name = "idle";
    idle.start_ms = unix_ms();
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    idle.end_ms = unix_ms();
    phases.push_back(idle);
  }
  DeviceArray<float> sink(std::max(units, blocks));
  DeviceArray<long long> cycles(units);
  const auto matrix = [&](int it) { matrix_rate_kernel<kRateChains><<<units, kRateWaves * kWaveLanes>>>(sink.ptr, cycles.ptr, it); };
  const int matrix_it = iterations_for_25ms(matrix, 1000);
  phases.push_back(sustain("matrix", seconds, static_cast<double>(units) * kRateWaves * kRateChains * matrix_it * kFlopPerMma, "FLOP/s",
                           [&] { matrix(matrix_it); }));
  const auto fma = [&](int it) { vector_power_kernel<false><<<blocks, kThreads>>>(sink.ptr, it); };
  const int fma_it = iterations_for_25ms(fma, 1000);
  phases.push_back(sustain("fma", seconds, 2.0 * blocks * kThreads * kPowerChains * fma_it, "FLOP/s", [&] { fma(fma_it); }));
  const auto exps = [&](int it) { vector_power_kernel<true><<<blocks, kThreads>>>(sink.ptr, it); };
  const int exp_it = iterations_for_25ms(exps, 1000);
  phases.push_back(sustain("exp", seconds, 1.0 * blocks * kThreads * kPowerChains * exp_it, "exp/s", [&] { exps(exp_it); }));
  {
    constexpr std::uint64_t kBytes = 1ull << 30;
    constexpr int kPasses = 64;
    DeviceArray<Word16> src(kBytes / sizeof(Word16)), dst(1);
    DeviceArray<std::uint32_t> word_sink(1);
    GPU_CHECK(gpuMemset(src.ptr, 0, kBytes));
    phases.push_back(sustain("hbm_read", seconds, static_cast<double>(kBytes) * kPasses, "B/s", [&] {
      memory_probe_kernel<StreamPattern::read><<<blocks, kThreads>>>(src.ptr, dst.ptr, kBytes / sizeof(Word16), kPasses, word_sink.ptr);
    }));
  }
  for (const PowerPhase& p : phases) std::printf("%s\n", power_phase_line(p).c_str());
  std::printf("read: join with a clock and power sampler's log (attnsim_gpu --power-join, as validation/scripts/power_probe.sh "
              "does): each phase's clock at its power is a point of attnsim's clock model (clock.power.*, docs/model.md).\n");
  return kExitOk;
}

// --power-join: each phase of a power probe's output (o.power_phases) with the median clock and
// power of the sampler's lines (o.power_samples) taken in it, as CSV rows. Needs no GPU.
int run_power_join(const Options& o) {
  std::ifstream probe(o.power_phases), samples_in(o.power_samples);
  if (!probe) throw BadInput(o.power_phases + ": cannot be read");
  if (!samples_in) throw BadInput(o.power_samples + ": cannot be read");
  std::vector<PowerPhase> phases;
  std::string gpu, line;
  for (int n = 1; std::getline(probe, line); ++n) {
    if (line.rfind("power probe on ", 0) == 0) gpu = line.substr(15, line.find(':') - 15);
    if (auto p = parse_power_phase(line, o.power_phases + ":" + std::to_string(n))) phases.push_back(*p);
  }
  if (phases.empty()) throw BadInput(o.power_phases + ": no power-phase line (the output of attnsim_gpu --power-probe)");
  std::vector<PowerSample> samples;
  for (int n = 1; std::getline(samples_in, line); ++n) {
    if (!line.empty()) samples.push_back(parse_power_sample(line, o.power_samples + ":" + std::to_string(n)));
  }
  const std::string rows = power_csv_rows(summarize_power(phases, samples, 1000), gpu, o.conditions);
  if (o.csv.empty()) {
    std::fputs(kPowerCsvHeader, stdout);
    std::fputs(rows.c_str(), stdout);
    return kExitOk;
  }
  std::ofstream out(o.csv);
  if (!out) throw BadInput(o.csv + ": cannot be written");
  out << kPowerCsvHeader << rows;
  return kExitOk;
}

int main_checked(const Options& o) {
  if (!o.power_phases.empty()) return run_power_join(o);
  int devices = 0;
  if (gpuGetDeviceCount(&devices) != gpuSuccess || devices == 0) {
    std::fprintf(stderr,
                 "attnsim_gpu: no GPU found: this build runs on %s GPUs through %s (build the %s version for the "
                 "other vendor)\n",
                 kVendorName, kRuntimeName, kPreset == std::string("ref-hip") ? "CUDA" : "HIP");
    return kExitNoGpu;
  }
  const std::string gpu = device_name();
  const std::string arch = arch_of(gpu);
  if (arch.empty()) std::fprintf(stderr, "attnsim_gpu: warning: no attnsim config models '%s'; the arch column is empty\n", gpu.c_str());
  if (o.dispatch_probe) return run_dispatch_probe(gpu);
  if (o.matrix_rate_probe) return run_matrix_rate_probe(gpu);
  if (o.memory_probe) return run_memory_probe(gpu, arch);
  if (o.l2_probe) return run_l2_probe(gpu, arch);
  if (o.l1_probe) return run_l1_probe(gpu);
  if (o.placement_probe_lds >= 0) return run_placement_probe(gpu, o.placement_probe_lds);
  if (o.power_probe_seconds > 0) return run_power_probe(gpu, o.power_probe_seconds);
  const std::string cond = conditions(o, gpu);
  std::string rows;
  if (!o.profile_csvs.empty()) {
    ProfileSums sums;
    for (const auto& path : o.profile_csvs) add_profile_csv(path, kernel_prefix(o.direction), sums);
    // Nsight Compute flushes and invalidates the caches before each kernel it profiles unless run
    // with --cache-control none (run_suite.sh passes all): attnsim validate simulates such rows so.
    std::string seen = cond + "; counters by " + sums.tool + (sums.tool == "ncu" ? " (cache control all)" : "");
    if (const double hz = sums.mean("sm__cycles_elapsed.avg.per_second"); hz > 0) {
      seen += "; SM clock seen " + std::to_string(static_cast<int>(hz / 1e6 + 0.5)) + " MHz (ncu, mean over the kernels)";
    }
    for (const auto& m : metrics_from_profile(sums)) {
      rows += measurement_row(arch, gpu, kPreset, o.shape, o.direction, m.metric, m.value, m.unit, o.source + " (profiler)", seen);
    }
    if (rows.empty()) throw BadInput(o.profile_csvs.front() + ": none of the known counters (validation/README.md) is in it");
    emit(o, rows);
    return kExitOk;
  }
  if (o.check) {
    // Every output of a small problem of the same kind (a ragged sequence length), then sampled
    // rows of the measured one: nothing is recorded from kernels that compute wrong results.
    Shape small = o.shape;
    small.batch = 1;
    small.heads_q = 2;
    small.heads_kv = o.shape.heads_q == o.shape.heads_kv ? 2 : 1;
    small.seqlen_q = std::min(o.shape.seqlen_q, 300);
    small.seqlen_k = small.seqlen_q + (o.shape.seqlen_k - o.shape.seqlen_q > 0 ? 37 : 0);
    std::fprintf(stderr, "checking every row of B=1 H=%d:%d N=%d:%d against the CPU reference\n", small.heads_q, small.heads_kv,
                 small.seqlen_q, small.seqlen_k);
    const double small_err = check(Problem(small), o.direction, small.seqlen_k);
    std::fprintf(stderr, "checking sampled rows of the measured problem\n");
    Problem full(o.shape);
    const double err = std::max(small_err, check(full, o.direction, 24));
    if (!(err <= 3e-2)) {
      std::fprintf(stderr, "attnsim_gpu: results differ from the CPU reference (worst relative row error %.3g > 3e-2); nothing recorded\n", err);
      return kExitMismatch;
    }
  }
  Problem p(o.shape);
  if (o.direction == "bwd") run(p, "fwd");  // the backward's inputs O and LSE
  const double us = 1e3 * mean_launch_ms([&] { run(p, o.direction); }, o.warmup, o.reps);
  rows += measurement_row(arch, gpu, kPreset, o.shape, o.direction, "time_us", us, "us", o.source, cond);
  rows += measurement_row(arch, gpu, kPreset, o.shape, o.direction, "tflops", fa_flops(o.shape, o.direction) / (us * 1e-6) / 1e12,
                          "TFLOP/s", o.source, cond);
  emit(o, rows);
  std::fprintf(stderr, "%s %s: %.1f us per run\n", o.direction.c_str(), gpu.c_str(), us);
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::fputs(attn::kUsage, stdout);
    return attn::kExitOk;
  }
  try {
    const Options o = attn::parse_options(args);
    return main_checked(o);
  } catch (const attn::BadInput& e) {
    std::fprintf(stderr, "attnsim_gpu: %s\n", e.what());
    return attn::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnsim_gpu: error: %s\n", e.what());
    return attn::kExitInternal;
  }
}

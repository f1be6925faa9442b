#include "sweep/sweep_mpi.h"

#include <cstdint>
#include <limits>
#include <optional>

#include <mpi.h>

#include "arch/config_error.h"
#include "sweep/progress.h"

namespace attnsim::sweep {

namespace {

constexpr int kTagWork = 1;    // rank 0 -> worker: a point index, or kNoMoreWork
constexpr int kTagRecord = 2;  // worker -> rank 0: a record, or "" when asking for the first point
constexpr std::uint64_t kNoMoreWork = std::numeric_limits<std::uint64_t>::max();

void send_text(const std::string& s, int to) {
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, to, kTagRecord, MPI_COMM_WORLD);
}

std::string receive_text(int& from) {
  MPI_Status st;
  MPI_Probe(MPI_ANY_SOURCE, kTagRecord, MPI_COMM_WORLD, &st);
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  std::string s(static_cast<std::size_t>(n), '\0');
  MPI_Recv(s.data(), n, MPI_CHAR, st.MPI_SOURCE, kTagRecord, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  from = st.MPI_SOURCE;
  return s;
}

// Rank 0 with workers: hands out the plan's points and saves what comes back.
SweepSummary coordinate(const SweepPlan& plan, const ResultStore& store, int ranks, std::ostream& log, bool tty) {
  Progress progress(log, plan.todo.size(), tty);
  SweepSummary s = plan.summary;
  std::size_t next = 0;
  int active = ranks - 1;
  while (active > 0) {
    int from = 0;
    const std::string text = receive_text(from);
    if (!text.empty()) {
      const PointRecord r = ordered_json::parse(text);
      store.save(r);
      const bool failed = r["status"] != "ok";
      (failed ? s.failed : s.ok) += 1;
      ++s.simulated;
      progress.done(failed);
    }
    std::uint64_t index = kNoMoreWork;
    if (next < plan.todo.size()) index = plan.todo[next++];
    else --active;
    MPI_Send(&index, 1, MPI_UINT64_T, from, kTagWork, MPI_COMM_WORLD);
  }
  progress.finish();
  return s;
}

void work(const SweepSpec& spec) {
  std::vector<std::string> errors;
  const std::vector<SweepPoint> points = expand(spec, &errors);
  send_text("", 0);
  for (;;) {
    std::uint64_t index = 0;
    MPI_Recv(&index, 1, MPI_UINT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index == kNoMoreWork) return;
    send_text(run_point(points.at(index), errors.at(index)).dump(), 0);
  }
}

}  // namespace

int run_sweep_mpi(const std::string& spec_path, const std::filesystem::path& dir, bool retry_failed, std::ostream& log,
                  bool tty) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // Rank 0 reads the spec and plans; the others learn whether that worked before they ask for work.
  std::optional<SweepSpec> spec;
  std::optional<ResultStore> store;
  SweepPlan plan;
  int ok = 1;
  try {
    spec = load_sweep_file(spec_path);
    if (rank == 0) {
      store.emplace(dir);
      plan = plan_sweep(*spec, *store, Shard{}, retry_failed);
    }
  } catch (const arch::ConfigError& e) {
    if (rank == 0) log << e.what() << "\n";
    ok = 0;
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    MPI_Finalize();
    return arch::kExitBadInput;
  }
  if (rank == 0) {
    SweepSummary s;
    if (ranks == 1) {
      SweepOptions o;
      o.threads = 1;
      o.log = &log;
      o.tty = tty;
      s = run_plan(plan, *store, o);
    } else {
      s = coordinate(plan, *store, ranks, log, tty);
      s.rows = store->write_results(plan.manifest);
    }
    log << summary_text(s, dir.string());
  } else {
    work(*spec);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace attnsim::sweep

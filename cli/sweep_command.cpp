#include "cli/sweep_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>

#include <unistd.h>

#include "arch/config_error.h"
#include "sweep/html_report.h"
#include "sweep/merge.h"
#include "sweep/sweep_runner.h"
#ifdef ATTNSIM_HAVE_MPI
#include "sweep/sweep_mpi.h"
#endif

namespace attnsim::cli {
namespace {

struct SweepState {
  std::string spec;
  std::string out;
  unsigned threads = 0;
  std::string shard;
  bool retry_failed = false;
  bool mpi = false;
  bool quiet = false;
  bool list = false;
  std::vector<std::string> merge_dirs;
  std::string merge_out;
  std::string report_dir;
  std::string report_out;
};

// Prints every point (index, id, parameters, or why it cannot be built) without simulating.
void list_points(const std::string& spec_path) {
  const sweep::SweepSpec spec = sweep::load_sweep_file(spec_path);
  std::vector<std::string> errors;
  const auto points = sweep::expand(spec, &errors);
  std::size_t distinct = 0;
  std::set<std::string> seen;
  for (const auto& p : points) {
    if (seen.insert(p.id).second) ++distinct;
    std::cout << p.index << " " << p.id << " " << p.params.dump();
    if (!errors[p.index].empty()) std::cout << "  invalid: " << errors[p.index];
    std::cout << "\n";
  }
  std::cout << points.size() << " points, " << distinct << " distinct\n";
}

void run(const SweepState& st, int& exit_code) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  if (st.mpi) {
#ifdef ATTNSIM_HAVE_MPI
    if (!st.shard.empty()) {
      throw arch::ConfigError(arch::ValueOrigin{"--mpi", 0, 0, {}}, "shard", "--shard and --mpi exclude each other");
    }
    exit_code = sweep::run_sweep_mpi(st.spec, st.out, st.retry_failed, std::cerr, tty);
    return;
#else
    throw arch::ConfigError(arch::ValueOrigin{"--mpi", 0, 0, {}}, "mpi",
                            "this attnsim was built without MPI (install libopenmpi-dev and reconfigure)");
#endif
  }
  sweep::SweepOptions o;
  o.threads = st.threads;
  o.retry_failed = st.retry_failed;
  if (!st.shard.empty()) {
    o.shard = sweep::parse_shard(st.shard);
  } else if (const auto s = sweep::shard_from_slurm([](const char* name) { return std::getenv(name); })) {
    o.shard = *s;
  }
  o.log = st.quiet ? nullptr : &std::cerr;
  o.tty = tty;
  const sweep::SweepSpec spec = sweep::load_sweep_file(st.spec);
  const sweep::ResultStore store(st.out);
  const sweep::SweepSummary s = sweep::run_sweep(spec, store, o);
  std::cerr << sweep::summary_text(s, st.out);
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto st = std::make_shared<SweepState>();
  CLI::App* c = app.add_subcommand("sweep", "Simulate every point of a sweep spec in parallel; merge shards; HTML report");
  c->add_option("spec", st->spec, "sweep spec (TOML; docs/sweeps.md)")->check(CLI::ExistingFile);
  c->add_option("-o,--out", st->out, "results directory (created; re-running on it resumes)");
  c->add_option("--threads", st->threads, "worker threads (default: every core)");
  c->add_option("--shard", st->shard, "run shard I of N (I/N, 0-based); default from SLURM_ARRAY_TASK_ID/COUNT");
  c->add_flag("--retry-failed", st->retry_failed, "simulate recorded failures again");
  c->add_flag("--mpi", st->mpi, "ranks of an MPI job share the points (mpirun -np N attnsim sweep ... --mpi)");
  c->add_flag("-q,--quiet", st->quiet, "no progress lines (the summary is still printed)");
  c->add_flag("--list", st->list, "print every point (index, id, parameters) and their count; simulate nothing");
  c->footer(
      "Examples:\n"
      "  attnsim sweep configs/sweeps/mi300x_lds_blocks.toml -o lds          every core of this machine\n"
      "  attnsim sweep spec.toml --list                                      the points, without simulating\n"
      "  attnsim sweep spec.toml -o out --shard 3/16                         one shard of a job array\n"
      "  mpirun -np 64 attnsim sweep spec.toml -o out --mpi                  MPI ranks\n"
      "  attnsim sweep merge shard0 shard1 -o all                             merge shard directories\n"
      "  attnsim sweep report lds                                            lds/report.html\n"
      "A killed sweep re-run on the same directory resumes: recorded points are not simulated again.");

  CLI::App* merge = c->add_subcommand("merge", "Merge the results directories of a sweep's shards");
  merge->add_option("dirs", st->merge_dirs, "shard directories")->required();
  merge->add_option("-o,--out", st->merge_out, "merged directory")->required();
  merge->callback([st] {
    std::vector<std::filesystem::path> dirs(st->merge_dirs.begin(), st->merge_dirs.end());
    const sweep::MergeSummary s = sweep::merge_sweeps(dirs, st->merge_out);
    std::cerr << "sweep merge: " << s.points << " points, " << s.rows << " rows with a record, " << s.missing
              << " distinct points missing; results in " << st->merge_out << "/results.csv\n";
  });

  CLI::App* report = c->add_subcommand("report", "Write the sweep's HTML report (inline SVG, no network)");
  report->add_option("dir", st->report_dir, "results directory")->required();
  report->add_option("-o,--out", st->report_out, "HTML file (default DIR/report.html)");
  report->callback([st] {
    const std::filesystem::path out = st->report_out.empty() ? std::filesystem::path(st->report_dir) / "report.html"
                                                             : std::filesystem::path(st->report_out);
    sweep::write_sweep_report(st->report_dir, out);
    std::cerr << "sweep report: " << out.string() << "\n";
  });

  c->callback([c, st, &exit_code] {
    if (!c->get_subcommands().empty()) return;
    if (st->spec.empty()) throw CLI::RequiredError("spec (or a subcommand: merge, report)");
    if (st->list) return list_points(st->spec);
    if (st->out.empty()) throw CLI::RequiredError("-o,--out");
    run(*st, exit_code);
  });
}

}  // namespace attnsim::cli

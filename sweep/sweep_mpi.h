// Running a sweep across the ranks of an MPI job (Open MPI): rank 0 hands out points one at a time
// to the ranks that ask, saves their records and writes the results; the resume rules of the
// threaded run apply. Built only with ATTNSIM_WITH_MPI.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "sweep/sweep_runner.h"

namespace attnsim::sweep {

// Initialises and finalises MPI itself. Every rank reads the spec; rank 0 alone writes to `dir`
// and prints to `log`. With one rank, rank 0 runs every point. Returns the exit code (0, or 2 for
// invalid input, reported on rank 0), the same on every rank.
int run_sweep_mpi(const std::string& spec_path, const std::filesystem::path& dir, bool retry_failed, std::ostream& log,
                  bool tty);

}  // namespace attnsim::sweep

// Progress of a sweep on stderr: a bar with rate and ETA on a terminal, plain periodic lines
// otherwise (logs of batch jobs).
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>

namespace attnsim::sweep {

// Thread-safe. Contract: `done` calls never exceed `total`; finish() prints the last state once.
class Progress {
 public:
  // `tty`: redraw one line in place; otherwise print a line at most every `interval`.
  Progress(std::ostream& out, std::size_t total, bool tty,
           std::chrono::steady_clock::duration interval = std::chrono::seconds(10));
  void done(bool failed);
  void finish();

 private:
  void print(bool final);
  std::ostream& out_;
  std::size_t total_;
  bool tty_;
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point start_, last_;
  std::size_t done_ = 0, failed_ = 0;
  std::mutex mutex_;
};

}  // namespace attnsim::sweep

#include "sweep/progress.h"

#include <cstdio>
#include <string>

namespace attnsim::sweep {

namespace {

std::string duration_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

}  // namespace

Progress::Progress(std::ostream& out, std::size_t total, bool tty, std::chrono::steady_clock::duration interval)
    : out_(out), total_(total), tty_(tty), interval_(interval), start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::done(bool failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  if (failed) ++failed_;
  const auto now = std::chrono::steady_clock::now();
  if (tty_ || now - last_ >= interval_) {
    last_ = now;
    print(false);
  }
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  print(true);
}

void Progress::print(bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0;
  char figures[160];
  std::snprintf(figures, sizeof figures, "%zu/%zu points (%zu failed)  %.2f points/s  elapsed %s  ETA %s", done_, total_,
                failed_, rate, duration_text(elapsed).c_str(), duration_text(eta).c_str());
  if (tty_) {
    constexpr std::size_t width = 30;
    const std::size_t filled = total_ ? width * done_ / total_ : width;
    out_ << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << figures << "\x1b[K";
    if (final) out_ << "\n";
  } else {
    out_ << "sweep: " << figures << "\n";
  }
  out_.flush();
}

}  // namespace attnsim::sweep

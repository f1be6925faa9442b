// Runs the attnsim binary for end-to-end tests: its exit code and output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <doctest/doctest.h>

namespace attnsim::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
};

// Runs attnsim with the given arguments (shell-quoted by the caller); `merge_stderr` folds
// stderr into out.
inline CliRun run_attnsim(const std::string& args, bool merge_stderr = true) {
  const std::string cmd = std::string(ATTNSIM_BINARY) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace attnsim::test

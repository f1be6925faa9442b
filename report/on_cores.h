// Independent jobs run on the machine's cores: the one policy `attnsim sweep` and `validate` share.
#pragma once

#include <cstddef>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace attnsim::report {

// Calls f(i) once for every i in [0, n), on `threads` cores (0: every core), each index a task of
// its own (jobs of very different lengths balance). Contract: f must be safe to call concurrently
// for different indices; the order of the calls is unspecified, so f writes only its index's slot.
template <class F>
void for_each_on_cores(std::size_t n, unsigned threads, F&& f) {
  tbb::task_arena arena(threads ? static_cast<int>(threads) : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, n, 1),
        [&](const tbb::blocked_range<std::size_t>& range) {
          for (std::size_t i = range.begin(); i != range.end(); ++i) f(i);
        },
        tbb::simple_partitioner());
  });
}

}  // namespace attnsim::report

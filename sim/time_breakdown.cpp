#include "sim/time_breakdown.h"

namespace attnsim::sim {

std::string_view to_string(WaitCause c) {
  switch (c) {
    case WaitCause::vector: return "vector";
    case WaitCause::lds: return "lds";
    case WaitCause::l2: return "l2";
    case WaitCause::fabric: return "fabric";
    case WaitCause::hbm: return "hbm";
    case WaitCause::latency: return "latency";
    case WaitCause::sync: return "sync";
    case WaitCause::issue: return "issue";
    case WaitCause::count: break;
  }
  return "?";
}

}  // namespace attnsim::sim

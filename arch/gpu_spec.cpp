#include "arch/gpu_spec.h"

namespace attnsim::arch {

std::string_view to_string(Dtype d) {
  switch (d) {
    case Dtype::bf16: return "bf16";
    case Dtype::fp16: return "fp16";
    case Dtype::fp8: return "fp8";
  }
  return "?";
}

std::optional<Dtype> parse_dtype(std::string_view text) {
  for (const Dtype d : kDtypes) {
    if (to_string(d) == text) return d;
  }
  return std::nullopt;
}

std::string_view to_string(Vendor v) { return v == Vendor::amd ? "amd" : "nvidia"; }
std::string_view to_string(L2Scope s) { return s == L2Scope::per_xcd ? "per_xcd" : "shared"; }
std::string_view to_string(WritePolicy p) { return p == WritePolicy::write_back ? "write_back" : "write_through"; }
std::string_view to_string(DispatchOrder o) { return o == DispatchOrder::round_robin ? "round_robin" : "round_robin_blocking"; }
std::string_view to_string(SetIndex i) { return i == SetIndex::modulo ? "modulo" : "hashed"; }
std::string_view to_string(AtomicSite a) { return a == AtomicSite::memory_side ? "memory_side" : "l2"; }
std::string_view to_string(L2KernelEnd e) { return e == L2KernelEnd::write_back ? "write_back" : "keep"; }

}  // namespace attnsim::arch

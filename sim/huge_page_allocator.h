// A std::allocator for large, randomly probed state (cache tags): blocks of 2 MiB or more are
// aligned to 2 MiB and offered to the kernel as transparent huge pages, so a probe costs no TLB
// miss. Only speed depends on it; contents and behaviour are those of std::allocator.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attnsim::sim {

// Contract: as std::allocator<T>; stateless, every instance equal.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    void* p = nullptr;
    if (bytes >= kHugePage) {
      p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
      if (p) madvise(p, bytes, MADV_HUGEPAGE);  // a hint: failure leaves ordinary pages
#endif
    } else if (alignof(T) > alignof(std::max_align_t)) {
      p = std::aligned_alloc(alignof(T), (bytes + alignof(T) - 1) / alignof(T) * alignof(T));
    } else {
      p = std::malloc(bytes ? bytes : 1);
    }
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

}  // namespace attnsim::sim

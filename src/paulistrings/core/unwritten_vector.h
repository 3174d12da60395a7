#pragma once
// UnwrittenVector<T>: a std::vector whose new elements are not written when it is sized without a value
// (UnwrittenVector<T>(n), resize(n)). For large buffers that are then written in full before they are
// read — in parallel, so that each page's first touch (its fault and the kernel's zeroing) falls to the
// thread that fills it, instead of one thread zero-filling the whole buffer first (docs/design.md §4.1).
// Sized with a value (v(n, x), resize(n, x)), copied or assigned, it behaves as std::vector.
//
// T must be trivially copyable and trivially destructible (PauliString, double, std::complex<double>):
// such types' objects begin their lifetime in the storage the allocator returns, and an element read
// before it is written holds an unspecified value — reading one is the caller's bug.

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace paulistrings {

template <class T>
class UnwrittenAllocator : public std::allocator<T> {
 public:
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "UnwrittenAllocator holds trivially copyable, trivially destructible values only");
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UnwrittenAllocator<U>;
  };

  UnwrittenAllocator() noexcept = default;
  template <class U>
  UnwrittenAllocator(const UnwrittenAllocator<U>&) noexcept {}

  /// Sized without a value: the element's bytes are left as the allocation has them.
  template <class U>
  void construct(U*) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  friend bool operator==(const UnwrittenAllocator&, const UnwrittenAllocator<U>&) noexcept {
    return true;
  }
};

template <class T>
using UnwrittenVector = std::vector<T, UnwrittenAllocator<T>>;

}  // namespace paulistrings

#pragma once
/// unique_function<void()>: a move-only callable (C++23's move_only_function, for C++20), so a
/// mailbox message can own a promise or a unique_ptr. Small callables are stored inline.

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include <scenert/runtime/assert.hpp>

namespace scenert {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
  static constexpr std::size_t inline_size = 48;

  struct ops {
    R (*call)(void*, Args&&...);
    void (*move)(void* from, void* to) noexcept;  // move-constructs into `to`, destroys `from`
    void (*destroy)(void*) noexcept;
  };

  template <class F>
  static constexpr bool fits_inline =
      sizeof(F) <= inline_size &&
      alignof(F) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<F>;

  template <class F>
  static const ops* ops_for() {
    if constexpr (fits_inline<F>) {
      static constexpr ops o{
          [](void* p, Args&&... a) -> R { return (*static_cast<F*>(p))(std::forward<Args>(a)...); },
          [](void* from, void* to) noexcept {
            ::new (to) F(std::move(*static_cast<F*>(from)));
            static_cast<F*>(from)->~F();
          },
          [](void* p) noexcept { static_cast<F*>(p)->~F(); }};
      return &o;
    } else {
      static constexpr ops o{
          [](void* p, Args&&... a) -> R { return (**static_cast<F**>(p))(std::forward<Args>(a)...); },
          [](void* from, void* to) noexcept { ::new (to) F*(*static_cast<F**>(from)); },
          [](void* p) noexcept { delete *static_cast<F**>(p); }};
      return &o;
    }
  }

 public:
  unique_function() noexcept = default;
  unique_function(std::nullptr_t) noexcept {}  // NOLINT

  template <
      class F, class D = std::decay_t<F>,
      class = std::enable_if_t<!std::is_same_v<D, unique_function> && std::is_invocable_r_v<R, D&, Args...>>>
  unique_function(F&& f) {  // NOLINT: implicit like std::function
    if constexpr (fits_inline<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
    } else {
      ::new (static_cast<void*>(buf_)) D*(new D(std::forward<F>(f)));
    }
    ops_ = ops_for<D>();
  }

  unique_function(unique_function&& o) noexcept : ops_(o.ops_) {
    if (ops_) ops_->move(o.buf_, buf_), o.ops_ = nullptr;
  }
  unique_function& operator=(unique_function&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_) ops_->move(o.buf_, buf_), o.ops_ = nullptr;
    }
    return *this;
  }
  unique_function(const unique_function&) = delete;
  unique_function& operator=(const unique_function&) = delete;
  ~unique_function() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  R operator()(Args... a) {
    SCENERT_ASSERT(ops_ != nullptr, "call of an empty unique_function");
    return ops_->call(buf_, std::forward<Args>(a)...);
  }

 private:
  void reset() noexcept {
    if (ops_) ops_->destroy(buf_), ops_ = nullptr;
  }
  alignas(std::max_align_t) unsigned char buf_[inline_size];
  const ops* ops_ = nullptr;
};

}  // namespace scenert

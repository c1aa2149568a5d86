#pragma once
/// result<T, Code>: a value or an error (a code and a message), for expected failures.
/// C++20 stand-in for std::expected (g++ 12 has it only in C++23, clang 14 not at all).

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <scenert/runtime/assert.hpp>

namespace scenert {

/// An expected failure: a machine-readable code and a message for people.
template <class Code>
struct error {
  Code code{};
  std::string message;
};

/// Builds an error; `return fail(pool_errc::not_found, "...")` converts to any result<T, Code>.
template <class Code>
[[nodiscard]] error<Code> fail(Code code, std::string message) {
  return {code, std::move(message)};
}

template <class T, class Code>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::in_place_index<0>, std::move(value)) {}             // NOLINT: implicit by design
  result(scenert::error<Code> e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return (check_value(), std::get<0>(v_)); }
  const T& value() const& { return (check_value(), std::get<0>(v_)); }
  T&& value() && { return (check_value(), std::get<0>(std::move(v_))); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const scenert::error<Code>& error() const& {
    SCENERT_ASSERT(!has_value(), "result::error() on a value");
    return std::get<1>(v_);
  }
  [[nodiscard]] Code code() const { return has_value() ? Code{} : error().code; }

 private:
  void check_value() const { SCENERT_ASSERT(has_value(), "result::value() on an error"); }
  std::variant<T, scenert::error<Code>> v_;
};

/// result<void, Code>: success, or an error.
template <class Code>
class [[nodiscard]] result<void, Code> {
 public:
  result() = default;
  result(scenert::error<Code> e) : e_(std::move(e)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool has_value() const noexcept { return !e_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const { SCENERT_ASSERT(has_value(), "result::value() on an error"); }

  const scenert::error<Code>& error() const& {
    SCENERT_ASSERT(!has_value(), "result::error() on a value");
    return *e_;
  }
  [[nodiscard]] Code code() const { return has_value() ? Code{} : e_->code; }

 private:
  std::optional<scenert::error<Code>> e_;
};

}  // namespace scenert

#pragma once
/// Programmer-error checks. Expected failures are result values (result.hpp), never asserts.
/// SCENERT_ASSERT stays on in release builds unless SCENERT_DISABLE_ASSERTS is defined: the
/// checks are cheap and a broken invariant in a game server must stop loudly, not corrupt state.

namespace scenert::detail {
[[noreturn]] void assert_fail(const char* expr, const char* msg, const char* file, int line) noexcept;
}  // namespace scenert::detail

#if defined(SCENERT_DISABLE_ASSERTS)
#define SCENERT_ASSERT(cond, msg) ((void)sizeof((cond) ? 1 : 0))  // names its operands, runs nothing
#else
#define SCENERT_ASSERT(cond, msg) \
  ((cond) ? (void)0 : ::scenert::detail::assert_fail(#cond, msg, __FILE__, __LINE__))
#endif

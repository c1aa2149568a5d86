#include <scenert/runtime/result.hpp>
#include <scenert/runtime/unique_function.hpp>

#include <gtest/gtest.h>

#include <memory>

namespace scenert {
namespace {

enum class test_errc { ok = 0, bad };

result<int, test_errc> half(int x) {
  if (x % 2 != 0) return fail(test_errc::bad, "odd");
  return x / 2;
}

TEST(Result, CarriesAValueOrAnError) {
  auto good = half(4);
  ASSERT_TRUE(good);
  EXPECT_EQ(*good, 2);
  EXPECT_EQ(good.code(), test_errc::ok);
  auto bad = half(3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), test_errc::bad);
  EXPECT_EQ(bad.error().message, "odd");
}

TEST(Result, VoidResultIsOkByDefault) {
  result<void, test_errc> ok;
  EXPECT_TRUE(ok);
  result<void, test_errc> bad = fail(test_errc::bad, "no");
  EXPECT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "no");
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  auto bad = half(3);
  EXPECT_DEATH((void)bad.value(), "value\\(\\) on an error");
}

TEST(UniqueFunction, OwnsMoveOnlyCaptures) {
  auto p = std::make_unique<int>(7);
  int seen = 0;
  unique_function<void()> f = [p = std::move(p), &seen] { seen = *p; };
  unique_function<void()> g = std::move(f);
  EXPECT_FALSE(f);
  g();
  EXPECT_EQ(seen, 7);
}

TEST(UniqueFunction, StoresLargeCallablesOnTheHeap) {
  struct big {
    char pad[200] = {};
    int* out;
    void operator()() const { *out = 42; }
  };
  int out = 0;
  unique_function<void()> f = big{{}, &out};
  unique_function<void()> g;
  g = std::move(f);
  g();
  EXPECT_EQ(out, 42);
}

}  // namespace
}  // namespace scenert

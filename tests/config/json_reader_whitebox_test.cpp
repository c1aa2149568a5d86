#include "json_reader.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

namespace scenert::detail {
namespace {

// The textbook recursive definition, as an oracle for the row-by-row implementation.
std::size_t naive_distance(std::string_view a, std::string_view b) {
  if (a.empty()) return b.size();
  if (b.empty()) return a.size();
  const std::size_t same = a.back() == b.back() ? 0 : 1;
  const auto shorter = [](std::string_view s) { return s.substr(0, s.size() - 1); };
  return std::min({naive_distance(shorter(a), b) + 1, naive_distance(a, shorter(b)) + 1,
                   naive_distance(shorter(a), shorter(b)) + same});
}

TEST(JsonReader, EditDistanceMatchesTheRecursiveDefinition) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> length(0, 6), letter(0, 2);
  for (int i = 0; i < 2000; ++i) {
    std::string a(static_cast<std::size_t>(length(rng)), 'a'), b(static_cast<std::size_t>(length(rng)), 'a');
    for (auto& c : a) c = static_cast<char>('a' + letter(rng));
    for (auto& c : b) c = static_cast<char>('a' + letter(rng));
    ASSERT_EQ(edit_distance(a, b), naive_distance(a, b)) << a << " / " << b;
  }
}

TEST(JsonReader, SuggestsOnlyLikelyTypos) {
  constexpr std::array<std::string_view, 4> keys{"capacity", "hard_capacity", "max_lines", "min_lines"};
  EXPECT_EQ(suggest("capcity", keys), "capacity");
  EXPECT_EQ(suggest("Capacity", keys), "capacity");
  EXPECT_EQ(suggest("max_line", keys), "max_lines");
  EXPECT_EQ(suggest("hardcapacity", keys), "hard_capacity");
  EXPECT_FALSE(suggest("colour", keys).has_value());
  EXPECT_FALSE(suggest("", keys).has_value());
  EXPECT_FALSE(suggest(std::string(1000, 'c'), keys).has_value());
}

TEST(JsonReader, DescribesValuesShortly) {
  EXPECT_EQ(describe(json("ten")), "\"ten\"");
  EXPECT_EQ(describe(json::array()), "an array");
  EXPECT_EQ(describe(json::object()), "an object");
  EXPECT_EQ(describe(json(nullptr)), "null");
  EXPECT_EQ(describe(json(std::string(100, 'x'))).size(), 43u);
}

TEST(JsonReader, EscapesPointerTokens) {
  EXPECT_EQ(child_pointer("/scenes", std::size_t{3}), "/scenes/3");
  EXPECT_EQ(child_pointer("", "a/b~c"), "/a~1b~0c");
}

}  // namespace
}  // namespace scenert::detail

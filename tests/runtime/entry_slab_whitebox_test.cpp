#include "entry_slab.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

namespace {

using scenert::detail::entry_slab;
using scenert::detail::pool_entry;

TEST(EntrySlab, GivesAReleasedEntrysStorageBackAsAFreshEntry) {
  entry_slab slab;
  pool_entry* a = slab.make();
  a->seq = 42;
  a->hz = 10;
  a->on_removed = [] {};
  slab.release(a);
  pool_entry* b = slab.make();
  EXPECT_EQ(b, a);
  EXPECT_EQ(b->seq, 0u);
  EXPECT_EQ(b->hz, 0.0);
  EXPECT_FALSE(b->on_removed);
  EXPECT_EQ(b->home, nullptr);
  slab.release(b);
}

TEST(EntrySlab, HandsOutDistinctEntriesThatKeepTheirFieldsAcrossChunks) {
  entry_slab slab;
  std::vector<pool_entry*> made;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    made.push_back(slab.make());
    made.back()->seq = i;
  }
  EXPECT_EQ(std::set<pool_entry*>(made.begin(), made.end()).size(), made.size());
  for (std::uint64_t i = 0; i < made.size(); ++i) EXPECT_EQ(made[i]->seq, i);
  for (auto* e : made) slab.release(e);
  // Every entry made again comes from the storage already held.
  std::set<pool_entry*> before(made.begin(), made.end());
  for (auto& e : made) {
    e = slab.make();
    EXPECT_TRUE(before.count(e)) << "a new chunk was taken while freed entries were left";
  }
  for (auto* e : made) slab.release(e);
}

// The reason it exists: entries packed together, not one heap allocation each between the
// embedder's service objects.
TEST(EntrySlab, PacksEntriesMadeOneAfterAnother) {
  entry_slab slab;
  std::vector<pool_entry*> made;
  for (int i = 0; i < 64; ++i) made.push_back(slab.make());
  auto [lo, hi] = std::minmax_element(made.begin(), made.end(), std::less<>{});
  auto span = reinterpret_cast<std::uintptr_t>(*hi) - reinterpret_cast<std::uintptr_t>(*lo);
  EXPECT_EQ(span, 63 * sizeof(pool_entry));
  for (auto* e : made) slab.release(e);
}

TEST(EntrySlab, PoisonsAFreeEntryUnderAddressSanitizer) {
#if defined(__SANITIZE_ADDRESS__)
  entry_slab slab;
  pool_entry* e = slab.make();
  EXPECT_FALSE(__asan_address_is_poisoned(&e->seq));
  slab.release(e);
  EXPECT_TRUE(__asan_address_is_poisoned(&e->seq));  // a stale read would be reported
  EXPECT_EQ(slab.make(), e);
  EXPECT_FALSE(__asan_address_is_poisoned(&e->seq));
  slab.release(e);
#else
  GTEST_SKIP() << "an AddressSanitizer build checks this";
#endif
}

}  // namespace

#include <scenert/bots/verify.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <scenert/net/http_server.hpp>

#include <scenert/bots/admin_client.hpp>

namespace scenert::bots {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// ---- parse_line_document -----------------------------------------------------------------------

json geometry_json(std::uint32_t w, std::uint32_t h) {
  return {{"width", w},      {"height", h},      {"cell_size", 1.0}, {"origin_x", 0.0}, {"origin_z", 0.0},
          {"area_width", 4}, {"area_height", 4}, {"eyesight_x", 1},  {"eyesight_y", 1}};
}

json town_line_json() {
  return {{"scene", 3},
          {"line", 1},
          {"name", "Town"},
          {"kind", "town"},
          {"geometry", geometry_json(16, 12)},
          {"players", {{{"id", 12}, {"x", 5}, {"y", 7}}, {{"id", 40}, {"x", 0}, {"y", 11}}}},
          {"monsters", {{{"id", 100}, {"x", 3}, {"y", 4}}}},
          {"phases",
           {{{"phase", 2},
             {"space", 7},
             {"geometry", geometry_json(8, 8)},
             {"players", {{{"id", 13}, {"x", 1}, {"y", 2}}}}}}}};
}

TEST(LineDocument, ParsesALineAndItsPhases) {
  auto views = parse_line_document(town_line_json().dump());
  ASSERT_TRUE(views) << views.error().message;
  ASSERT_EQ(views->size(), 2u);
  const true_view& line = (*views)[0];
  EXPECT_EQ(line.scene, 3u);
  EXPECT_EQ(line.line, 1u);
  EXPECT_EQ(line.phase, 0u);
  EXPECT_EQ(line.geometry.width, 16u);
  EXPECT_EQ(line.geometry.area_height, 4u);
  ASSERT_EQ(line.players.size(), 2u);  // monsters are not players
  EXPECT_EQ(line.players[1].pid, 40);
  EXPECT_EQ(line.players[1].y, 11u);
  const true_view& phase = (*views)[1];
  EXPECT_EQ(phase.scene, 3u);
  EXPECT_EQ(phase.line, 1u);
  EXPECT_EQ(phase.phase, 2u);
  EXPECT_EQ(phase.geometry.width, 8u);
  ASSERT_EQ(phase.players.size(), 1u);
  EXPECT_EQ(phase.players[0].pid, 13);
}

TEST(LineDocument, TakesALineWithoutPhases) {
  json doc = town_line_json();
  doc.erase("phases");
  auto views = parse_line_document(doc.dump());
  ASSERT_TRUE(views) << views.error().message;
  EXPECT_EQ(views->size(), 1u);
}

TEST(LineDocument, NamesThePathAndReasonOfABadField) {
  struct bad_case {
    std::string pointer;
    json value;  // null: remove the field
    std::string error;
  };
  const std::vector<bad_case> cases = {
      {"/players/1/x", -1, "/players/1/x: not an unsigned integer"},
      {"/players/1/x", 2.5, "/players/1/x: not an unsigned integer"},
      {"/players/1/x", 16, "/players/1/x: 16 is off the map (width 16)"},
      {"/players/0/id", "12", "/players/0/id: not an integer"},
      {"/players/0/id", 3'000'000'000u, "/players/0/id: out of range"},
      {"/players/0", 5, "/players/0: not an object"},
      {"/players", json::object(), "/players: not an array"},
      {"/players", nullptr, "/players: missing"},
      {"/scene", nullptr, "/scene: missing"},
      {"/scene", 5'000'000'000u, "/scene: out of range"},
      {"/geometry", nullptr, "/geometry: missing"},
      {"/geometry/area_width", nullptr, "/geometry/area_width: missing"},
      {"/geometry/area_width", 0, "/geometry/area_width: must be at least 1"},
      {"/geometry/cell_size", 0, "/geometry/cell_size: must be above 0"},
      {"/geometry/origin_x", "0", "/geometry/origin_x: not a number"},
      {"/phases", 1, "/phases: not an array"},
      {"/phases/0/phase", 0, "/phases/0/phase: 0 is the line itself"},
      {"/phases/0/space", nullptr, "/phases/0/space: missing"},
      {"/phases/0/geometry", 3, "/phases/0/geometry: not an object"},
      {"/phases/0/players/0/y", 8, "/phases/0/players/0/y: 8 is off the map (height 8)"},
      {"/phases/0/players/0/id", 12, "/phases/0/players/0/id: player 12 twice"},
  };
  for (const auto& c : cases) {
    json doc = town_line_json();
    const json::json_pointer at(c.pointer);
    if (c.value.is_null())
      doc[at.parent_pointer()].erase(at.back());
    else
      doc[at] = c.value;
    auto views = parse_line_document(doc.dump());
    ASSERT_FALSE(views) << c.pointer;
    EXPECT_EQ(views.error().message, c.error);
  }
  EXPECT_EQ(parse_line_document("{\"scene\":").error().message, "/: not valid JSON");
  EXPECT_EQ(parse_line_document("[]").error().message, "/: not an object");
}

TEST(LineDocument, RefusesAPhaseTwice) {
  json doc = town_line_json();
  json again = doc["phases"][0];
  again["players"] = json::array();
  doc["phases"].push_back(again);
  EXPECT_EQ(parse_line_document(doc.dump()).error().message, "/phases/1/phase: phase 2 twice");
}

// ---- compare_views: by hand --------------------------------------------------------------------

// Where a bot stands or sees a player standing on cell (x, y): the cell's centre, in world units.
seen_player at_cell(const view_geometry& g, std::int32_t pid, std::int64_t x, std::int64_t y) {
  return {pid, static_cast<float>(g.origin_x + (static_cast<double>(x) + 0.5) * g.cell_size),
          static_cast<float>(g.origin_z + (static_cast<double>(y) + 0.5) * g.cell_size)};
}

bot_view bot_at(const true_view& v, std::int32_t pid, std::int64_t x, std::int64_t y) {
  const seen_player p = at_cell(v.geometry, pid, x, y);
  return {pid, v.scene, v.line, v.phase, p.x, p.z, {}};
}

TEST(CompareViews, CountsAHandBuiltCaseExactly) {
  view_geometry g{10, 10, 2.0, 100.0, -50.0, 2, 2, 1, 1};
  // Areas: 1 at (1,1), 2 at (2,2), 3 at (3,1), 4 at (0,0); 1 sees 2 and 4, 2 sees 1 and 3.
  true_view line{3, 1, 0, g, {{1, 2, 2}, {2, 5, 5}, {3, 7, 2}, {4, 0, 0}}};
  true_view phase{3, 1, 1, g, {{5, 2, 2}}};  // on 1's cell, but in a phase: unseen
  const std::vector<true_view> truth{line, phase};

  bot_view b1 = bot_at(line, 1, 2, 2);
  b1.seen = {at_cell(g, 5, 2, 2), at_cell(g, 3, 7, 2), at_cell(g, 2, 5, 5)};  // 3, 5 extra; 4 missed
  bot_view b2 = bot_at(line, 2, 5, 6);                                        // itself: wrong cell
  b2.seen = {at_cell(g, 1, 2, 2), at_cell(g, 3, 6, 2)};                       // 3 on a wrong cell
  bot_view b5 = bot_at(line, 5, 2, 2);                                        // in phase 1, believes 0
  bot_view b3 = bot_at(line, 3, 7, 2);
  b3.line = 2;  // no such line
  b3.seen = {at_cell(g, 2, 5, 5)};
  const std::vector<bot_view> bots{b1, b2, b5, b3};

  const view_check c = compare_views(truth, bots);
  EXPECT_EQ(c.bots, 4u);
  EXPECT_EQ(c.pairs, 4u);
  EXPECT_EQ(c.missing, 1u);
  EXPECT_EQ(c.extra, 2u);
  EXPECT_EQ(c.wrong_position, 2u);
  EXPECT_EQ(c.misplaced, 2u);
  EXPECT_EQ(c.mismatches(), 7u);
  const std::vector<std::string> examples{
      "bot 1 on scene 3 line 1 phase 0: sees player 3 at cell (7,2), not a neighbour",
      "bot 1 on scene 3 line 1 phase 0: misses player 4 at cell (0,0)",
      "bot 1 on scene 3 line 1 phase 0: sees player 5 at cell (2,2), not a neighbour",
      "bot 2 on scene 3 line 1 phase 0: sees itself at cell (5,6), the scene holds it at (5,5)",
      "bot 2 on scene 3 line 1 phase 0: sees player 3 at cell (6,2), the scene holds it at (7,2)",
      "bot 5 on scene 3 line 1 phase 0: the scene does not hold it there",
      "bot 3 on scene 3 line 2 phase 0: the scene does not hold it there",
  };
  EXPECT_EQ(c.examples, examples);
}

// A player whose views changed while the truth was read line by line (its resume_ms ran out, say)
// is left out of the truth, of every view and as a bot; every other mismatch still counts.
TEST(CompareViews, LeavesOutPlayersThatChangedWhileTheTruthWasRead) {
  view_geometry g{10, 10, 2.0, 100.0, -50.0, 2, 2, 1, 1};
  std::vector<true_view> truth{{3, 1, 0, g, {{1, 2, 2}, {2, 3, 3}, {3, 4, 4}, {4, 0, 0}}}};
  bot_view b1 = bot_at(truth[0], 1, 2, 2);
  b1.seen = {at_cell(g, 3, 4, 4)};  // misses 2 (it changed) and 4 (it did not)
  bot_view b2 = bot_at(truth[0], 2, 3, 3);
  b2.line = 2;  // its own place changed: it believes another line
  b2.seen = {at_cell(g, 1, 2, 2), at_cell(g, 3, 4, 4), at_cell(g, 4, 0, 0)};
  std::vector<bot_view> bots{b1, b2};

  const view_check before = compare_views(truth, bots);
  EXPECT_EQ(before.missing, 2u);
  EXPECT_EQ(before.misplaced, 1u);

  EXPECT_EQ(leave_out_changed(truth, bots, {2, 9}), 1u);  // 9: nobody holds it
  const view_check after = compare_views(truth, bots);
  EXPECT_EQ(after.bots, 1u);
  EXPECT_EQ(after.missing, 1u);
  EXPECT_EQ(after.misplaced, 0u);
  EXPECT_EQ(after.mismatches(), 1u);
  ASSERT_EQ(after.examples.size(), 1u);
  EXPECT_EQ(after.examples[0], "bot 1 on scene 3 line 1 phase 0: misses player 4 at cell (0,0)");
}

TEST(CompareViews, KeepsOnlyTheFirstTenExamples) {
  view_geometry g{4, 4, 1.0, 0.0, 0.0, 4, 4, 1, 1};
  const std::vector<true_view> truth{{1, 1, 0, g, {}}};
  std::vector<bot_view> bots;
  for (std::int32_t pid = 1; pid <= 25; ++pid) bots.push_back({pid, 1, 1, 0, 0, 0, {}});
  const view_check c = compare_views(truth, bots);
  EXPECT_EQ(c.misplaced, 25u);
  EXPECT_EQ(c.examples.size(), 10u);
}

// ---- compare_views against a brute-force oracle ------------------------------------------------

struct trace {
  std::vector<true_view> truth;
  std::vector<bot_view> bots;
  view_check expected;  // the counts the perturbations make, by construction
};

std::uint32_t pick(std::mt19937& rng, std::uint32_t lo, std::uint32_t hi) {
  return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
}
bool chance(std::mt19937& rng, double p) { return std::bernoulli_distribution(p)(rng); }
std::size_t index_below(std::mt19937& rng, std::size_t n) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

view_geometry random_geometry(std::mt19937& rng) {
  static constexpr double sizes[] = {1.0, 0.5, 0.25, 2.0, 3.0};
  view_geometry g;
  g.width = pick(rng, 1, 40);
  g.height = pick(rng, 1, 40);
  g.cell_size = sizes[pick(rng, 0, 4)];
  g.origin_x = std::uniform_real_distribution<double>(-100, 100)(rng);
  g.origin_z = std::uniform_real_distribution<double>(-100, 100)(rng);
  g.area_width = pick(rng, 1, 6);
  g.area_height = pick(rng, 1, 6);
  const bool grid25 = chance(rng, 0.4);  // the 25-grid, else the 9-grid or an uneven one
  g.eyesight_x = grid25 ? 2 : pick(rng, 0, 2);
  g.eyesight_y = grid25 ? 2 : pick(rng, 1, 2);
  return g;
}

true_view random_view(std::mt19937& rng, std::uint32_t scene, std::uint32_t line, std::uint32_t phase,
                      std::int32_t& next_pid) {
  true_view v{scene, line, phase, random_geometry(rng), {}};
  const std::uint32_t n = pick(rng, 0, 50);
  for (std::uint32_t i = 0; i < n; ++i)
    v.players.push_back(
        {next_pid++, pick(rng, 0, v.geometry.width - 1), pick(rng, 0, v.geometry.height - 1)});
  return v;
}

std::vector<true_view> random_truth(std::mt19937& rng) {
  std::vector<true_view> truth;
  std::int32_t next_pid = 1;
  for (std::uint32_t scene = 1, scenes = pick(rng, 1, 3); scene <= scenes; ++scene)
    for (std::uint32_t line = 1, lines = pick(rng, 1, 3); line <= lines; ++line) {
      truth.push_back(random_view(rng, scene, line, 0, next_pid));
      for (std::uint32_t phase = 1, n = pick(rng, 0, 2); phase <= n; ++phase)
        truth.push_back(random_view(rng, scene, line, phase * 3, next_pid));
    }
  return truth;
}

// The view's rule, spelled out: same view, other player, areas within eyesight.
bool sees(const view_geometry& g, const true_player& b, const true_player& q) {
  const auto ax = [&](const true_player& p) { return static_cast<std::int64_t>(p.x / g.area_width); };
  const auto ay = [&](const true_player& p) { return static_cast<std::int64_t>(p.y / g.area_height); };
  return q.pid != b.pid && std::llabs(ax(b) - ax(q)) <= g.eyesight_x &&
         std::llabs(ay(b) - ay(q)) <= g.eyesight_y;
}

std::vector<const true_player*> neighbours_of(const true_view& v, const true_player& b) {
  std::vector<const true_player*> out;
  for (const auto& q : v.players)
    if (sees(v.geometry, b, q)) out.push_back(&q);
  return out;
}

// A bot that saw exactly the truth, its list shuffled.
bot_view faithful_bot(std::mt19937& rng, const true_view& v, const true_player& p) {
  bot_view b = bot_at(v, p.pid, p.x, p.y);
  for (const true_player* q : neighbours_of(v, p)) b.seen.push_back(at_cell(v.geometry, q->pid, q->x, q->y));
  std::shuffle(b.seen.begin(), b.seen.end(), rng);
  return b;
}

// Moves a position `k` cells along x or z (k in 1..3), so it lands on another cell.
void shift(std::mt19937& rng, const view_geometry& g, float& x, float& z) {
  const float by = static_cast<float>(g.cell_size * pick(rng, 1, 3));
  (chance(rng, 0.5) ? x : z) += chance(rng, 0.5) ? by : -by;
}

// Breaks a faithful bot in some of the ways a client can be wrong, counting each in `e`.
void perturb(std::mt19937& rng, const true_view& v, const std::vector<true_view>& truth, bot_view& b,
             view_check& e) {
  const bool misplaced = chance(rng, 0.1);
  view_check mine;
  mine.pairs = b.seen.size();
  if (chance(rng, 0.2)) shift(rng, v.geometry, b.x, b.z), ++mine.wrong_position;
  if (!b.seen.empty() && chance(rng, 0.3))
    b.seen.erase(b.seen.begin() + index_below(rng, b.seen.size())), ++mine.missing;
  if (!b.seen.empty() && chance(rng, 0.3)) {
    seen_player& s = b.seen[index_below(rng, b.seen.size())];
    shift(rng, v.geometry, s.x, s.z);
    ++mine.wrong_position;
  }
  if (chance(rng, 0.3)) {  // a stranger: a player of another view, or nobody's pid
    const true_view& other = truth[index_below(rng, truth.size())];
    const bool elsewhere = &other != &v && !other.players.empty();
    const std::int32_t pid = elsewhere ? other.players[index_below(rng, other.players.size())].pid
                                       : 1'000'000 + static_cast<std::int32_t>(pick(rng, 0, 1000));
    b.seen.insert(b.seen.begin() + index_below(rng, b.seen.size() + 1), at_cell(v.geometry, pid, 0, 0));
    ++mine.extra;
  }
  ++e.bots;
  if (misplaced) {  // another line, or another phase: its other faults go uncounted
    (chance(rng, 0.5) ? b.line : b.phase) += pick(rng, 1, 3);
    ++e.misplaced;
    return;
  }
  e.pairs += mine.pairs, e.missing += mine.missing, e.extra += mine.extra,
      e.wrong_position += mine.wrong_position;
}

trace random_trace(std::uint32_t seed) {
  std::mt19937 rng(seed);
  trace t;
  t.truth = random_truth(rng);
  for (const auto& v : t.truth)
    for (const auto& p : v.players)
      if (chance(rng, 0.8)) {
        t.bots.push_back(faithful_bot(rng, v, p));
        perturb(rng, v, t.truth, t.bots.back(), t.expected);
      }
  std::shuffle(t.bots.begin(), t.bots.end(), rng);
  return t;
}

// The oracle: every count by brute force, straight from the definitions.
view_check brute_force(const std::vector<true_view>& truth, const std::vector<bot_view>& bots) {
  view_check c;
  const auto cell = [](const view_geometry& g, float x, float z) {
    return std::pair{std::floor((x - g.origin_x) / g.cell_size), std::floor((z - g.origin_z) / g.cell_size)};
  };
  for (const auto& b : bots) {
    ++c.bots;
    const true_view* v = nullptr;
    const true_player* self = nullptr;
    for (const auto& tv : truth)
      if (tv.scene == b.scene && tv.line == b.line && tv.phase == b.phase)
        for (const auto& p : tv.players)
          if (p.pid == b.pid) v = &tv, self = &p;
    if (self == nullptr) {
      ++c.misplaced;
      continue;
    }
    const auto& g = v->geometry;
    if (cell(g, b.x, b.z) != std::pair<double, double>(self->x, self->y)) ++c.wrong_position;
    const auto truly = neighbours_of(*v, *self);
    c.pairs += truly.size();
    for (const true_player* q : truly) {
      auto s =
          std::find_if(b.seen.begin(), b.seen.end(), [&](const seen_player& x) { return x.pid == q->pid; });
      if (s == b.seen.end())
        ++c.missing;
      else if (cell(g, s->x, s->z) != std::pair<double, double>(q->x, q->y))
        ++c.wrong_position;
    }
    for (const auto& s : b.seen)
      if (std::none_of(truly.begin(), truly.end(), [&](const true_player* q) { return q->pid == s.pid; }))
        ++c.extra;
  }
  return c;
}

void expect_counts(const view_check& got, const view_check& want, std::uint32_t seed) {
  EXPECT_EQ(got.bots, want.bots) << "seed " << seed;
  EXPECT_EQ(got.pairs, want.pairs) << "seed " << seed;
  EXPECT_EQ(got.missing, want.missing) << "seed " << seed;
  EXPECT_EQ(got.extra, want.extra) << "seed " << seed;
  EXPECT_EQ(got.wrong_position, want.wrong_position) << "seed " << seed;
  EXPECT_EQ(got.misplaced, want.misplaced) << "seed " << seed;
}

TEST(CompareViews, AgreesWithABruteForceOracleOnRandomTraces) {
  std::uint64_t mismatches = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    const trace t = random_trace(seed);
    const view_check got = compare_views(t.truth, t.bots);
    expect_counts(got, t.expected, seed);
    expect_counts(got, brute_force(t.truth, t.bots), seed);
    EXPECT_EQ(got.examples.size(), std::min<std::uint64_t>(10, got.mismatches())) << "seed " << seed;
    for (const auto& e : got.examples) EXPECT_EQ(e.rfind("bot ", 0), 0u) << e;
    mismatches += got.mismatches();
    if (HasFailure()) break;
  }
  EXPECT_GT(mismatches, 1000u);  // the traces do exercise the counts
}

TEST(CompareViews, ChecksTenThousandFaithfulBotsOnOneLine) {
  // One player per cell of a 100x100 map, 4x4-cell areas, the 9-grid: ~143 neighbours each.
  view_geometry g{100, 100, 1.0, 0.0, 0.0, 4, 4, 1, 1};
  true_view v{1, 1, 0, g, {}};
  for (std::uint32_t y = 0; y < 100; ++y)
    for (std::uint32_t x = 0; x < 100; ++x)
      v.players.push_back({static_cast<std::int32_t>(y * 100 + x + 1), x, y});
  std::uint64_t pairs = 0;
  std::vector<bot_view> bots;
  for (const auto& p : v.players) {
    bot_view b = bot_at(v, p.pid, p.x, p.y);
    const std::uint32_t ax = p.x / 4, ay = p.y / 4;
    for (std::uint32_t y = (ay > 0 ? ay - 1 : 0) * 4; y < std::min<std::uint32_t>(ay + 2, 25) * 4; ++y)
      for (std::uint32_t x = (ax > 0 ? ax - 1 : 0) * 4; x < std::min<std::uint32_t>(ax + 2, 25) * 4; ++x)
        if (x != p.x || y != p.y)
          b.seen.push_back(at_cell(g, static_cast<std::int32_t>(y * 100 + x + 1), x, y));
    pairs += b.seen.size();
    bots.push_back(std::move(b));
  }
  const std::vector<true_view> truth{v};
  const view_check c = compare_views(truth, bots);
  EXPECT_EQ(c.bots, 10'000u);
  EXPECT_EQ(c.pairs, pairs);
  EXPECT_EQ(c.mismatches(), 0u);
  EXPECT_TRUE(c.examples.empty());
}

// ---- http_get, read_scenes, read_truth ----------------------------------------------------------

constexpr auto timeout = 5s;

json scenes_json() {
  return {
      {"players", 3},
      {"scenes",
       {{{"id", 3},
         {"name", "Town"},
         {"kind", "town"},
         {"lines",
          {{{"line", 1}, {"state", "open"}, {"players", 3}},
           {{"line", 2}, {"state", "open"}, {"players", 0}},  // closes before it is read
           {{"line", 4}, {"state", "closing"}, {"players", 0}}}},
         {"spaces", {{{"id", 7}, {"name", "Inn"}}}}},
        {{"id", 5}, {"name", "Field"}, {"kind", "field"}, {"lines", {{{"line", 1}, {"state", "open"}}}}}}}};
}

json field_line_json() {
  return {{"scene", 5},
          {"line", 1},
          {"geometry", geometry_json(8, 8)},
          {"players", {{{"id", 50}, {"x", 1}, {"y", 1}}}}};
}

// A stand-in admin endpoint: /scenes and /lines/SCENE/LINE, the field's line answering `field_status`.
std::unique_ptr<net::http_server> admin_stub(int field_status) {
  net::http_routes routes;
  routes.on("/scenes", [](const net::http_request&) {
    return net::http_response{200, "application/json", scenes_json().dump(), {}};
  });
  routes.on_prefix("/lines/", [field_status](const net::http_request& r) {
    if (r.rest == "3/1") return net::http_response{200, "application/json", town_line_json().dump(), {}};
    if (r.rest == "5/1" && field_status == 200)
      return net::http_response{200, "application/json", field_line_json().dump(), {}};
    if (r.rest == "5/1") return net::http_response{field_status, "text/plain", "line failed\nmore\n", {}};
    return net::http_response{404, "text/plain", "scene 3 has no open line " + r.rest.substr(2) + "\n", {}};
  });
  auto server = net::http_server::start("127.0.0.1", 0, std::move(routes));
  return server ? std::move(*server) : nullptr;
}

TEST(BotsAdmin, ReadsTheOpenLinesOfEachScene) {
  auto server = admin_stub(200);
  ASSERT_NE(server, nullptr);
  auto scenes = read_scenes({"127.0.0.1", server->port()}, timeout);
  ASSERT_TRUE(scenes) << scenes.error().message;
  ASSERT_EQ(scenes->size(), 2u);
  EXPECT_EQ((*scenes)[0].id, 3u);
  EXPECT_EQ((*scenes)[0].name, "Town");
  EXPECT_EQ((*scenes)[0].kind, "town");
  EXPECT_EQ((*scenes)[0].lines, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ((*scenes)[0].spaces, (std::vector<std::uint32_t>{7}));
  EXPECT_EQ((*scenes)[1].kind, "field");
  EXPECT_EQ((*scenes)[1].lines, (std::vector<std::uint32_t>{1}));
  EXPECT_TRUE((*scenes)[1].spaces.empty());
}

TEST(BotsAdmin, ReadsTheTruthAndSkipsALineThatClosed) {
  auto server = admin_stub(200);
  ASSERT_NE(server, nullptr);
  const endpoint at{"127.0.0.1", server->port()};
  auto truth = read_truth({&at, 1}, timeout);
  ASSERT_TRUE(truth) << truth.error().message;
  ASSERT_EQ(truth->size(), 3u);  // town line 1 and its phase, the field's line; town line 2 is gone
  EXPECT_EQ((*truth)[0].players.size(), 2u);
  EXPECT_EQ((*truth)[1].phase, 2u);
  EXPECT_EQ((*truth)[2].scene, 5u);
  EXPECT_EQ((*truth)[2].players[0].pid, 50);
}

TEST(BotsAdmin, ReadsTheTruthOfEveryNodeOfACluster) {
  auto first = admin_stub(200), second = admin_stub(200);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const std::vector<endpoint> nodes{{"127.0.0.1", first->port()}, {"127.0.0.1", second->port()}};
  auto truth = read_truth(nodes, timeout);
  ASSERT_TRUE(truth) << truth.error().message;
  ASSERT_EQ(truth->size(), 6u);  // each node's three views
  EXPECT_EQ((*truth)[2].scene, 5u);
  EXPECT_EQ((*truth)[5].scene, 5u);
}

TEST(BotsAdmin, FailsOnAnErrorOtherThanNotFound) {
  auto server = admin_stub(500);
  ASSERT_NE(server, nullptr);
  const endpoint at{"127.0.0.1", server->port()};
  auto truth = read_truth({&at, 1}, timeout);
  ASSERT_FALSE(truth);
  EXPECT_EQ(truth.code(), "500");
  EXPECT_EQ(truth.error().message,
            "GET http://127.0.0.1:" + std::to_string(at.port) + "/lines/5/1: 500 line failed");
  auto gone = http_get(at, "/lines/3/9", timeout);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.code(), "404");
  EXPECT_EQ(gone.error().message,
            "GET http://127.0.0.1:" + std::to_string(at.port) + "/lines/3/9: 404 scene 3 has no open line 9");
}

TEST(BotsAdmin, NamesThePathOfABadSceneList) {
  net::http_routes routes;
  routes.on("/scenes", [](const net::http_request&) {
    return net::http_response{200, "application/json", R"({"scenes":[{"id":3,"name":"Town","kind":7}]})", {}};
  });
  auto server = net::http_server::start("127.0.0.1", 0, std::move(routes));
  ASSERT_TRUE(server);
  const endpoint at{"127.0.0.1", (*server)->port()};
  auto scenes = read_scenes(at, timeout);
  ASSERT_FALSE(scenes);
  EXPECT_EQ(scenes.code(), "bad_document");
  EXPECT_EQ(scenes.error().message,
            "GET http://127.0.0.1:" + std::to_string(at.port) + "/scenes: /scenes/0/kind: not a string");
}

TEST(BotsAdmin, NamesARefusedConnection) {
  std::uint16_t port = 0;
  if (auto server = admin_stub(200)) port = server->port();  // a port nobody listens on any more
  ASSERT_NE(port, 0);
  auto r = http_get({"127.0.0.1", port}, "/scenes", timeout);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), "connect");
  EXPECT_EQ(r.error().message,
            "GET http://127.0.0.1:" + std::to_string(port) + "/scenes: connection refused");
}

TEST(BotsAdmin, GivesUpOnAServerThatNeverAnswers) {
  // A listening socket nobody accepts from: the connection completes in the backlog, no answer comes.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = http_get({"127.0.0.1", ntohs(addr.sin_port)}, "/scenes", 200ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ::close(fd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), "timeout");
  EXPECT_NE(r.error().message.find("no answer within 200 ms"), std::string::npos) << r.error().message;
  EXPECT_LT(took, 3s);
}

}  // namespace
}  // namespace scenert::bots

#include "table_builder.hpp"

#include "module_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>

namespace scenert::detail {

namespace {

// ---- limits and defaults: documented in docs/scene-table.md, mirrored by the schema ----------------
constexpr int supported_version = 1;
constexpr int_range id_range{1, 4'294'967'295};
constexpr int_range map_side_range{1, 16'384};
constexpr int_range eyesight_range{1, 16};
constexpr real_range cell_size_range{0, 1e6, true};
constexpr real_range origin_range{-1e9, 1e9};
constexpr real_range max_speed_range{0, 1e6};
constexpr int_range block_origin_range{0, 16'383};
constexpr int_range capacity_range{1, 100'000};
constexpr int_range lines_range{0, 100'000};
constexpr int_range max_lines_range{1, 100'000};
constexpr int_range frame_rate_range{1, 1'000};
constexpr int_range monsters_range{0, 100'000};
constexpr std::size_t max_monster_groups = 64;
constexpr real_range monster_speed_range{0, 100, true};
constexpr int_range aggro_range{0, 16'384};
constexpr int_range leash_range{1, 16'384};
constexpr int_range path_budget_range{1, 1'000'000};
constexpr int_range spaces_range{0, 100'000};
constexpr int_range workers_range{1, 1'024};
constexpr int_range group_budget_range{1, 1'000'000};
constexpr int_range idle_grace_range{0, 86'400'000};
constexpr int_range stall_range{1, 3'600'000};
constexpr int_range quarantine_range{0, 1'000'000};
constexpr int_range resume_range{0, 3'600'000};
constexpr int_range frame_bytes_range{16, 16 * 1024 * 1024};
constexpr int_range seed_range{0, 4'294'967'295};
constexpr std::uint32_t default_min_lines = 1;

/// Which fields of a scene read cleanly, so that cross-checks never build on a reported error.
struct scene_facts {
  std::string pointer;
  bool id_ok = false, kind_ok = false, map_given = false, map_ok = false, bind_ok = false;
};

struct map_facts {
  bool id_ok = false;
};

class builder {
 public:
  explicit builder(diagnostic_sink& sink) : sink_(sink) {}

  scene_table build(const json& doc) {
    if (!doc.is_object()) return report_type(sink_, "", "an object", doc), scene_table{};
    object_reader r(doc, "", sink_, {"$schema", "version", "runtime", "network", "maps", "scenes"});
    read_version(r);
    if (const json* s = r.find("$schema", presence::optional); s && !s->is_string())
      report_type(sink_, "/$schema", "a string", *s);
    if (const json* rt = r.find("runtime", presence::optional)) read_runtime(*rt);
    if (const json* net = r.find("network", presence::optional)) read_network(*net);
    read_list(r, "maps", "map", [this](const json& m, const std::string& p) { read_map(m, p); });
    read_list(r, "scenes", "scene", [this](const json& s, const std::string& p) { read_scene(s, p); });
    r.finish();
    check_duplicate_ids();
    check_references();
    return std::move(table_);
  }

 private:
  void read_version(object_reader& r) {
    const json* v = r.find("version", presence::required);
    if (!v) return;
    const auto n = read_int(*v, "/version", {0, 1'000'000}, sink_);
    if (n && *n != supported_version)
      sink_.add("/version",
                fmt::format("unsupported version {}; this scenert reads version {}", *n, supported_version));
  }

  template <class Fn>
  void read_list(object_reader& r, std::string_view key, std::string_view what, Fn&& each) {
    const json* list = r.find(key, presence::required);
    if (!list) return;
    const std::string pointer = r.pointer_to(key);
    if (!list->is_array()) return report_type(sink_, pointer, "an array", *list);
    if (list->empty()) return sink_.add(pointer, fmt::format("must contain at least one {}", what));
    for (std::size_t i = 0; i < list->size(); ++i) each((*list)[i], child_pointer(pointer, i));
  }

  void read_runtime(const json& v) {
    if (!v.is_object()) return report_type(sink_, "/runtime", "an object", v);
    object_reader r(
        v, "/runtime", sink_,
        {"workers", "group_budget", "idle_grace_ms", "stall_threshold_ms", "quarantine_after", "seed"});
    runtime_def& rt = table_.runtime;
    std::uint32_t n = 0;
    if (r.read_uint("workers", n, workers_range, presence::optional)) rt.workers = n;
    r.read_uint("group_budget", rt.group_budget, group_budget_range, presence::optional);
    if (r.read_uint("idle_grace_ms", n, idle_grace_range, presence::optional))
      rt.idle_grace = std::chrono::milliseconds(n);
    if (r.read_uint("stall_threshold_ms", n, stall_range, presence::optional))
      rt.stall_threshold = std::chrono::milliseconds(n);
    if (r.read_uint("quarantine_after", n, quarantine_range, presence::optional)) rt.quarantine_after = n;
    r.read_uint("seed", rt.seed, seed_range, presence::optional);
    r.finish();
  }

  void read_network(const json& v) {
    if (!v.is_object()) return report_type(sink_, "/network", "an object", v);
    object_reader r(v, "/network", sink_, {"resume_ms", "max_frame_bytes"});
    std::uint32_t n = 0;
    if (r.read_uint("resume_ms", n, resume_range, presence::optional))
      table_.network.resume_ms = std::chrono::milliseconds(n);
    r.read_uint("max_frame_bytes", table_.network.max_frame_bytes, frame_bytes_range, presence::optional);
    r.finish();
  }

  void read_map(const json& v, const std::string& pointer) {
    if (!v.is_object()) return report_type(sink_, pointer, "an object", v);
    object_reader r(v, pointer, sink_,
                    {"id", "name", "width", "height", "area_width", "area_height", "eyesight_x", "eyesight_y",
                     "blocks", "cell_size", "origin"});
    map_def m;
    map_facts facts;
    facts.id_ok = r.read_uint("id", m.id, id_range, presence::required);
    r.read_string("name", m.name, presence::optional, false);
    const bool w_ok = r.read_uint("width", m.width, map_side_range, presence::required);
    const bool h_ok = r.read_uint("height", m.height, map_side_range, presence::required);
    if (r.read_uint("area_width", m.area_width, map_side_range, presence::required) && w_ok)
      check_not_above(r, "area_width", m.area_width, m.width, "the map's width");
    if (r.read_uint("area_height", m.area_height, map_side_range, presence::required) && h_ok)
      check_not_above(r, "area_height", m.area_height, m.height, "the map's height");
    r.read_uint("eyesight_x", m.eyesight_x, eyesight_range, presence::optional);
    r.read_uint("eyesight_y", m.eyesight_y, eyesight_range, presence::optional);
    r.read_real("cell_size", m.cell_size, cell_size_range, presence::optional);
    if (const json* o = r.find("origin", presence::optional)) read_origin(*o, r.pointer_to("origin"), m);
    if (const json* b = r.find("blocks", presence::optional))
      read_blocks(*b, r.pointer_to("blocks"), m, w_ok && h_ok);
    r.finish();
    map_facts_.push_back(facts);
    table_.maps.push_back(std::move(m));
  }

  // "origin": {"x": X, "z": Z}, the world position of cell (0, 0)'s corner.
  void read_origin(const json& v, const std::string& pointer, map_def& m) {
    if (!v.is_object()) return report_type(sink_, pointer, "an object", v);
    object_reader r(v, pointer, sink_, {"x", "z"});
    r.read_real("x", m.origin_x, origin_range, presence::required);
    r.read_real("z", m.origin_z, origin_range, presence::required);
    r.finish();
  }

  void check_not_above(object_reader& r, std::string_view key, std::uint32_t v, std::uint32_t limit,
                       std::string_view what) {
    if (v > limit) sink_.add(r.pointer_to(key), fmt::format("must be <= {} ({}), got {}", what, limit, v));
  }

  void read_blocks(const json& v, const std::string& pointer, map_def& m, bool size_known) {
    if (!v.is_array()) return report_type(sink_, pointer, "an array", v);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = child_pointer(pointer, i);
      if (!v[i].is_object()) {
        report_type(sink_, p, "an object {\"x\", \"y\", \"w\", \"h\"}", v[i]);
        continue;
      }
      object_reader r(v[i], p, sink_, {"x", "y", "w", "h"});
      cell_rect c;
      bool ok = r.read_uint("x", c.x, block_origin_range, presence::required);
      ok &= r.read_uint("y", c.y, block_origin_range, presence::required);
      ok &= r.read_uint("w", c.width, map_side_range, presence::required);
      ok &= r.read_uint("h", c.height, map_side_range, presence::required);
      r.finish();
      if (ok && size_known && (c.x + c.width > m.width || c.y + c.height > m.height))
        sink_.add(p, fmt::format("must lie inside the {}x{} map, got cells x {}..{}, y {}..{}", m.width,
                                 m.height, c.x, c.x + c.width - 1, c.y, c.y + c.height - 1));
      if (ok) m.blocks.push_back(c);
    }
  }

  void read_scene(const json& v, const std::string& pointer) {
    if (!v.is_object()) return report_type(sink_, pointer, "an object", v);
    object_reader r(v, pointer, sink_,
                    {"id", "name", "kind", "structure", "capacity", "hard_capacity", "min_lines", "max_lines",
                     "frame_rate", "map", "policy", "instances", "monsters", "bind_town", "min_spaces",
                     "max_spaces", "max_speed", "path_budget", "module"});
    scene_def s;
    scene_facts facts{pointer};
    facts.id_ok = r.read_uint("id", s.id, id_range, presence::required);
    r.read_string("name", s.name, presence::required, true);
    std::size_t choice = 0;
    if ((facts.kind_ok = r.read_choice("kind", choice, scene_kind_names, presence::required)))
      s.kind = static_cast<scene_kind>(choice);
    const bool cap_ok = r.read_uint("capacity", s.capacity, capacity_range, presence::required);
    read_hard_capacity(r, s, cap_ok);
    r.read_uint("frame_rate", s.frame_rate, frame_rate_range, presence::optional);
    read_monsters(r, s);
    r.read_real("max_speed", s.max_speed, max_speed_range, presence::optional);
    const bool is_space = facts.kind_ok && s.kind == scene_kind::space;
    facts.map_given = r.has("map");
    facts.map_ok = r.read_uint("map", s.map, id_range, is_space ? presence::optional : presence::required);
    s.path_budget = default_path_budget(s.kind);
    r.read_uint("path_budget", s.path_budget, path_budget_range, presence::optional);
    read_module(r, s);
    if (is_space)
      read_space_fields(r, s, facts);
    else if (facts.kind_ok)
      read_line_fields(r, s);
    r.finish();
    scene_facts_.push_back(std::move(facts));
    table_.scenes.push_back(std::move(s));
  }

  // `monsters` is a count of mobs with the defaults, an object saying what they are, or an array of
  // such groups (a dungeon's boss and its mobs).
  void read_monsters(object_reader& r, scene_def& s) {
    const json* v = r.find("monsters", presence::optional);
    if (v == nullptr) return;
    const std::string pointer = r.pointer_to("monsters");
    if (!v->is_array()) {
      monster_group first;
      if (read_monster_group(*v, pointer, first)) s.monsters = first.count, s.monster = first.monster;
      return;
    }
    if (v->empty() || v->size() > max_monster_groups)
      return sink_.add(
          pointer, fmt::format("must hold 1 to {} monster groups, got {}", max_monster_groups, v->size()));
    for (std::size_t i = 0; i < v->size(); ++i) {
      monster_group group;
      if (!read_monster_group((*v)[i], child_pointer(pointer, i), group)) continue;
      if (i == 0)
        s.monsters = group.count, s.monster = group.monster;
      else
        s.more_monsters.push_back(group);
    }
  }

  // One group: a count of mobs with the defaults, or an object; true when it read cleanly.
  bool read_monster_group(const json& v, const std::string& pointer, monster_group& out) {
    if (v.is_number()) {
      const auto count = read_int(v, pointer, monsters_range, sink_);
      if (count) out.count = static_cast<std::uint32_t>(*count);
      return count.has_value();
    }
    if (!v.is_object())
      return report_type(sink_, pointer,
                         "an integer, an object {\"count\", \"kind\", ...} or an array of them", v),
             false;
    // A group with a bad key is still kept: the table fails as a whole, every problem reported.
    object_reader m(v, pointer, sink_, {"count", "kind", "speed", "aggro_radius", "leash", "barrier"});
    m.read_uint("count", out.count, monsters_range, presence::required);
    std::size_t choice = 0;
    if (m.read_choice("kind", choice, monster_kind_names, presence::optional))
      out.monster.kind = static_cast<monster_kind>(choice);
    if (m.read_choice("barrier", choice, monster_barrier_names, presence::optional))
      out.monster.barrier = static_cast<monster_barrier>(choice);
    m.read_real("speed", out.monster.speed, monster_speed_range, presence::optional);
    m.read_uint("aggro_radius", out.monster.aggro_radius, aggro_range, presence::optional);
    m.read_uint("leash", out.monster.leash, leash_range, presence::optional);
    m.finish();
    return true;
  }

  void read_hard_capacity(object_reader& r, scene_def& s, bool cap_ok) {
    s.hard_capacity = s.capacity;  // default: no team-mate allowance above the soft capacity
    std::uint32_t hard = 0;
    if (!r.read_uint("hard_capacity", hard, capacity_range, presence::optional)) return;
    if (cap_ok && hard < s.capacity)
      return sink_.add(r.pointer_to("hard_capacity"),
                       fmt::format("must be >= capacity ({}), got {}", s.capacity, hard));
    s.hard_capacity = hard;
  }

  void read_line_fields(object_reader& r, scene_def& s) {
    constexpr std::string_view only_spaces = "only scenes of kind \"space\" take this key";
    for (auto key : {"bind_town", "min_spaces", "max_spaces"}) r.forbid(key, only_spaces);
    std::size_t choice = 0;
    if (r.read_choice("structure", choice, scene_structure_names, presence::optional))
      s.structure = static_cast<scene_structure>(choice);
    if (r.read_choice("policy", choice, allocation_policy_names, presence::optional))
      s.policy = static_cast<allocation_policy>(choice);
    read_instances(r, s);
    // Every line of a party-mode dungeon belongs to a party: none is kept open for nobody.
    const bool all_private = s.instances == instance_mode::party;
    s.min_lines = all_private ? 0 : default_min_lines;
    const bool min_ok = r.read_uint("min_lines", s.min_lines, lines_range, presence::optional);
    if (min_ok && all_private && s.min_lines != 0)
      sink_.add(r.pointer_to("min_lines"),
                fmt::format("must be 0 when instances is \"party\" (every line belongs to a party), got {}",
                            s.min_lines));
    const bool max_ok = r.read_uint("max_lines", s.max_lines, max_lines_range, presence::required);
    // The default min_lines (1) never exceeds a valid max_lines (>= 1), so only a given one is checked.
    if (min_ok && max_ok && s.min_lines > s.max_lines)
      sink_.add(r.pointer_to("min_lines"),
                fmt::format("must be <= max_lines ({}), got {}", s.max_lines, s.min_lines));
  }

  void read_instances(object_reader& r, scene_def& s) {
    if (s.kind != scene_kind::dungeon)
      return r.forbid("instances", "only dungeons have private instances (kind \"dungeon\")");
    std::size_t choice = 0;
    if (r.read_choice("instances", choice, instance_mode_names, presence::optional))
      s.instances = static_cast<instance_mode>(choice);
  }

  void read_space_fields(object_reader& r, scene_def& s, scene_facts& facts) {
    constexpr std::string_view no_lines =
        "does not apply to a space: phases live inside their town's lines (see min_spaces, max_spaces)";
    for (auto key : {"structure", "policy", "min_lines", "max_lines", "instances"}) r.forbid(key, no_lines);
    space_def sp;
    facts.bind_ok = r.read_uint("bind_town", sp.bind_town, id_range, presence::required);
    const bool min_ok = r.read_uint("min_spaces", sp.min_spaces, spaces_range, presence::optional);
    const bool max_ok = r.read_uint("max_spaces", sp.max_spaces, spaces_range, presence::optional);
    if (min_ok && max_ok && sp.max_spaces != 0 && sp.min_spaces > sp.max_spaces)
      sink_.add(r.pointer_to("min_spaces"),
                fmt::format("must be <= max_spaces ({}), got {}", sp.max_spaces, sp.min_spaces));
    s.min_lines = s.max_lines = 0;  // a space has no lines of its own
    s.space = sp;
  }

  void check_duplicate_ids() {
    std::unordered_map<std::uint32_t, std::size_t> seen;
    for (std::size_t i = 0; i < table_.maps.size(); ++i) {
      if (!map_facts_[i].id_ok) continue;
      auto [it, fresh] = seen.emplace(table_.maps[i].id, i);
      if (!fresh)
        sink_.add(fmt::format("/maps/{}/id", i),
                  fmt::format("duplicate map id {} (first used by /maps/{})", table_.maps[i].id, it->second));
    }
    seen.clear();
    for (std::size_t i = 0; i < table_.scenes.size(); ++i) {
      if (!scene_facts_[i].id_ok) continue;
      auto [it, fresh] = seen.emplace(table_.scenes[i].id, i);
      if (!fresh)
        sink_.add(scene_facts_[i].pointer + "/id",
                  fmt::format("duplicate scene id {} (first used by {})", table_.scenes[i].id,
                              scene_facts_[it->second].pointer));
    }
  }

  // First definition wins for lookups, so that a duplicate id is reported once, as a duplicate.
  const map_def* map_by_id(std::uint32_t id) const {
    for (std::size_t i = 0; i < table_.maps.size(); ++i)
      if (map_facts_[i].id_ok && table_.maps[i].id == id) return &table_.maps[i];
    return nullptr;
  }
  const scene_def* scene_by_id(std::uint32_t id, const scene_facts** facts) const {
    for (std::size_t i = 0; i < table_.scenes.size(); ++i)
      if (scene_facts_[i].id_ok && table_.scenes[i].id == id)
        return *facts = &scene_facts_[i], &table_.scenes[i];
    return nullptr;
  }

  // A reference to an id that failed to read would only repeat that error, so such checks are skipped.
  void check_references() {
    const bool maps_known =
        std::all_of(map_facts_.begin(), map_facts_.end(), [](auto& f) { return f.id_ok; });
    scenes_known_ = std::all_of(scene_facts_.begin(), scene_facts_.end(), [](auto& f) { return f.id_ok; });
    for (std::size_t i = 0; i < table_.scenes.size(); ++i) {
      scene_def& s = table_.scenes[i];
      const scene_facts& f = scene_facts_[i];
      if (f.map_ok && maps_known && !map_by_id(s.map))
        sink_.add(f.pointer + "/map", fmt::format("no map with id {}", s.map));
      if (f.kind_ok && s.kind == scene_kind::space && f.bind_ok) check_bound_town(s, f);
    }
  }

  void check_bound_town(scene_def& s, const scene_facts& f) {
    const scene_facts* town_facts = nullptr;
    const scene_def* town = scene_by_id(s.space->bind_town, &town_facts);
    const std::string pointer = f.pointer + "/bind_town";
    if (!town && !scenes_known_) return;
    if (!town) return sink_.add(pointer, fmt::format("no scene with id {}", s.space->bind_town));
    if (!town_facts->kind_ok) return;
    if (town->kind != scene_kind::town)
      return sink_.add(pointer, fmt::format("must name a scene of kind \"town\"; scene {} (\"{}\") is a {}",
                                            town->id, town->name, to_string(town->kind)));
    if (!town_facts->map_ok) return;
    if (!f.map_given)
      s.map = town->map;  // default: a phase sits on its town's map
    else if (f.map_ok && s.map != town->map)
      sink_.add(f.pointer + "/map",
                fmt::format("must be the map of town {} ({}): a space sits on its town's map, got {}",
                            town->id, town->map, s.map));
  }

  diagnostic_sink& sink_;
  scene_table table_;
  std::vector<map_facts> map_facts_;
  std::vector<scene_facts> scene_facts_;
  bool scenes_known_ = true;
};

}  // namespace

scene_table build_table(const json& document, diagnostic_sink& sink) { return builder(sink).build(document); }

}  // namespace scenert::detail

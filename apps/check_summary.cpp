#include "check_summary.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

namespace scenert::apps {

namespace {

using json = nlohmann::ordered_json;
using row = std::vector<std::string>;

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// Display width of UTF-8 text: one column per code point (close enough for names in a table).
std::size_t width_of(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string render_table(const std::vector<row>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& r : rows) {
    widths.resize(std::max(widths.size(), r.size()));
    for (std::size_t c = 0; c < r.size(); ++c) widths[c] = std::max(widths[c], width_of(r[c]));
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c)
      line += "  " + r[c] + std::string(widths[c] - width_of(r[c]), ' ');
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string view_of(const map_def& m) {
  return fmt::format("{}x{}", 2 * m.eyesight_x + 1, 2 * m.eyesight_y + 1);
}

std::string capacity_of(const scene_def& s) {
  return s.hard_capacity > s.capacity ? fmt::format("{} (hard {})", s.capacity, s.hard_capacity)
                                      : fmt::format("{}", s.capacity);
}

row scene_row(const scene_table& t, const scene_def& s) {
  const map_def* m = t.find_map(s.map);
  const std::string areas = m ? fmt::format("{}x{}", areas_across(*m), areas_down(*m)) : "?";
  const std::string view = m ? view_of(*m) : "?";
  if (s.space) {
    const std::string most = s.space->max_spaces == 0 ? "unlimited" : fmt::format("{}", s.space->max_spaces);
    return {fmt::format("{}", s.id),
            s.name,
            "space",
            fmt::format("phase of {}", s.space->bind_town),
            capacity_of(s),
            fmt::format("{}..{} per town line", s.space->min_spaces, most),
            "-",
            fmt::format("{} Hz", s.frame_rate),
            fmt::format("{}", s.map),
            areas,
            view,
            fmt::format("{}", s.monster_total())};
  }
  const bool grouped = s.structure == scene_structure::group;
  return {fmt::format("{}", s.id),
          s.name,
          std::string(to_string(s.kind)),
          std::string(to_string(s.structure)),
          capacity_of(s),
          s.instances == instance_mode::shared
              ? fmt::format("{}..{} ({})", s.min_lines, s.max_lines, to_string(s.policy))
              : fmt::format("{}..{} ({}; {} instances)", s.min_lines, s.max_lines, to_string(s.policy),
                            to_string(s.instances)),
          grouped ? fmt::format("{}", group_slots(t.runtime.group_budget, s.capacity)) : "-",
          fmt::format("{} Hz", s.frame_rate),
          fmt::format("{}", s.map),
          areas,
          view,
          fmt::format("{}", s.monster_total())};
}

std::string maps_text(const scene_table& t) {
  std::vector<row> rows{{"id", "name", "cells", "area", "areas", "view (areas)", "blocks"}};
  for (const auto& m : t.maps)
    rows.push_back({fmt::format("{}", m.id), m.name.empty() ? "-" : m.name,
                    fmt::format("{}x{}", m.width, m.height),
                    fmt::format("{}x{}", m.area_width, m.area_height),
                    fmt::format("{}x{}", areas_across(m), areas_down(m)), view_of(m),
                    fmt::format("{}", m.blocks.size())});
  return render_table(rows);
}

std::string scenes_text(const scene_table& t) {
  std::vector<row> rows{{"id", "name", "kind", "structure", "capacity", "lines", "per group", "rate", "map",
                         "areas", "view", "monsters"}};
  for (const auto& s : t.scenes) rows.push_back(scene_row(t, s));
  return render_table(rows);
}

json map_json(const map_def& m) {
  json blocks = json::array();
  for (const auto& b : m.blocks) blocks.push_back({{"x", b.x}, {"y", b.y}, {"w", b.width}, {"h", b.height}});
  return {{"id", m.id},
          {"name", m.name},
          {"width", m.width},
          {"height", m.height},
          {"area_width", m.area_width},
          {"area_height", m.area_height},
          {"eyesight_x", m.eyesight_x},
          {"eyesight_y", m.eyesight_y},
          {"areas", {areas_across(m), areas_down(m)}},
          {"view", {2 * m.eyesight_x + 1, 2 * m.eyesight_y + 1}},
          {"blocks", blocks}};
}

json scene_json(const scene_table& t, const scene_def& s) {
  json j{{"id", s.id},
         {"name", s.name},
         {"kind", to_string(s.kind)},
         {"structure", to_string(s.structure)},
         {"capacity", s.capacity},
         {"hard_capacity", s.hard_capacity},
         {"min_lines", s.min_lines},
         {"max_lines", s.max_lines},
         {"frame_rate", s.frame_rate},
         {"map", s.map},
         {"policy", to_string(s.policy)},
         {"monsters", s.monster_total()}};
  j["group_slots"] = s.structure == scene_structure::group && !s.space
                         ? json(group_slots(t.runtime.group_budget, s.capacity))
                         : json(nullptr);
  j["instances"] = s.kind == scene_kind::dungeon ? json(to_string(s.instances)) : json(nullptr);
  if (s.space)
    j["space"] = {{"bind_town", s.space->bind_town},
                  {"min_spaces", s.space->min_spaces},
                  {"max_spaces", s.space->max_spaces}};
  return j;
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::uint32_t areas_across(const map_def& m) { return ceil_div(m.width, m.area_width); }
std::uint32_t areas_down(const map_def& m) { return ceil_div(m.height, m.area_height); }

std::string summary_text(const load_result& loaded) {
  const scene_table& t = *loaded.table;
  const runtime_def& rt = t.runtime;
  return fmt::format(
      "{}: valid scene table (version {}): {} maps, {} scenes\n"
      "runtime: {} workers, group budget {}, idle grace {} ms, stall threshold {} ms, quarantine after {}\n\n"
      "maps:\n{}\nscenes:\n{}",
      loaded.source, t.version, t.maps.size(), t.scenes.size(), rt.workers, rt.group_budget,
      rt.idle_grace.count(), rt.stall_threshold.count(),
      rt.quarantine_after == 0 ? std::string("never") : fmt::format("{} failures", rt.quarantine_after),
      maps_text(t), scenes_text(t));
}

std::string summary_json(const load_result& loaded) {
  const scene_table& t = *loaded.table;
  const runtime_def& rt = t.runtime;
  json j{{"file", loaded.source}, {"status", "ok"}, {"version", t.version}};
  j["runtime"] = {{"workers", rt.workers},
                  {"group_budget", rt.group_budget},
                  {"idle_grace_ms", rt.idle_grace.count()},
                  {"stall_threshold_ms", rt.stall_threshold.count()},
                  {"quarantine_after", rt.quarantine_after}};
  j["maps"] = json::array();
  for (const auto& m : t.maps) j["maps"].push_back(map_json(m));
  j["scenes"] = json::array();
  for (const auto& s : t.scenes) j["scenes"].push_back(scene_json(t, s));
  return dump(j);
}

std::string errors_json(const load_result& loaded) {
  json errors = json::array();
  for (const auto& d : loaded.diagnostics) {
    json e{{"pointer", d.pointer}, {"reason", d.reason}, {"message", format_diagnostic(loaded.source, d)}};
    if (d.line != 0) e["line"] = d.line, e["column"] = d.column;
    errors.push_back(std::move(e));
  }
  const char* status = loaded.status == load_status::unreadable ? "unreadable" : "invalid";
  return dump(json{{"file", loaded.source}, {"status", status}, {"errors", errors}});
}

}  // namespace scenert::apps

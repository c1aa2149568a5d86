#include <scenert/scene/module_registry.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <scenert/scene/scene.hpp>

namespace scenert {

namespace {

// RFC 6901: `~` and `/` in a key are written `~0` and `~1`.
std::string escaped(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string describe(const module_value& v) {
  using t = module_value::type;
  switch (v.kind) {
    case t::null:
      return "null";
    case t::boolean:
      return v.boolean ? "true" : "false";
    case t::number:
      return v.integer ? fmt::format("{}", static_cast<std::int64_t>(v.number)) : fmt::format("{}", v.number);
    case t::string:
      return fmt::format("\"{}\"", v.text.size() > 40 ? v.text.substr(0, 40) + "..." : v.text);
    case t::array:
      return "an array";
    case t::object:
      return "an object";
  }
  return "?";
}

}  // namespace

module_params::module_params(const module_value& params, std::string pointer)
    : params_(params), pointer_(std::move(pointer)) {}

const module_value* module_params::take(std::string_view key, bool required) {
  asked_.emplace_back(key);
  for (const auto& f : params_.fields)
    if (f.key == key) return &f.value;
  if (required) problem(escaped(key), "missing required parameter");
  return nullptr;
}

void module_params::problem(std::string_view path, std::string reason) {
  problems_.push_back({pointer_ + "/" + std::string(path), std::move(reason)});
}

std::int64_t module_params::integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                                    std::int64_t max, bool required) {
  const module_value* v = take(key, required);
  if (v == nullptr) return fallback;
  if (v->kind != module_value::type::number || !v->integer) {
    problem(escaped(key), fmt::format("must be an integer, got {}", describe(*v)));
    return fallback;
  }
  if (v->number < static_cast<double>(min) || v->number > static_cast<double>(max)) {
    problem(escaped(key), fmt::format("must be in {}..{}, got {}", min, max, describe(*v)));
    return fallback;
  }
  return static_cast<std::int64_t>(v->number);
}

double module_params::number(std::string_view key, double fallback, double min, double max, bool required) {
  const module_value* v = take(key, required);
  if (v == nullptr) return fallback;
  if (v->kind != module_value::type::number || !std::isfinite(v->number)) {
    problem(escaped(key), fmt::format("must be a number, got {}", describe(*v)));
    return fallback;
  }
  if (v->number < min || v->number > max) {
    problem(escaped(key), fmt::format("must be in {}..{}, got {}", min, max, describe(*v)));
    return fallback;
  }
  return v->number;
}

std::string module_params::text(std::string_view key, std::string fallback, bool required) {
  const module_value* v = take(key, required);
  if (v == nullptr) return fallback;
  if (v->kind != module_value::type::string) {
    problem(escaped(key), fmt::format("must be a string, got {}", describe(*v)));
    return fallback;
  }
  return v->text;
}

bool module_params::flag(std::string_view key, bool fallback) {
  const module_value* v = take(key, false);
  if (v == nullptr) return fallback;
  if (v->kind != module_value::type::boolean) {
    problem(escaped(key), fmt::format("must be true or false, got {}", describe(*v)));
    return fallback;
  }
  return v->boolean;
}

const module_value* module_params::value(std::string_view key, bool required) { return take(key, required); }

std::vector<diagnostic> module_params::finish() {
  for (const auto& f : params_.fields)
    if (std::find(asked_.begin(), asked_.end(), f.key) == asked_.end())
      problem(escaped(f.key), "unknown parameter of this module");
  std::stable_sort(problems_.begin(), problems_.end(),
                   [](const diagnostic& a, const diagnostic& b) { return a.pointer < b.pointer; });
  return std::move(problems_);
}

// ---- the registry -----------------------------------------------------------------------

result<void, registry_errc> module_registry::add(std::string name, module_factory make) {
  if (name.empty() || !make) return fail(registry_errc::bad_name, "a module needs a name and a factory");
  if (factories_.count(name))
    return fail(registry_errc::duplicate_name, fmt::format("module \"{}\" is registered already", name));
  factories_.emplace(std::move(name), std::move(make));
  return {};
}

const module_factory* module_registry::find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> module_registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, make] : factories_) out.push_back(name);
  return out;
}

std::vector<diagnostic> check_modules(const scene_table& table, const module_registry& registry) {
  std::vector<diagnostic> out;
  for (const auto& s : table.scenes) {
    if (!s.module) continue;
    const module_factory* make = registry.find(s.module->name);
    if (make == nullptr) {
      const auto known = registry.names();
      out.push_back({s.module->pointer + "/name",
                     fmt::format("unknown module \"{}\" ({})", s.module->name,
                                 known.empty() ? "no module is registered: load one with --module"
                                               : fmt::format("known: {}", fmt::join(known, ", ")))});
      continue;
    }
    module_params params(s.module->params, s.module->pointer);
    try {
      (void)(*make)(params);
    } catch (const std::exception& e) {
      params.problem("name", fmt::format("module \"{}\" failed to start: {}", s.module->name, e.what()));
    }
    for (auto& d : params.finish()) out.push_back(std::move(d));
  }
  return out;
}

std::function<void(scene&)> attach_game_modules(const scene_table& table, const module_registry& registry,
                                                player_store* store) {
  return [&table, &registry, store](scene& line) {
    const auto& m = line.def().module;
    if (!m) return;
    const module_factory* make = registry.find(m->name);
    SCENERT_ASSERT(make != nullptr, "attach_game_modules: an unknown module (check the table first)");
    module_params params(m->params, m->pointer);
    auto module = (*make)(params);
    if (module) line.set_game_module(std::move(module), table.runtime.seed, store);
  };
}

}  // namespace scenert

#pragma once
/// module_registry: game modules by name, as the scene table names them (`"module": {"name": ...}`).
/// A module's factory reads its parameters through module_params, which notes each wrong or unknown
/// one with its JSON pointer: `scenert check` runs every factory once to report them, `scenert run`
/// refuses a table with any, and then each new line object gets its own module.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/config/scene_table.hpp>
#include <scenert/config/table_loader.hpp>
#include <scenert/runtime/result.hpp>
#include <scenert/scene/fwd.hpp>
#include <scenert/scene/game_module.hpp>
#include <scenert/scene/player_store.hpp>

namespace scenert {

/// The parameters of one scene's module, read by key; each problem becomes a diagnostic at
/// `/scenes/N/module/KEY`. A getter that finds a problem returns its fallback.
/// Thread-safety: none; one factory call.
class module_params {
 public:
  /// `params` is the table's object (every key but `name`), `pointer` the module object's pointer.
  module_params(const module_value& params, std::string pointer);

  /// An integer in [min, max]; `fallback` when absent (a problem when `required`).
  std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max,
                       bool required = false);
  /// A finite number in [min, max]; `fallback` when absent (a problem when `required`).
  double number(std::string_view key, double fallback, double min, double max, bool required = false);
  /// A string; `fallback` when absent (a problem when `required`).
  std::string text(std::string_view key, std::string fallback, bool required = false);
  /// A boolean; `fallback` when absent.
  bool flag(std::string_view key, bool fallback);
  /// The raw value (an array, an object) for the module to read itself; null when absent. Report
  /// what is wrong in it with problem(), naming the path below the key (e.g. "loot/2/weight").
  const module_value* value(std::string_view key, bool required = false);
  /// Notes a problem at `path` below the module object (a key, or "key/index/...").
  void problem(std::string_view path, std::string reason);
  /// The problems so far, plus one for each key no getter asked for (a typo, or a parameter this
  /// module does not have).
  [[nodiscard]] std::vector<diagnostic> finish();
  /// The module object's pointer ("/scenes/3/module").
  [[nodiscard]] const std::string& pointer() const noexcept { return pointer_; }

 private:
  const module_value* take(std::string_view key, bool required);

  const module_value& params_;
  std::string pointer_;
  std::vector<std::string> asked_;
  std::vector<diagnostic> problems_;
};

/// Makes one line's module from the scene's parameters (read through `params`). Called once by
/// `scenert check` (the module is dropped), then once per line object on the world's thread.
using module_factory = std::function<std::unique_ptr<game_module>(module_params& params)>;

enum class registry_errc : std::uint8_t { ok, duplicate_name, bad_name, count_ };

/// Game modules by name. Thread-safety: fill it before the world starts; read-only afterwards.
class module_registry {
 public:
  /// Registers a module; duplicate_name when the name is taken, bad_name when it is empty.
  result<void, registry_errc> add(std::string name, module_factory make);
  /// The factory of a name, or null.
  [[nodiscard]] const module_factory* find(std::string_view name) const;
  /// Every name, sorted.
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] bool empty() const noexcept { return factories_.empty(); }

 private:
  std::map<std::string, module_factory, std::less<>> factories_;
};

/// Every problem with the table's modules: an unknown name (at `.../module/name`) and each wrong
/// parameter its factory notes (at `.../module/KEY`), in table order.
[[nodiscard]] std::vector<diagnostic> check_modules(const scene_table& table,
                                                    const module_registry& registry);

/// The world_options::on_new_line hook giving each line object of a scene with a module its own
/// module (made by the registry; the table must have passed check_modules), whose grants go through
/// `store` (null: none). `registry`, `table` and `store` must outlive the world. Runs on the world's
/// thread.
[[nodiscard]] std::function<void(scene&)> attach_game_modules(const scene_table& table,
                                                              const module_registry& registry,
                                                              player_store* store = nullptr);

}  // namespace scenert

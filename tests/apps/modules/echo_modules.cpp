// A library of game modules for `scenert run --module` and `scenert check --module`, as a studio
// builds one: `echo` answers 2001 with its bytes reversed (2101), refuses 2002 as malformed, and
// takes two parameters, `greeting` (a string) and `health` (1..1000); `loot` gives each player of
// its line an item every `period_ms` through the player store (1 + n % 3, n + 1 of them).
#include <scenert/scene/module_library.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace {

class echo final : public scenert::game_module {
 public:
  echo(std::string greeting, std::int32_t health) : greeting_(std::move(greeting)), health_(health) {}
  void on_player_enter(scenert::module_context& c, scenert::player_id p) override {
    c.send(p, 2100, greeting_);
    const auto at = c.where(p).value_or(scenert::grid::cell_point{});
    (void)c.spawn({{at.x + 1, at.y}, {5, 1, health_}, false});
  }
  scenert::message_answer on_message(scenert::module_context& c, scenert::player_id p,
                                     scenert::module_opcode op, std::string_view bytes) override {
    if (op == 2002) return scenert::fail(scenert::module_errc::malformed, "2002 takes no bytes");
    if (op != 2001) return game_module::on_message(c, p, op, bytes);
    c.send(p, 2101, std::string(bytes.rbegin(), bytes.rend()));
    return {};
  }

 private:
  std::string greeting_;
  std::int32_t health_;
};

class loot final : public scenert::game_module {
 public:
  explicit loot(std::int64_t period_ms) : period_(std::chrono::milliseconds(period_ms)) {}
  void on_active(scenert::module_context& c) override {
    n_ = 0;
    (void)c.every(period_, [this](scenert::module_context& line) {
      for (scenert::player_id p : line.players()) {
        ++n_;
        (void)line.grant(p, static_cast<scenert::item_id>(1 + n_ % 3), n_ % 2 + 1);
      }
    });
  }

 private:
  scenert::nanoseconds period_;
  std::uint64_t n_ = 0;
};

void register_echo(scenert::module_registry* registry) {
  (void)registry->add("loot", [](scenert::module_params& p) {
    return std::make_unique<loot>(p.integer("period_ms", 20, 1, 60'000));
  });
  (void)registry->add("echo", [](scenert::module_params& p) {
    auto greeting = p.text("greeting", "hello");
    auto health = static_cast<std::int32_t>(p.integer("health", 100, 1, 1000));
    return std::make_unique<echo>(std::move(greeting), health);
  });
}

}  // namespace

SCENERT_MODULE_LIBRARY(register_echo)

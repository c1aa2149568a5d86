// A studio's own server executable built from the installed package: scenert's whole command line
// with one game module built in. `consumer_server check tests/consumer/modules.json` must accept the
// table that names it; `consumer_server check tests/consumer/modules.json` with a wrong parameter
// must name it.
#include <scenert/apps/main.hpp>
#include <scenert/scene/game_module.hpp>

#include <memory>
#include <string>

namespace {

class greeter final : public scenert::game_module {
 public:
  explicit greeter(std::string greeting) : greeting_(std::move(greeting)) {}
  void on_player_enter(scenert::module_context& c, scenert::player_id p) override {
    c.send(p, 2100, greeting_);
  }

 private:
  std::string greeting_;
};

}  // namespace

int main(int argc, char** argv) {
  scenert::module_registry modules;
  (void)modules.add("greeter", [](scenert::module_params& p) {
    return std::make_unique<greeter>(p.text("greeting", "hello", true));
  });
  return scenert::apps::main(argc, argv, modules);
}

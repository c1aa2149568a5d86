#pragma once
// One bot of `scenert bots --play`: its connection, its two logins (before the fight, and after it to
// find its loot), its party's entry to the dungeon, its view of the entities and its walk. All on the
// play run's one thread.

#include <utility>  // before Asio: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <scenert/net/frame.hpp>
#include <scenert/net/map_blocks.hpp>
#include <scenert/net/messages.hpp>

#include <scenert/bots/party_play.hpp>

namespace scenert::bots::play {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;

// What a party shares: its wire id, what it saw, and how far its members are.
struct party_state {
  std::uint32_t index = 0;
  std::uint64_t wire_id = 0;  // the party of enter_instance
  party_phases phases;
  std::set<std::uint32_t> kills, chests;
  std::optional<clock::time_point> entered;
  std::uint32_t through = 0;  // members that found their loot again
  bool failed = false;
};

// What every bot of the run reaches: its options, its report, its error sink.
struct play_shared {
  const party_play_options& opt;
  party_play_report& report;
  void error(const std::string& what);
  void fail(party_state& p, const std::string& why);
};

class party_bot final : public party_member {
 public:
  enum class stage : std::uint8_t {
    connecting,
    logging_in,
    entering,
    playing,
    looting,
    relogging,
    through,
    failed
  };

  party_bot(asio::io_context& io, play_shared& s, party_state& party, std::uint32_t member);
  void start();
  void tick(clock::time_point now);
  void stop();
  [[nodiscard]] stage at() const { return at_; }

  [[nodiscard]] std::uint32_t member() const override { return member_; }
  [[nodiscard]] std::int32_t player() const override { return pid_; }
  [[nodiscard]] float x() const override { return x_; }
  [[nodiscard]] float z() const override { return z_; }
  [[nodiscard]] float cell_size() const override { return ground_.cell_size; }
  [[nodiscard]] const std::map<std::uint32_t, seen_entity>& entities() const override { return entities_; }
  [[nodiscard]] clock::time_point now() const override { return clock::now(); }
  void send(std::uint32_t opcode, std::string bytes) override;
  void walk_toward(float x, float z, float within) override;
  void stand() override { goal_.reset(); }
  void killed(std::uint32_t entity) override { party_.kills.insert(entity); }
  void phase(std::uint32_t phase) override;
  void chest_opened(std::uint32_t entity) override;
  void done() override;
  void fail(std::string reason) override;

 private:
  void connect();
  void read();
  void write();
  void put(const net::client_message& m);
  void on_frame(std::uint32_t id, std::string_view payload);
  void on(const net::server_message& m);
  void on_inventory(const net::inventory& inv);
  void on_answer(const net::answer& a);
  void on_scene(const net::scene_info& m);
  void on_view(const net::players_in_view& v);
  void enter_when_ready();
  void on_lost(const std::string& why);
  void step(clock::time_point now);
  [[nodiscard]] bool walkable(float wx, float wz) const;
  void check_loot(const net::inventory& after);
  [[nodiscard]] bool loot_heard(clock::time_point now) const;
  void close();

  struct ground {
    std::int32_t width = 0, height = 0;
    float cell_size = 1, origin_x = 0, origin_z = 0;
    net::block_bits blocked;
  };
  struct goal {
    float x = 0, z = 0, within = 0;
  };

  asio::io_context& io_;
  play_shared& shared_;
  party_state& party_;
  std::uint32_t member_;
  std::uint32_t last_phase_ = 0;  // the latest boss phase this member heard
  std::string name_;
  stage at_ = stage::connecting;
  std::optional<tcp::socket> sock_;
  std::uint32_t connection_ = 0;  // a handler of an earlier connection does nothing
  net::frame_reader reader_{1u << 20};
  std::array<char, 16 * 1024> buffer_{};
  std::string out_, sending_;
  bool writing_ = false;

  std::int32_t pid_ = 0;
  std::optional<std::map<std::uint32_t, std::int64_t>> before_;  // its account at its first login
  std::map<std::uint32_t, std::int64_t> granted_;                // what 1013 said, by item
  std::uint32_t views_ = 0;
  bool has_position_ = false;
  float x_ = 0, z_ = 0;
  ground ground_;
  std::map<std::uint32_t, seen_entity> entities_;
  std::optional<goal> goal_;
  clock::time_point next_move_{}, quiet_since_{}, done_at_{};
  std::unique_ptr<party_script> script_;
};

}  // namespace scenert::bots::play

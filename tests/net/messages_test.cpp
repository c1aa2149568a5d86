#include <scenert/net/messages.hpp>

#include <gtest/gtest.h>

#include <scenert/net/map_blocks.hpp>

#include <string>
#include <vector>

namespace {

using namespace scenert::net;

// One frame back through the reader and the decoder.
template <class Decode>
auto round_trip(const std::string& bytes, Decode decode) {
  frame_reader reader;
  std::vector<decltype(decode(0U, std::string_view{}))> got;
  EXPECT_TRUE(reader.feed(bytes, [&](std::uint32_t id, std::string_view p) { got.push_back(decode(id, p)); })
                  .has_value());
  EXPECT_EQ(got.size(), 1U);
  return std::move(got.at(0));
}

// Seed 002's bytes: a client written for it sends these, scenert reads them.
TEST(Messages, Seed002BytesAreTheContract) {
  // Talk{Content="hi"}: header (length 4, id 2), then field 1 length-delimited.
  const std::string talk_frame("\x04\x00\x00\x00\x02\x00\x00\x00\x0a\x02hi", 12);
  auto t = round_trip(talk_frame, decode_client);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(std::get<talk>(t.value()).content, "hi");
  // Position{X=1, Z=2}: fields 1 and 3 as 32-bit floats.
  const std::string pos_frame("\x0a\x00\x00\x00\x03\x00\x00\x00\x0d\x00\x00\x80\x3f\x1d\x00\x00\x00\x40", 18);
  auto p = round_trip(pos_frame, decode_client);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(std::get<move_to>(p.value()).to, (position{1, 0, 2, 0, 0}));
  // And scenert writes them the same way.
  std::string out;
  append_frame(out, client_message{talk{"hi"}});
  EXPECT_EQ(out, talk_frame);
  out.clear();
  append_frame(out, client_message{move_to{{1, 0, 2, 0, 0}}});
  EXPECT_EQ(out, pos_frame);
  // SyncPid{Pid=7} as 201: field 1 varint.
  out.clear();
  append_frame(out, server_message{left_view{7, ""}});
  EXPECT_EQ(out, std::string("\x02\x00\x00\x00\xc9\x00\x00\x00\x08\x07", 10));
  // With its name, as seed 002's CreateIDNameLogoff fills it: field 2, length-delimited.
  out.clear();
  append_frame(out, server_message{left_view{7, "tom"}});
  EXPECT_EQ(out, std::string("\x07\x00\x00\x00\xc9\x00\x00\x00\x08\x07\x12\x03tom", 15));
}

TEST(Messages, EveryClientMessageRoundTrips) {
  const std::vector<client_message> all{
      talk{"hello world"},
      move_to{{1.5F, 2, -3.25F, 90, 0}},
      login{"tom", "token-1", {}},
      login{"ann", "", {0x0102030405060708ULL, ~std::uint64_t{0}}},
      request{42, request_kind::enter_instance, 3002, 0, 77, 0},
      request{43, request_kind::join_team, 0, 0, 0, 12},
      heartbeat{123456789, 0},
      walk{{1.5F, 0, -3.25F, 90, 0}, 3},
      module_message{2001, std::string("\x00\xff"
                                       "any bytes",
                                       11)},
      module_message{65535, ""},
  };
  static_assert(std::variant_size_v<client_message> == 7, "a new client message: add it here");
  for (const auto& m : all) {
    std::string bytes;
    append_frame(bytes, m);
    auto back = round_trip(bytes, decode_client);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back.value().index(), m.index());
    EXPECT_EQ(id_of(back.value()), id_of(m));
    std::string again;
    append_frame(again, back.value());
    EXPECT_EQ(again, bytes) << name_of(id_of(m));
  }
}

// A 1006 with its blocks as row runs, as bits, or left out.
scene_info oakvale(std::vector<std::uint32_t> rows, std::string bits, bool omitted) {
  scene_info i;
  i.scene = 1001, i.name = "Oakvale", i.kind = "town", i.line = 2, i.phase = omitted ? 1 : 0;
  i.width = 64, i.height = 32, i.cell_size = 1.5F, i.origin_x = 10, i.origin_z = 20, i.area_size = 8;
  i.eyesight_x = 2, i.eyesight_z = 1, i.map_digest = 0x1122334455667788ULL;
  i.block_rows = std::move(rows), i.blocked = std::move(bits), i.blocks_omitted = omitted;
  return i;
}

TEST(Messages, EveryServerMessageRoundTrips) {
  const std::vector<server_message> all{
      you_are{5, "tom"},
      broadcast{5, broadcast_type::chat, "tom", "hi all", {}, 0},
      broadcast{5, broadcast_type::appeared, "tom", "", {10, 0, 20, 1, 100}, 0},
      broadcast{5, broadcast_type::moved, "tom", "", {11, 0, 21, 2, 0}, 0},
      broadcast{5, broadcast_type::action, "tom", "", {}, 9},
      left_view{5, "tom"},
      players_in_view{{{5, {1, 2, 3, 4, 0}, "tom"}, {6, {5, 6, 7, 8, 0}, "ann"}}},
      login_ok{5, "tom", "tok", true},
      answer{42, "line_full", "scene 3002: every line is full", 3002, 4, 0},
      heartbeat_echo{1, 2},
      oakvale({1, 2, 0, 3, 31, 0}, "", false),
      oakvale({}, std::string("\x01\x80", 2), false),
      oakvale({}, "", true),
      goodbye{"server shutting down"},
      move_refused{"blocked"},
      monsters_seen{{{3, 1.5F, 2.5F}, {0, 10, 20}}, true},
      monsters_seen{{{4, 0, 0}}, false},
      monsters_seen{{{9, 1, 1, 3, 2, 450}}, false},
      monsters_gone{{3, 4}},
      module_error{2001, "malformed", "2001 takes 4 bytes"},
      granted{"a1b2-7", 40, 3},
      inventory{{{7, 2}, {40, 1'000'000'000'000}}},
      inventory{},
      click_actions{2, {{1, 2001, 2}, {3, 2002, 0}}},
      click_actions{7, {}},
      module_frame_out{2100, std::string("\x01\x02", 2)},
  };
  static_assert(std::variant_size_v<server_message> == 17, "a new server message: add it here");
  for (const auto& m : all) {
    std::string bytes;
    append_frame(bytes, m);
    auto back = round_trip(bytes, decode_server);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(id_of(back.value()), id_of(m));
    std::string again;
    append_frame(again, back.value());
    EXPECT_EQ(again, bytes) << name_of(id_of(m));
  }
}

TEST(Messages, UnknownIdsAndBadPayloadsAreNamedErrors) {
  auto unknown = decode_client(1999, "");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.code(), wire_errc::unknown_id);
  EXPECT_NE(unknown.error().message.find("1999"), std::string::npos);
  // From 2000 up the bytes are a module's: scenert does not read them.
  auto mine = decode_client(4242, "\x08");
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(std::get<module_message>(mine.value()).opcode, 4242U);
  // A server message sent by a client is unknown to the server.
  EXPECT_EQ(decode_client(static_cast<std::uint32_t>(message_id::broadcast), "").code(),
            wire_errc::unknown_id);
  // A truncated varint does not parse.
  auto bad = decode_client(static_cast<std::uint32_t>(message_id::position), "\x08");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.code(), wire_errc::bad_payload);
  EXPECT_NE(bad.error().message.find("pb.Position"), std::string::npos) << bad.error().message;
  // A request kind past the last one.
  std::string r;
  append_frame(r, client_message{request{1, request_kind::leave, 0, 0, 0, 0}});
  r.back() = 99;  // the kind is the last field written: field 2 = 6 becomes 99
  frame_reader reader;
  bool seen = false;
  ASSERT_TRUE(reader
                  .feed(r,
                        [&](std::uint32_t id, std::string_view p) {
                          seen = true;
                          auto d = decode_client(id, p);
                          ASSERT_FALSE(d.has_value());
                          EXPECT_EQ(d.code(), wire_errc::bad_payload);
                        })
                  .has_value());
  EXPECT_TRUE(seen);
}

// A login names at most max_known_maps digests of 8 bytes each; anything else is a bad frame.
TEST(Messages, KnownMapsAreBoundedAndEightBytesEach) {
  auto decoded = [](const login& l) {
    std::string bytes;
    append_frame(bytes, client_message{l});
    return round_trip(bytes, decode_client);
  };
  auto ok = decoded(login{"tom", "", std::vector<std::uint64_t>(max_known_maps, 7)});
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(std::get<login>(ok.value()).known_maps.size(), max_known_maps);
  auto many = decoded(login{"tom", "", std::vector<std::uint64_t>(max_known_maps + 1, 7)});
  ASSERT_FALSE(many.has_value());
  EXPECT_EQ(many.code(), wire_errc::bad_payload);
  EXPECT_EQ(many.error().message, "login: 65 known maps, at most 64");
  // Login{known_maps: ["abc"]}: field 3, length 3.
  const std::string short_digest(
      "\x05\x00\x00\x00\xe8\x03\x00\x00\x1a\x03"
      "abc",
      13);
  auto bad = round_trip(short_digest, decode_client);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "login: known map 0: a map digest of 3 bytes: 8 expected");
  // A 1006 whose digest is not 8 bytes: SceneInfo{map_digest: "\x01"}, field 15 length 1.
  const std::string info("\x03\x00\x00\x00\xee\x03\x00\x00\x7a\x01\x01", 11);
  auto bad_info = round_trip(info, decode_server);
  ASSERT_FALSE(bad_info.has_value());
  EXPECT_EQ(bad_info.error().message, "scene_info: a map digest of 1 bytes: 8 expected");
}

TEST(Messages, IdsAndNamesAreKeptOnce) {
  for (message_id id : all_message_ids) {
    EXPECT_FALSE(name_of(id).empty());
    EXPECT_GE(index_of(id), 0);
  }
  EXPECT_TRUE(name_of(static_cast<message_id>(77)).empty());
  EXPECT_EQ(index_of(static_cast<message_id>(77)), -1);
}

}  // namespace

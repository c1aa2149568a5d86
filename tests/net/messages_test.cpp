#include <scenert/net/messages.hpp>

#include <gtest/gtest.h>

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
  append_frame(out, server_message{left_view{7}});
  EXPECT_EQ(out, std::string("\x02\x00\x00\x00\xc9\x00\x00\x00\x08\x07", 10));
}

TEST(Messages, EveryClientMessageRoundTrips) {
  const std::vector<client_message> all{
      talk{"hello world"},
      move_to{{1.5F, 2, -3.25F, 90, 0}},
      login{"tom", "token-1"},
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

TEST(Messages, EveryServerMessageRoundTrips) {
  const std::vector<server_message> all{
      you_are{5, "tom"},
      broadcast{5, broadcast_type::chat, "tom", "hi all", {}, 0},
      broadcast{5, broadcast_type::appeared, "tom", "", {10, 0, 20, 1, 100}, 0},
      broadcast{5, broadcast_type::moved, "tom", "", {11, 0, 21, 2, 0}, 0},
      broadcast{5, broadcast_type::action, "tom", "", {}, 9},
      left_view{5},
      players_in_view{{{5, {1, 2, 3, 4, 0}, "tom"}, {6, {5, 6, 7, 8, 0}, "ann"}}},
      login_ok{5, "tom", "tok", true},
      answer{42, "line_full", "scene 3002: every line is full", 3002, 4, 0},
      heartbeat_echo{1, 2},
      scene_info{1001, "Oakvale", "town", 2, 0, 64, 32, 1.5F, 10, 20, 8, std::string("\x01\x80", 2), 2, 1},
      goodbye{"server shutting down"},
      move_refused{"blocked"},
      monsters_seen{{{3, 1.5F, 2.5F}, {0, 10, 20}}, true},
      monsters_seen{{{4, 0, 0}}, false},
      monsters_seen{{{9, 1, 1, 3, 2, 450}}, false},
      monsters_gone{{3, 4}},
      module_error{2001, "malformed", "2001 takes 4 bytes"},
      module_frame_out{2100, std::string("\x01\x02", 2)},
  };
  static_assert(std::variant_size_v<server_message> == 14, "a new server message: add it here");
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

TEST(Messages, IdsAndNamesAreKeptOnce) {
  for (message_id id : all_message_ids) {
    EXPECT_FALSE(name_of(id).empty());
    EXPECT_GE(index_of(id), 0);
  }
  EXPECT_TRUE(name_of(static_cast<message_id>(77)).empty());
  EXPECT_EQ(index_of(static_cast<message_id>(77)), -1);
}

}  // namespace

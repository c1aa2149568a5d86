// The gateway <-> node messages as bytes: every message round-trips, and anything else (a prefix,
// an extra byte, a wrong kind or version, an absurd count, an unknown enum, random bytes) is
// `bad_record` with a reason, never a crash or a huge allocation.

#include <scenert/cluster/wire.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace scenert::cluster::wire {
namespace {

request_batch some_requests() {
  request_batch b;
  b.gateway = "gate-1";
  b.requests = {{1, world_request::enter(10, 3)},
                {2, world_request::enter_line(11, {3, 2, 7})},
                {3, world_request::join_team(12, 10)},
                {4, world_request::move_on(13, {3, 1, 5}, 42, {100, 200})},
                {5, world_request::enter_instance(14, 9, 0xABCDEF0123456789ull)},
                {0xFFFFFFFFFFFFFFFFull, world_request::leave_party(15)}};
  b.requests[2].to = "node_b";  // a journey: node_b is to place player 12
  return b;
}

answer_batch some_answers() {
  answer_batch b;
  b.node = "node_a";
  b.epoch = 77;
  b.answers = {{1, placement{{3, 2, 7}, 0, 0}},
               {2, placement{{4, 1, 1}, 8, 5}},
               {3, fail(world_errc::line_full, "player 12: every line of scene 3 is full")},
               {4, fail(world_errc::not_in_instance, "")}};
  return b;
}

event_batch some_events() {
  event_batch b;
  b.line = {3, 2, 7};
  b.phase = 4;
  b.seq = 1234567890123ull;
  b.epoch = 0x0102030405060708ull;
  b.events = {{line_event::kind::entered, 10, {1, 2}, false},
              {line_event::kind::moved, 500, {3, 4}, true},
              {line_event::kind::left, 11, {}, false},
              {line_event::kind::entered, 501, {0xFFFFFFFFu, 0}, true},
              {line_event::kind::entered, 502, {5, 6}, true, {7, 2, -3}},   // a module's entity, its look
              {line_event::kind::changed, 502, {5, 6}, true, {7, 3, 40}}};  // and its look changed
  return b;
}

// A game module's traffic: clients' messages to their lines, the lines' frames back.
request_batch some_messages() {
  request_batch b;
  b.gateway = "gate-1";
  b.requests = {{7, world_request::message(20, {3, 2, 7}, 2001, std::string("\x01\x00\xff attack", 10))},
                {8, world_request::message(21, {3, 2, 7}, 2002, "")}};
  return b;
}

frame_batch some_frames() {
  using to = module_frame::audience;
  frame_batch b;
  b.line = {3, 2, 7};
  b.frames = {{to::player, 20, 2005, std::string("\x00hit", 4)},
              {to::viewers, 0x8000000000000001ull, 2006, "roar"},
              {to::line, 0, 2007, ""},
              {to::player, 21, 2001, "too far", 3},
              {to::player, 20, 0, "crypt-1-20-0", 0, true, 17, -5}};
  return b;
}

views some_views() {
  views v;
  v.node = "node_a";
  v.epoch = 77;
  v.lines = {{{3, 1, 1}, 0, 9, some_events().events}, {{3, 2, 7}, 4, 1, {}}};
  return v;
}

arrival some_arrival() {
  return {0xFEDCBA9876543210ull, "node_a", "gate-1", world_request::join_team(12, 10)};
}

void expect_same(const line_event& a, const line_event& b) {
  EXPECT_EQ(a.what, b.what);
  EXPECT_EQ(a.player, b.player);
  EXPECT_EQ(a.at, b.at);
  EXPECT_EQ(a.monster, b.monster);
  EXPECT_EQ(a.look, b.look);
}

void expect_same(const std::vector<line_event>& a, const std::vector<line_event>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i]);
}

/// Each decoder, by the name of its message, over any bytes; what it decoded encoded again.
struct codec {
  const char* name;
  std::string valid;
  std::function<cluster_result<std::string>(std::string_view)> decode_and_encode;
};

template <class Decode>
std::function<cluster_result<std::string>(std::string_view)> round_trip(Decode decode) {
  return [decode](std::string_view bytes) -> cluster_result<std::string> {
    auto got = decode(bytes);
    if (!got) return got.error();
    return encode(*got);
  };
}

std::vector<codec> codecs() {
  return {
      {"request batch", encode(some_requests()), round_trip(decode_request_batch)},
      {"answer batch", encode(some_answers()), round_trip(decode_answer_batch)},
      {"event batch", encode(some_events()), round_trip(decode_event_batch)},
      {"request batch", encode(some_messages()), round_trip(decode_request_batch)},
      {"frame batch", encode(some_frames()), round_trip(decode_frame_batch)},
      {"views", encode(some_views()), round_trip(decode_views)},
      {"claim", encode(claim{0x0102030405060708ull, "gate-2"}), round_trip(decode_claim)},
      {"claim answer", encode(claim_answer{"node_b", placement{{4, 1, 2}, 8, 5}}),
       round_trip(decode_claim_answer)},
      {"claim answer", encode(claim_answer{"node_b", fail(world_errc::not_in_scene, "player 9: nowhere")}),
       round_trip(decode_claim_answer)},
      {"arrival", encode(some_arrival()), round_trip(decode_arrival)},
      {"arrival answer", encode(arrival_answer{9, "node_b", placement{{4, 1, 2}, 0, 0}}),
       round_trip(decode_arrival_answer)},
      {"arrival answer",
       encode(arrival_answer{9, "node_b", fail(world_errc::line_full, "scene 4 line 1 is full")}),
       round_trip(decode_arrival_answer)}};
}

TEST(Wire, RoundTripsRequests) {
  const auto sent = some_requests();
  auto got = decode_request_batch(encode(sent));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->gateway, sent.gateway);
  ASSERT_EQ(got->requests.size(), sent.requests.size());
  for (std::size_t i = 0; i < sent.requests.size(); ++i) {
    const auto& [ticket, q, to] = got->requests[i];
    EXPECT_EQ(to, sent.requests[i].to);
    const auto& want = sent.requests[i].request;
    EXPECT_EQ(ticket, sent.requests[i].ticket);
    EXPECT_EQ(q.what, want.what);
    EXPECT_EQ(q.player, want.player);
    EXPECT_EQ(q.scene, want.scene);
    EXPECT_EQ(q.line, want.line);
    EXPECT_EQ(q.mate, want.mate);
    EXPECT_EQ(q.to, want.to);
    EXPECT_EQ(q.party, want.party);
    EXPECT_EQ(q.phase, want.phase);
  }
  EXPECT_EQ(got->requests[3].request.phase, 42u);
  EXPECT_EQ(got->requests[3].request.what, world_request::kind::move);
}

TEST(Wire, RoundTripsModuleMessagesAndFrames) {
  const auto sent = some_messages();
  auto got = decode_request_batch(encode(sent));
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->requests.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& q = got->requests[i].request;
    EXPECT_EQ(q.what, world_request::kind::message);
    EXPECT_EQ(q.player, sent.requests[i].request.player);
    EXPECT_EQ(q.line, sent.requests[i].request.line);
    EXPECT_EQ(q.opcode, sent.requests[i].request.opcode);
    ASSERT_TRUE(q.bytes);
    EXPECT_EQ(*q.bytes, *sent.requests[i].request.bytes);  // opaque bytes, zeros included
  }
  const auto frames = some_frames();
  const auto bytes = encode(frames);
  EXPECT_TRUE(is_frame_batch(bytes));
  EXPECT_FALSE(is_frame_batch(encode(some_events())));
  auto back = decode_frame_batch(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->line, frames.line);
  ASSERT_EQ(back->frames.size(), frames.frames.size());
  for (std::size_t i = 0; i < frames.frames.size(); ++i) {
    const auto &a = back->frames[i], &b = frames.frames[i];
    EXPECT_EQ(a.to, b.to);
    EXPECT_EQ(a.who, b.who);
    EXPECT_EQ(a.opcode, b.opcode);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.refusal, b.refusal);
    EXPECT_EQ(a.granted, b.granted);
    EXPECT_EQ(a.item, b.item);
    EXPECT_EQ(a.count, b.count);
  }
  // Bytes past a name's 64 KiB go whole (a module's payload is never cut).
  frame_batch big{{3, 2, 7}, {{module_frame::audience::line, 0, 2010, std::string(100'000, 'x')}}};
  auto whole = decode_frame_batch(encode(big));
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(whole->frames[0].bytes.size(), 100'000u);
}

TEST(Wire, RoundTripsAnswersWithErrorsAndTheirMessages) {
  const auto sent = some_answers();
  auto got = decode_answer_batch(encode(sent));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->node, "node_a");
  EXPECT_EQ(got->epoch, 77u);
  ASSERT_EQ(got->answers.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(got->answers[i].ticket, sent.answers[i].ticket);
  ASSERT_TRUE(got->answers[1].result);
  EXPECT_EQ(got->answers[1].result->line, (line_handle{4, 1, 1}));
  EXPECT_EQ(got->answers[1].result->space, 8u);
  EXPECT_EQ(got->answers[1].result->phase, 5u);
  ASSERT_FALSE(got->answers[2].result);
  EXPECT_EQ(got->answers[2].result.code(), world_errc::line_full);
  EXPECT_EQ(got->answers[2].result.error().message, "player 12: every line of scene 3 is full");
  ASSERT_FALSE(got->answers[3].result);
  EXPECT_EQ(got->answers[3].result.code(), world_errc::not_in_instance);
  EXPECT_EQ(got->answers[3].result.error().message, "");
}

TEST(Wire, RoundTripsEventsOfPlayersAndMonsters) {
  const auto sent = some_events();
  auto got = decode_event_batch(encode(sent));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->line, sent.line);
  EXPECT_EQ(got->phase, sent.phase);
  EXPECT_EQ(got->seq, sent.seq);
  EXPECT_EQ(got->epoch, sent.epoch);
  expect_same(got->events, sent.events);
}

TEST(Wire, RoundTripsViews) {
  const auto sent = some_views();
  auto got = decode_views(encode(sent));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->node, sent.node);
  EXPECT_EQ(got->epoch, sent.epoch);
  ASSERT_EQ(got->lines.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got->lines[i].line, sent.lines[i].line);
    EXPECT_EQ(got->lines[i].phase, sent.lines[i].phase);
    EXPECT_EQ(got->lines[i].seq, sent.lines[i].seq);
    expect_same(got->lines[i].standing, sent.lines[i].standing);
  }
}

TEST(Wire, RoundTripsClaimsAndTheirAnswers) {
  auto c = decode_claim(encode(claim{0x0102030405060708ull, "gate-2"}));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->player, 0x0102030405060708ull);
  EXPECT_EQ(c->gateway, "gate-2");
  auto here = decode_claim_answer(encode(claim_answer{"node_b", placement{{4, 1, 2}, 8, 5}}));
  ASSERT_TRUE(here) << here.error().message;
  EXPECT_EQ(here->node, "node_b");
  ASSERT_TRUE(here->result);
  EXPECT_EQ(here->result->line, (line_handle{4, 1, 2}));
  EXPECT_EQ(here->result->space, 8u);
  EXPECT_EQ(here->result->phase, 5u);
  auto nowhere = decode_claim_answer(
      encode(claim_answer{"node_b", fail(world_errc::not_in_scene, "player 9: nowhere")}));
  ASSERT_TRUE(nowhere) << nowhere.error().message;
  ASSERT_FALSE(nowhere->result);
  EXPECT_EQ(nowhere->result.code(), world_errc::not_in_scene);
  EXPECT_EQ(nowhere->result.error().message, "player 9: nowhere");
}

TEST(Wire, RoundTripsArrivalsAndTheirAnswers) {
  auto a = decode_arrival(encode(some_arrival()));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->id, 0xFEDCBA9876543210ull);
  EXPECT_EQ(a->from, "node_a");
  EXPECT_EQ(a->gateway, "gate-1");
  EXPECT_EQ(a->request.what, world_request::kind::join_team);
  EXPECT_EQ(a->request.player, 12u);
  EXPECT_EQ(a->request.mate, 10u);
  auto placed = decode_arrival_answer(encode(arrival_answer{9, "node_b", placement{{4, 1, 2}, 0, 0}}));
  ASSERT_TRUE(placed) << placed.error().message;
  EXPECT_EQ(placed->id, 9u);
  EXPECT_EQ(placed->node, "node_b");
  ASSERT_TRUE(placed->result);
  EXPECT_EQ(placed->result->line, (line_handle{4, 1, 2}));
  auto refused =
      decode_arrival_answer(encode(arrival_answer{9, "node_b", fail(world_errc::line_full, "full")}));
  ASSERT_TRUE(refused) << refused.error().message;
  ASSERT_FALSE(refused->result);
  EXPECT_EQ(refused->result.code(), world_errc::line_full);
  EXPECT_EQ(refused->result.error().message, "full");
}

TEST(Wire, RoundTripsEmptyMessages) {
  auto requests = decode_request_batch(encode(request_batch{}));
  ASSERT_TRUE(requests) << requests.error().message;
  EXPECT_TRUE(requests->gateway.empty());
  EXPECT_TRUE(requests->requests.empty());
  auto answers = decode_answer_batch(encode(answer_batch{}));
  ASSERT_TRUE(answers) << answers.error().message;
  EXPECT_TRUE(answers->answers.empty());
  auto events = decode_event_batch(encode(event_batch{}));
  ASSERT_TRUE(events) << events.error().message;
  EXPECT_TRUE(events->events.empty());
  auto lines = decode_views(encode(views{}));
  ASSERT_TRUE(lines) << lines.error().message;
  EXPECT_TRUE(lines->lines.empty());
}

TEST(Wire, EncodesToTheExactSizeOfTheLayout) {
  // kind, version, gateway (u16 + 6), count, 6 requests of 63 bytes, one naming a node (6).
  EXPECT_EQ(encode(some_requests()).size(), 2u + 2 + 6 + 4 + 6 * 63 + 6);
  // kind, version, line, phase, seq, epoch, count, 6 events of 18 bytes, two with a look (8 bytes more).
  EXPECT_EQ(encode(some_events()).size(), 2u + 12 + 4 + 8 + 8 + 4 + 6 * 18 + 2 * 8);
  const auto e = encode(some_events());
  EXPECT_EQ(e[0], 'E');
  EXPECT_EQ(e[1], 4);
  // A module's message: a request's 63 bytes, its opcode and its bytes (u32 + 10).
  EXPECT_EQ(encode(some_messages()).size(), 2u + 2 + 6 + 4 + 2 * (63 + 4 + 4) + 10);
  // kind, version, line, count, 5 frames of 19 bytes and their payloads, one grant (12 bytes more).
  EXPECT_EQ(encode(some_frames()).size(), 2u + 12 + 4 + 5 * 19 + (4 + 4 + 0 + 7 + 12) + 12);
  EXPECT_EQ(e[2], 3);  // little-endian: the line's scene, low byte first
  EXPECT_EQ(e[3], 0);
}

TEST(Wire, RefusesEveryStrictPrefix) {
  for (const auto& c : codecs()) {
    for (std::size_t n = 0; n < c.valid.size(); ++n) {
      auto got = c.decode_and_encode(std::string_view(c.valid).substr(0, n));
      ASSERT_FALSE(got) << c.name << " decoded from its first " << n << " bytes";
      EXPECT_EQ(got.code(), cluster_errc::bad_record);
      EXPECT_EQ(got.error().message.rfind(c.name, 0), 0u) << got.error().message;
    }
  }
}

TEST(Wire, RefusesAnAppendedByte) {
  for (const auto& c : codecs()) {
    auto got = c.decode_and_encode(c.valid + '\0');
    ASSERT_FALSE(got) << c.name;
    EXPECT_EQ(got.code(), cluster_errc::bad_record);
    EXPECT_NE(got.error().message.find("trailing"), std::string::npos) << got.error().message;
  }
}

TEST(Wire, RefusesAWrongKindByte) {
  auto got = decode_event_batch(encode(some_requests()));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.code(), cluster_errc::bad_record);
  EXPECT_NE(got.error().message.find("event batch: wrong kind byte 82"), std::string::npos)
      << got.error().message;
  for (const auto& c : codecs()) {
    auto bytes = c.valid;
    bytes[0] = 'x';
    auto wrong = c.decode_and_encode(bytes);
    ASSERT_FALSE(wrong) << c.name;
    EXPECT_NE(wrong.error().message.find("kind byte"), std::string::npos) << wrong.error().message;
  }
}

TEST(Wire, RefusesAnotherVersion) {
  for (const auto& c : codecs()) {
    auto bytes = c.valid;
    bytes[1] = 1;
    auto got = c.decode_and_encode(bytes);
    ASSERT_FALSE(got) << c.name;
    EXPECT_EQ(got.code(), cluster_errc::bad_record);
    EXPECT_NE(got.error().message.find("unsupported version 1"), std::string::npos) << got.error().message;
  }
}

TEST(Wire, RefusesAnAbsurdCountWithoutAllocating) {
  // An empty message ends with its count: make it 0xFFFFFFFF. Allocating for it would throw.
  const codec empties[] = {{"request batch", encode(request_batch{}), round_trip(decode_request_batch)},
                           {"answer batch", encode(answer_batch{}), round_trip(decode_answer_batch)},
                           {"event batch", encode(event_batch{}), round_trip(decode_event_batch)},
                           {"views", encode(views{}), round_trip(decode_views)}};
  for (const auto& c : empties) {
    auto bytes = c.valid;
    bytes.replace(bytes.size() - 4, 4, 4, '\xFF');
    auto got = c.decode_and_encode(bytes);
    ASSERT_FALSE(got) << c.name;
    EXPECT_EQ(got.code(), cluster_errc::bad_record);
    EXPECT_NE(got.error().message.find("4294967295"), std::string::npos) << got.error().message;
  }
  // The same inside a view: its standing count.
  views v;
  v.lines = {{{1, 1, 1}, 0, 1, {}}};
  auto bytes = encode(v);
  bytes.replace(bytes.size() - 4, 4, 4, '\xFF');
  EXPECT_EQ(decode_views(bytes).code(), cluster_errc::bad_record);
}

TEST(Wire, RefusesOutOfRangeEnums) {
  request_batch one_request{"gw", {{1, world_request::leave(2)}}};
  auto r = encode(one_request);
  r[18] = 42;  // kind, version, "gw" (2 + 2), count (4), ticket (8): the request kind
  auto request = decode_request_batch(r);
  ASSERT_FALSE(request);
  EXPECT_EQ(request.error().message, "request batch: unknown request kind 42 at byte 18");
  r[18] = static_cast<char>(static_cast<int>(world_request::kind::leave_party) + 1);
  EXPECT_EQ(decode_request_batch(r).code(), cluster_errc::bad_record);

  answer_batch one_error{"n1", 1, {{1, fail(world_errc::switching, "m")}}};
  auto a = encode(one_error);
  ASSERT_EQ(a[26], 0);  // kind, version, "n1", epoch, count, ticket: the ok flag, then the code
  a[27] = static_cast<char>(world_errc::ok);
  EXPECT_NE(decode_answer_batch(a).error().message.find("unknown error code 0 at byte 27"),
            std::string::npos);
  a[27] = static_cast<char>(world_errc::count_);
  EXPECT_EQ(decode_answer_batch(a).code(), cluster_errc::bad_record);
  a[27] = static_cast<char>(world_errc::switching);
  a[26] = 2;
  EXPECT_NE(decode_answer_batch(a).error().message.find("unknown ok flag 2"), std::string::npos);

  event_batch one_event{{1, 1, 1}, 0, 1, {{line_event::kind::moved, 1, {1, 1}, true}}};
  auto e = encode(one_event);
  e[38] = 4;  // kind, version, line, phase, seq, epoch, count: the event kind (3: changed, a look)
  EXPECT_NE(decode_event_batch(e).error().message.find("unknown event kind 4 at byte 38"), std::string::npos);
  e[38] = 0;
  ASSERT_EQ(e[55], 1);  // the event's last byte: the monster flag (2: a look follows)
  e[55] = 3;
  EXPECT_NE(decode_event_batch(e).error().message.find("unknown monster flag 3 at byte 55"),
            std::string::npos);
}

TEST(Wire, RandomBytesNeverCrashAndWhatDecodesReencodesTheSame) {
  std::mt19937 rng(20240601);
  auto byte = [&rng] { return static_cast<char>(rng() & 0xFF); };
  const auto all = codecs();
  const char kinds[] = {'R', 'A', 'E', 'V', 'C', 'c', 'T', 't'};
  int decoded = 0;
  auto check = [&](const std::string& bytes) {
    for (const auto& c : all) {
      auto got = c.decode_and_encode(bytes);
      if (!got) {
        EXPECT_EQ(got.code(), cluster_errc::bad_record);
        continue;
      }
      ++decoded;
      ASSERT_EQ(*got, bytes) << c.name;
    }
  };
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(rng() % 65, '\0');
    for (auto& b : bytes) b = byte();
    // Most random strings would stop at the header: give half of them a valid one.
    if (bytes.size() >= 2 && i % 2 == 0) {
      bytes[0] = kinds[rng() % std::size(kinds)];
      bytes[1] = 2;
    }
    check(bytes);
  }
  for (int i = 0; i < 20000; ++i) {
    auto bytes = all[rng() % all.size()].valid;
    const auto edits = 1 + rng() % 3;
    for (std::uint32_t k = 0; k < edits && !bytes.empty(); ++k) {
      const auto at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0:
          bytes[at] = byte();
          break;
        case 1:
          bytes.erase(at, 1);
          break;
        case 2:
          bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), byte());
          break;
        default:
          bytes.resize(at);
          break;
      }
    }
    check(bytes);
  }
  EXPECT_GT(decoded, 0);  // the mutations did reach values that decode, not only refusals
}

}  // namespace
}  // namespace scenert::cluster::wire

#include <scenert/cluster/wire.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include <scenert/runtime/assert.hpp>

namespace scenert::cluster::wire {

namespace {

constexpr std::uint8_t version = 4;
constexpr char request_kind = 'R', answer_kind = 'A', event_kind = 'E', views_kind = 'V', claim_kind = 'C',
               claim_answer_kind = 'c', arrival_kind = 'T', arrival_answer_kind = 't', frames_kind = 'F';

// Encoded sizes: what the writer reserves and the least an entry can take, so that a count the
// remaining bytes cannot hold is refused before anything is allocated for it.
constexpr std::size_t header_size = 2, string_head = 2, count_size = 4, line_size = 12;
constexpr std::size_t query_size = 1 + 8 + 4 + line_size + 8 + 8 + 8 + 4;  // a world_request
constexpr std::size_t request_size = 8 + query_size + string_head;
constexpr std::size_t result_ok_size = 1 + line_size + 4 + 4;
constexpr std::size_t result_min_size = 1 + 1 + string_head;  // an error with an empty message
constexpr std::size_t answer_min_size = 8 + result_min_size;
constexpr std::size_t event_size = 1 + 8 + 4 + 4 + 1;
constexpr std::size_t blob_head = 4;
constexpr std::size_t frame_min_size = 1 + 8 + 4 + blob_head + 1 + 1;  // a module frame, no grant
constexpr std::size_t view_min_size = line_size + 4 + 8 + count_size;
constexpr std::size_t max_string = 0xFFFF;

struct writer {
  std::string out;

  writer(std::size_t size, char kind) {
    out.reserve(size);
    out.push_back(kind);
    out.push_back(static_cast<char>(version));
  }
  template <class T>
  void uint(T v) {
    char b[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<char>(v >> (8 * i));
    out.append(b, sizeof(T));
  }
  template <class E>
  void code(E e) {
    uint(static_cast<std::uint8_t>(e));
  }
  // Names are 1-64 bytes; only an error message can be longer, and it is cut at 65535 bytes.
  void str(std::string_view s) {
    s = s.substr(0, max_string);
    uint(static_cast<std::uint16_t>(s.size()));
    out.append(s);
  }
  void count(std::size_t n) {
    SCENERT_ASSERT(n <= 0xFFFFFFFFu, "wire: more than 2^32-1 entries in one message");
    uint(static_cast<std::uint32_t>(n));
  }
  // A module's bytes, whole: opaque and of any size a frame may carry (never cut, unlike a name).
  void blob(std::string_view s) {
    count(s.size());
    out.append(s);
  }
  void line(line_handle l) {
    uint(l.scene);
    uint(l.line);
    uint(l.generation);
  }
};

/// Reads forward; the first failure sticks, and every read after it answers 0 or empty, so a
/// decoder reads straight through and checks once at the end (counts read as 0 stop its loops).
struct reader {
  std::string_view bytes;
  const char* message;  // the message type, for errors
  std::size_t pos = 0;
  std::optional<error<cluster_errc>> failed{};

  [[nodiscard]] bool ok() const { return !failed; }
  void bad(const std::string& why) {
    if (!failed) failed = fail(cluster_errc::bad_record, fmt::format("{}: {}", message, why));
  }
  bool need(std::size_t n, const char* reading) {
    if (failed) return false;
    if (bytes.size() - pos >= n) return true;
    bad(fmt::format("truncated at byte {} of {} (reading {})", pos, bytes.size(), reading));
    return false;
  }
  template <class T>
  T uint(const char* reading) {
    if (!need(sizeof(T), reading)) return 0;
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v = static_cast<T>(v | static_cast<T>(static_cast<unsigned char>(bytes[pos + i])) << (8 * i));
    pos += sizeof(T);
    return v;
  }
  /// A u8 that must lie in [lo, hi] (an enum or a flag); lo when it does not.
  std::uint8_t code(std::uint8_t lo, std::uint8_t hi, const char* name) {
    const auto at = pos;
    const auto v = uint<std::uint8_t>(name);
    if (ok() && (v < lo || v > hi)) bad(fmt::format("unknown {} {} at byte {}", name, v, at));
    return ok() ? v : lo;
  }
  void header(char kind) {
    const auto k = uint<std::uint8_t>("the kind byte");
    if (ok() && k != static_cast<std::uint8_t>(kind))
      bad(fmt::format("wrong kind byte {} at byte 0 (expected {} '{}')", k, int{kind}, kind));
    const auto v = uint<std::uint8_t>("the version byte");
    if (ok() && v != version) bad(fmt::format("unsupported version {} at byte 1 (expected {})", v, version));
  }
  std::string str(const char* reading) { return take(uint<std::uint16_t>(reading), reading); }
  std::string blob(const char* reading) { return take(uint<std::uint32_t>(reading), reading); }
  std::string take(std::size_t n, const char* reading) {
    if (!need(n, reading)) return {};
    std::string s(bytes.substr(pos, n));
    pos += n;
    return s;
  }
  /// A count of entries of at least `min_size` bytes each, refused when the rest cannot hold them.
  std::uint32_t count(std::size_t min_size, const char* reading) {
    const auto at = pos;
    const auto n = uint<std::uint32_t>(reading);
    if (ok() && n > (bytes.size() - pos) / min_size) {
      bad(fmt::format("{} {} at byte {} cannot fit in the {} bytes left", reading, n, at,
                      bytes.size() - pos));
      return 0;
    }
    return n;
  }
  line_handle line() {
    line_handle l;
    l.scene = uint<std::uint32_t>("a line handle");
    l.line = uint<std::uint32_t>("a line handle");
    l.generation = uint<std::uint32_t>("a line handle");
    return l;
  }
  template <class T>
  cluster_result<T> finish(T value) {
    if (ok() && pos != bytes.size())
      bad(fmt::format("{} trailing byte(s) after byte {}", bytes.size() - pos, pos));
    if (failed) return std::move(*failed);
    return value;
  }
};

void put_events(writer& w, const std::vector<line_event>& events) {
  w.count(events.size());
  for (const auto& e : events) {
    w.code(e.what);
    w.uint(e.player);
    w.uint(e.at.x);
    w.uint(e.at.y);
    // 0: a player; 1: an entity that looks like a table's monster; 2: an entity with its look after.
    const bool looked = e.monster && e.look != entity_look{};
    w.uint(static_cast<std::uint8_t>(looked ? 2 : e.monster ? 1 : 0));
    if (looked) {
      w.uint(e.look.kind);
      w.uint(e.look.state);
      w.uint(static_cast<std::uint32_t>(e.look.health));
    }
  }
}

std::vector<line_event> get_events(reader& r, const char* reading) {
  std::vector<line_event> events(r.count(event_size, reading));
  for (auto& e : events) {
    e.what = static_cast<line_event::kind>(
        r.code(0, static_cast<std::uint8_t>(line_event::kind::changed), "event kind"));
    e.player = r.uint<std::uint64_t>("an event's player");
    e.at.x = r.uint<std::uint32_t>("an event's cell");
    e.at.y = r.uint<std::uint32_t>("an event's cell");
    const auto flag = r.code(0, 2, "monster flag");
    e.monster = flag != 0;
    if (flag == 2) {
      e.look.kind = r.uint<std::uint16_t>("an entity's kind");
      e.look.state = r.uint<std::uint16_t>("an entity's state");
      e.look.health = static_cast<std::int32_t>(r.uint<std::uint32_t>("an entity's health"));
    }
  }
  return events;
}

void put_result(writer& w, const world_result& r) {
  w.uint(static_cast<std::uint8_t>(r ? 1 : 0));
  if (r) {
    w.line(r->line);
    w.uint(r->space);
    w.uint(r->phase);
  } else {
    w.code(r.error().code);
    w.str(r.error().message);
  }
}

std::size_t result_size(const world_result& r) {
  return r ? result_ok_size : result_min_size + std::min(r.error().message.size(), max_string);
}

void put_request(writer& w, const world_request& q) {
  w.code(q.what);
  w.uint(q.player);
  w.uint(q.scene);
  w.line(q.line);
  w.uint(q.mate);
  w.uint(q.to.x);
  w.uint(q.to.y);
  w.uint(q.party);
  w.uint(q.phase);
  if (q.what != world_request::kind::message) return;  // a module's message: its opcode and bytes
  w.uint(q.opcode);
  w.blob(q.bytes ? std::string_view(*q.bytes) : std::string_view());
}

// The bytes a request takes beyond query_size.
std::size_t request_extra(const world_request& q) {
  return q.what == world_request::kind::message ? 4 + blob_head + (q.bytes ? q.bytes->size() : 0) : 0;
}

world_request get_request(reader& r) {
  constexpr auto last = static_cast<std::uint8_t>(world_request::kind::message);
  world_request q;
  q.what = static_cast<world_request::kind>(r.code(0, last, "request kind"));
  q.player = r.uint<std::uint64_t>("a request's player");
  q.scene = r.uint<std::uint32_t>("a request's scene");
  q.line = r.line();
  q.mate = r.uint<std::uint64_t>("a request's mate");
  q.to.x = r.uint<std::uint32_t>("a request's cell");
  q.to.y = r.uint<std::uint32_t>("a request's cell");
  q.party = r.uint<std::uint64_t>("a request's party");
  q.phase = r.uint<std::uint32_t>("a request's phase");
  if (q.what == world_request::kind::message) {
    q.opcode = r.uint<std::uint32_t>("a message's opcode");
    q.bytes = std::make_shared<const std::string>(r.blob("a message's bytes"));
  }
  return q;
}

void put_frame(writer& w, const module_frame& f) {
  w.code(f.to);
  w.uint(f.who);
  w.uint(f.opcode);
  w.blob(f.bytes);
  w.uint(f.refusal);
  w.uint(static_cast<std::uint8_t>(f.granted ? 1 : 0));
  if (!f.granted) return;
  w.uint(f.item);
  w.uint(static_cast<std::uint64_t>(f.count));
}

module_frame get_frame(reader& r) {
  module_frame f;
  f.to = static_cast<module_frame::audience>(
      r.code(0, static_cast<std::uint8_t>(module_frame::audience::line), "frame audience"));
  f.who = r.uint<std::uint64_t>("a frame's addressee");
  f.opcode = r.uint<std::uint32_t>("a frame's opcode");
  f.bytes = r.blob("a frame's bytes");
  f.refusal = r.uint<std::uint8_t>("a frame's refusal");
  f.granted = r.code(0, 1, "grant flag") == 1;
  if (f.granted) {
    f.item = r.uint<std::uint32_t>("a grant's item");
    f.count = static_cast<std::int64_t>(r.uint<std::uint64_t>("a grant's count"));
  }
  return f;
}

world_result get_result(reader& r) {
  if (r.code(0, 1, "ok flag") == 1) {
    placement p;
    p.line = r.line();
    p.space = r.uint<std::uint32_t>("a placement's space");
    p.phase = r.uint<std::uint32_t>("a placement's phase");
    return p;
  }
  constexpr auto last = static_cast<std::uint8_t>(world_errc::count_) - 1;
  const auto code = static_cast<world_errc>(r.code(1, last, "error code"));
  return fail(code, r.str("an error's message"));
}

}  // namespace

std::string encode(const request_batch& b) {
  std::size_t size = header_size + string_head + b.gateway.size() + count_size;
  for (const auto& e : b.requests) size += request_size + request_extra(e.request) + e.to.size();
  writer w(size, request_kind);
  w.str(b.gateway);
  w.count(b.requests.size());
  for (const auto& [ticket, q, to] : b.requests) {
    w.uint(ticket);
    put_request(w, q);
    w.str(to);
  }
  return std::move(w.out);
}

std::string encode(const answer_batch& b) {
  std::size_t size = header_size + string_head + b.node.size() + 8 + count_size;
  for (const auto& a : b.answers) size += 8 + result_size(a.result);
  writer w(size, answer_kind);
  w.str(b.node);
  w.uint(b.epoch);
  w.count(b.answers.size());
  for (const auto& [ticket, answer] : b.answers) {
    w.uint(ticket);
    put_result(w, answer);
  }
  return std::move(w.out);
}

std::string encode(const event_batch& b) {
  writer w(header_size + line_size + 4 + 8 + 8 + count_size + event_size * b.events.size(), event_kind);
  w.line(b.line);
  w.uint(b.phase);
  w.uint(b.seq);
  w.uint(b.epoch);
  put_events(w, b.events);
  return std::move(w.out);
}

std::string encode(const frame_batch& b) {
  std::size_t size = header_size + line_size + count_size;
  for (const auto& f : b.frames) size += frame_min_size + f.bytes.size() + (f.granted ? 12 : 0);
  writer w(size, frames_kind);
  w.line(b.line);
  w.count(b.frames.size());
  for (const auto& f : b.frames) put_frame(w, f);
  return std::move(w.out);
}

std::string encode(const views& v) {
  std::size_t size = header_size + string_head + v.node.size() + 8 + count_size;
  for (const auto& s : v.lines) size += view_min_size + event_size * s.standing.size();
  writer w(size, views_kind);
  w.str(v.node);
  w.uint(v.epoch);
  w.count(v.lines.size());
  for (const auto& s : v.lines) {
    w.line(s.line);
    w.uint(s.phase);
    w.uint(s.seq);
    put_events(w, s.standing);
  }
  return std::move(w.out);
}

std::string encode(const claim& c) {
  writer w(header_size + 8 + string_head + c.gateway.size(), claim_kind);
  w.uint(c.player);
  w.str(c.gateway);
  return std::move(w.out);
}

std::string encode(const claim_answer& a) {
  writer w(header_size + string_head + a.node.size() + result_size(a.result), claim_answer_kind);
  w.str(a.node);
  put_result(w, a.result);
  return std::move(w.out);
}

std::string encode(const arrival& a) {
  writer w(header_size + 8 + 2 * string_head + a.from.size() + a.gateway.size() + query_size +
               request_extra(a.request),
           arrival_kind);
  w.uint(a.id);
  w.str(a.from);
  w.str(a.gateway);
  put_request(w, a.request);
  return std::move(w.out);
}

std::string encode(const arrival_answer& a) {
  writer w(header_size + 8 + string_head + a.node.size() + result_size(a.result), arrival_answer_kind);
  w.uint(a.id);
  w.str(a.node);
  put_result(w, a.result);
  return std::move(w.out);
}

cluster_result<request_batch> decode_request_batch(std::string_view bytes) {
  reader r{bytes, "request batch"};
  r.header(request_kind);
  request_batch b;
  b.gateway = r.str("the gateway");
  b.requests.resize(r.count(request_size, "the requests' count"));
  for (auto& [ticket, q, to] : b.requests) {
    ticket = r.uint<std::uint64_t>("a request's ticket");
    q = get_request(r);
    to = r.str("a request's target node");
  }
  return r.finish(std::move(b));
}

cluster_result<answer_batch> decode_answer_batch(std::string_view bytes) {
  reader r{bytes, "answer batch"};
  r.header(answer_kind);
  answer_batch b;
  b.node = r.str("the node");
  b.epoch = r.uint<std::uint64_t>("the epoch");
  b.answers.resize(r.count(answer_min_size, "the answers' count"));
  for (auto& [ticket, answer] : b.answers) {
    ticket = r.uint<std::uint64_t>("an answer's ticket");
    answer = get_result(r);
  }
  return r.finish(std::move(b));
}

cluster_result<event_batch> decode_event_batch(std::string_view bytes) {
  reader r{bytes, "event batch"};
  r.header(event_kind);
  event_batch b;
  b.line = r.line();
  b.phase = r.uint<std::uint32_t>("the phase");
  b.seq = r.uint<std::uint64_t>("the seq");
  b.epoch = r.uint<std::uint64_t>("the node's epoch");
  b.events = get_events(r, "the events' count");
  return r.finish(std::move(b));
}

cluster_result<frame_batch> decode_frame_batch(std::string_view bytes) {
  reader r{bytes, "frame batch"};
  r.header(frames_kind);
  frame_batch b;
  b.line = r.line();
  b.frames.resize(r.count(frame_min_size, "the frames' count"));
  for (auto& f : b.frames) f = get_frame(r);
  return r.finish(std::move(b));
}

bool is_frame_batch(std::string_view bytes) { return !bytes.empty() && bytes[0] == frames_kind; }

cluster_result<views> decode_views(std::string_view bytes) {
  reader r{bytes, "views"};
  r.header(views_kind);
  views v;
  v.node = r.str("the node");
  v.epoch = r.uint<std::uint64_t>("the node's epoch");
  v.lines.resize(r.count(view_min_size, "the lines' count"));
  for (auto& s : v.lines) {
    s.line = r.line();
    s.phase = r.uint<std::uint32_t>("a line's phase");
    s.seq = r.uint<std::uint64_t>("a line's seq");
    s.standing = get_events(r, "a line's standing count");
  }
  return r.finish(std::move(v));
}

cluster_result<claim> decode_claim(std::string_view bytes) {
  reader r{bytes, "claim"};
  r.header(claim_kind);
  claim c;
  c.player = r.uint<std::uint64_t>("the player");
  c.gateway = r.str("the gateway");
  return r.finish(std::move(c));
}

cluster_result<claim_answer> decode_claim_answer(std::string_view bytes) {
  reader r{bytes, "claim answer"};
  r.header(claim_answer_kind);
  claim_answer a;
  a.node = r.str("the node");
  a.result = get_result(r);
  return r.finish(std::move(a));
}

cluster_result<arrival> decode_arrival(std::string_view bytes) {
  reader r{bytes, "arrival"};
  r.header(arrival_kind);
  arrival a;
  a.id = r.uint<std::uint64_t>("the id");
  a.from = r.str("the node it comes from");
  a.gateway = r.str("the gateway");
  a.request = get_request(r);
  return r.finish(std::move(a));
}

cluster_result<arrival_answer> decode_arrival_answer(std::string_view bytes) {
  reader r{bytes, "arrival answer"};
  r.header(arrival_answer_kind);
  arrival_answer a;
  a.id = r.uint<std::uint64_t>("the id");
  a.node = r.str("the node");
  a.result = get_result(r);
  return r.finish(std::move(a));
}

}  // namespace scenert::cluster::wire

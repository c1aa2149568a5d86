#include <scenert/bots/admin_client.hpp>

#include <utility>  // before Asio and Beast: Boost 1.74's asio/awaitable.hpp needs it under g++ 12

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cctype>
#include <future>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace scenert::bots {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;

// A whole line of a crowded map is a few MB; Beast's default limit (8 MB) is too close.
constexpr std::uint64_t max_body_bytes = 256ull << 20;

std::string url_of(const endpoint& at, std::string_view target) {
  const bool v6 = at.host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}{}", v6 ? "[" : "", at.host, v6 ? "]" : "", at.port, target);
}

std::string lowercase_first(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// The first line of an error body, short enough for a log line.
std::string first_line(std::string_view body) {
  body = body.substr(0, body.find('\n'));
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.remove_suffix(1);
  return std::string(body.substr(0, 200));
}

struct http_answer {
  unsigned status = 0;
  std::string body;
};

// One GET on one connection, run to its end on a private io_context. Asynchronous operations, because
// tcp_stream's deadline holds for them only (Beast's synchronous calls ignore expires_after); one
// deadline covers connect, send and receive.
class get_exchange {
 public:
  get_exchange(const endpoint& at, std::string_view target, std::chrono::milliseconds timeout)
      : at_(at), timeout_(timeout) {
    request_.method(http::verb::get);
    request_.target(beast::string_view(target.data(), target.size()));
    request_.version(11);
    request_.set(http::field::host, fmt::format("{}:{}", at.host, at.port));
    request_.set(http::field::user_agent, "scenert-bots");
    request_.set(http::field::connection, "close");
    parser_.body_limit(max_body_bytes);
  }

  // The answer, or an error whose code names the stage that failed.
  result<http_answer, std::string> run() {
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    const auto addresses = resolver.resolve(at_.host, std::to_string(at_.port), ec);
    if (ec) return failure("resolve", ec);
    stream_.expires_after(timeout_);
    stream_.async_connect(addresses, [this](beast::error_code e, const tcp::endpoint&) { on_connect(e); });
    ioc_.run();
    if (ec_) return failure(stage_, ec_);
    return http_answer{parser_.get().result_int(), std::move(parser_.get().body())};
  }

 private:
  void on_connect(beast::error_code ec) {
    if (failed("connect", ec)) return;
    http::async_write(stream_, request_, [this](beast::error_code e, std::size_t) { on_send(e); });
  }
  void on_send(beast::error_code ec) {
    if (failed("send", ec)) return;
    http::async_read(stream_, buffer_, parser_, [this](beast::error_code e, std::size_t) { on_receive(e); });
  }
  void on_receive(beast::error_code ec) {
    if (failed("receive", ec)) return;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
  bool failed(const char* stage, beast::error_code ec) {
    if (!ec) return false;
    stage_ = stage;
    ec_ = ec;
    return true;
  }
  error<std::string> failure(std::string stage, beast::error_code ec) const {
    if (ec == beast::error::timeout)
      return fail(std::string("timeout"), fmt::format("no answer within {} ms", timeout_.count()));
    return fail(std::move(stage), lowercase_first(ec.message()));
  }

  endpoint at_;
  std::chrono::milliseconds timeout_;
  asio::io_context ioc_;
  beast::tcp_stream stream_{ioc_};
  http::request<http::empty_body> request_;
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
  std::string stage_;
  beast::error_code ec_;
};

// ---- /scenes -----------------------------------------------------------------------------------

// Reads one field, or says why not, naming its JSON path.
const json* field(const json& object, const std::string& path, std::string_view key, std::string& why) {
  if (!why.empty()) return nullptr;
  if (!object.is_object()) {
    why = fmt::format("{}: not an object", path);
    return nullptr;
  }
  auto it = object.find(key);
  if (it == object.end()) {
    why = fmt::format("{}/{}: missing", path, key);
    return nullptr;
  }
  return &*it;
}

std::uint32_t u32_field(const json& object, const std::string& path, std::string_view key, std::string& why) {
  const json* v = field(object, path, key, why);
  if (v == nullptr) return 0;
  if (!v->is_number_unsigned() || v->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max()) {
    why = fmt::format("{}/{}: not an unsigned 32-bit integer", path, key);
    return 0;
  }
  return v->get<std::uint32_t>();
}

std::string string_field(const json& object, const std::string& path, std::string_view key,
                         std::string& why) {
  const json* v = field(object, path, key, why);
  if (v == nullptr) return {};
  if (!v->is_string()) {
    why = fmt::format("{}/{}: not a string", path, key);
    return std::string();
  }
  return v->get<std::string>();
}

// An absent list reads as empty (non-towns have no "spaces").
const json& list_field(const json& object, const std::string& path, std::string_view key, std::string& why) {
  static const json empty = json::array();
  if (!why.empty() || !object.is_object() || !object.contains(key)) return empty;
  const json& v = object[std::string(key)];
  if (!v.is_array()) {
    why = fmt::format("{}/{}: not an array", path, key);
    return empty;
  }
  return v;
}

// Only open lines take players; quarantined and closing ones are on their way out.
void read_lines(const json& scene, const std::string& path, scene_entry& e, std::string& why) {
  const json& lines = list_field(scene, path, "lines", why);
  for (std::size_t i = 0; i < lines.size() && why.empty(); ++i) {
    const std::string p = fmt::format("{}/lines/{}", path, i);
    const std::uint32_t line = u32_field(lines[i], p, "line", why);
    const bool open = !lines[i].is_object() || !lines[i].contains("state") ||
                      string_field(lines[i], p, "state", why) == "open";
    if (open) e.lines.push_back(line);
  }
}

scene_entry read_scene(const json& scene, const std::string& path, std::string& why) {
  scene_entry e;
  e.id = u32_field(scene, path, "id", why);
  e.name = string_field(scene, path, "name", why);
  e.kind = string_field(scene, path, "kind", why);
  if (scene.is_object() && scene.contains("instances"))
    e.instances = string_field(scene, path, "instances", why);
  read_lines(scene, path, e, why);
  const json& spaces = list_field(scene, path, "spaces", why);
  for (std::size_t i = 0; i < spaces.size() && why.empty(); ++i)
    e.spaces.push_back(u32_field(spaces[i], fmt::format("{}/spaces/{}", path, i), "id", why));
  return e;
}

result<std::vector<scene_entry>, std::string> parse_scenes(std::string_view text) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return fail(std::string("bad_document"), std::string("/: not valid JSON"));
  std::string why;
  std::vector<scene_entry> scenes;
  if (!doc.is_object())
    why = "/: not an object";
  else if (!doc.contains("scenes"))
    why = "/scenes: missing";
  const json& list = list_field(doc, "", "scenes", why);
  for (std::size_t i = 0; i < list.size() && why.empty(); ++i)
    scenes.push_back(read_scene(list[i], fmt::format("/scenes/{}", i), why));
  if (!why.empty()) return fail(std::string("bad_document"), std::move(why));
  return scenes;
}

// Prefixes an error with the request it came from, keeping its code.
template <class T>
error<std::string> from(const endpoint& at, std::string_view target, const result<T, std::string>& r) {
  return fail(r.error().code, fmt::format("GET {}: {}", url_of(at, target), r.error().message));
}

// One line's views; an empty list when the line closed since /scenes named it (404).
result<std::vector<true_view>, std::string> read_line(const endpoint& admin, std::uint32_t scene,
                                                      std::uint32_t line, std::chrono::milliseconds timeout) {
  const std::string target = fmt::format("/lines/{}/{}", scene, line);
  auto body = http_get(admin, target, timeout);
  if (!body && body.code() == "404") return std::vector<true_view>{};
  if (!body) return body.error();
  auto views = parse_line_document(*body);
  if (!views) return from(admin, target, views);
  if (views->front().scene != scene || views->front().line != line)
    return fail(std::string("bad_document"),
                fmt::format("GET {}: answers scene {} line {}", url_of(admin, target), views->front().scene,
                            views->front().line));
  return views;
}

}  // namespace

result<std::string, std::string> http_get(const endpoint& at, std::string_view target,
                                          std::chrono::milliseconds timeout) {
  get_exchange exchange(at, target, timeout);
  auto answer = exchange.run();
  if (!answer) return from(at, target, answer);
  if (answer->status != 200)
    return fail(std::to_string(answer->status),
                fmt::format("GET {}: {} {}", url_of(at, target), answer->status, first_line(answer->body)));
  return std::move(answer->body);
}

result<std::vector<scene_entry>, std::string> read_scenes(const endpoint& admin,
                                                          std::chrono::milliseconds timeout) {
  auto body = http_get(admin, "/scenes", timeout);
  if (!body) return body.error();
  auto scenes = parse_scenes(*body);
  if (!scenes) return from(admin, "/scenes", scenes);
  return scenes;
}

result<std::vector<true_view>, std::string> read_truth(std::span<const endpoint> admins,
                                                       std::chrono::milliseconds timeout) {
  struct line_at {
    const endpoint* admin;
    std::uint32_t scene, line;
  };
  std::vector<line_at> lines;
  for (const auto& admin : admins) {
    auto scenes = read_scenes(admin, timeout);
    if (!scenes) return scenes.error();
    for (const auto& s : *scenes)
      for (const std::uint32_t line : s.lines) lines.push_back({&admin, s.id, line});
  }
  // Each line answers from its own next tick: read many at once, or a world of a hundred lines
  // takes a hundred ticks to read.
  constexpr std::size_t at_once = 16;
  std::vector<true_view> truth;
  for (std::size_t first = 0; first < lines.size(); first += at_once) {
    std::vector<std::future<result<std::vector<true_view>, std::string>>> reads;
    for (std::size_t i = first; i < std::min(lines.size(), first + at_once); ++i)
      reads.push_back(std::async(std::launch::async, [timeout, l = lines[i]] {
        return read_line(*l.admin, l.scene, l.line, timeout);
      }));
    for (auto& r : reads) {
      auto views = r.get();
      if (!views) return views.error();
      for (auto& v : *views) truth.push_back(std::move(v));
    }
  }
  return truth;
}

}  // namespace scenert::bots

#include "player_records.hpp"

#include <array>
#include <climits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace scenert::cluster::detail {
namespace {

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr int record_version = 1;

std::array<int, 256> decoding_table() {
  std::array<int, 256> t{};
  t.fill(-1);
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    t[static_cast<unsigned char>(alphabet[i])] = static_cast<int>(i);
  return t;
}

error<store_errc> not_a(const char* what, std::string_view why) {
  return {store_errc::io, fmt::format("not {} record ({})", what, why)};
}

bool known_version(const nlohmann::json& j) {
  if (j.is_discarded() || !j.is_object()) return false;
  const auto v = j.find("v");
  return v != j.end() && v->is_number_integer() && v->get<int>() == record_version;
}

}  // namespace

std::string base64url(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::uint32_t bits = 0;
  int held = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c, held += 8;
    while (held >= 6) out += alphabet[(bits >> (held -= 6)) & 63];
  }
  if (held > 0) out += alphabet[(bits << (6 - held)) & 63];
  return out;
}

std::optional<std::string> from_base64url(std::string_view text) {
  static const auto table = decoding_table();
  if (text.size() % 4 == 1) return std::nullopt;  // no length of bytes encodes to that
  std::string out;
  std::uint32_t bits = 0;
  int held = 0;
  for (unsigned char c : text) {
    const int v = table[c];
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(v), held += 6;
    if (held >= 8) out += static_cast<char>((bits >> (held -= 8)) & 0xff);
  }
  return out;
}

namespace {

// FNV-1a, 64 bits: the same on every node and every build (std::hash is neither).
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = 14695981039346656037ull ^ seed;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

template <class Visit>
void probes(std::string_view id, std::size_t bits, Visit visit) {
  const std::uint64_t h1 = fnv1a(id, 0), h2 = fnv1a(id, 0x9e3779b97f4a7c15ull) | 1;
  for (std::uint64_t i = 0; i < 4; ++i) visit(static_cast<std::size_t>((h1 + i * h2) % bits));
}

}  // namespace

void add_spent(std::string& filter, std::string_view id) {
  if (filter.empty()) filter.assign(spent_filter_bytes, '\0');
  probes(id, filter.size() * 8,
         [&](std::size_t bit) { filter[bit / 8] = static_cast<char>(filter[bit / 8] | (1 << (bit % 8))); });
}

bool may_be_spent(const std::string& filter, std::string_view id) {
  if (filter.empty()) return true;
  bool all = true;
  probes(id, filter.size() * 8,
         [&](std::size_t bit) { all = all && (filter[bit / 8] & (1 << (bit % 8))) != 0; });
  return all;
}

// '=' never appears in unpadded base64url: the empty name has a key of its own.
std::string account_key(std::string_view owner) {
  return "account." + (owner.empty() ? "=" : base64url(owner));
}
std::string spent_key(std::string_view encoded_grant_id) { return fmt::format("spent.{}", encoded_grant_id); }
std::string player_key(player_id player) { return fmt::format("player.{}", player); }

std::string encode(const account_record& r) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& [item, count] : r.items) items.push_back({item, count});
  return nlohmann::json{{"v", record_version},
                        {"items", std::move(items)},
                        {"recent", r.recent},
                        {"spent", r.spent},
                        {"spent_filter", base64url(r.spent_filter)}}
      .dump();
}

// Every field checked for its type: a record another program wrote wrong is an error, never a throw.
result<account_record, store_errc> decode_account(std::string_view value) {
  auto j = nlohmann::json::parse(value, nullptr, false);
  if (!known_version(j)) return not_a("an account", "no JSON object of a known version");
  const auto items = j.find("items"), recent = j.find("recent"), spent = j.find("spent");
  if (items == j.end() || !items->is_array() || recent == j.end() || !recent->is_array() ||
      spent == j.end() || !spent->is_number_unsigned())
    return not_a("an account", "items, recent or spent missing");
  account_record r;
  r.spent = spent->get<std::uint64_t>();
  if (const auto filter = j.find("spent_filter"); filter != j.end()) {  // absent: every id may be spent
    auto bits = filter->is_string() ? from_base64url(filter->get<std::string>()) : std::nullopt;
    if (!bits || (!bits->empty() && bits->size() != spent_filter_bytes))
      return not_a("an account", "a spent_filter that is not one");
    r.spent_filter = std::move(*bits);
  }
  for (const auto& i : *items) {
    if (!i.is_array() || i.size() != 2 || !i[0].is_number_unsigned() ||
        i[0].get<std::uint64_t>() > UINT32_MAX || !i[1].is_number_integer())
      return not_a("an account", "an item that is not [item, count]");
    r.items[i[0].get<item_id>()] = i[1].get<std::int64_t>();
  }
  for (const auto& id : *recent) {
    if (!id.is_string()) return not_a("an account", "a grant id that is not a string");
    r.recent.push_back(id.get<std::string>());
  }
  return r;
}

std::vector<holding> holdings_of(const account_record& r) {
  std::vector<holding> out;
  out.reserve(r.items.size());
  for (const auto& [item, count] : r.items) out.push_back({item, count});
  return out;
}

std::string encode(const player_record& r) {
  return nlohmann::json{{"v", record_version}, {"owner", base64url(r.owner)}, {"gone_ms", r.gone_ms}}.dump();
}

result<player_record, store_errc> decode_player(std::string_view value) {
  auto j = nlohmann::json::parse(value, nullptr, false);
  if (!known_version(j)) return not_a("a player", "no JSON object of a known version");
  const auto owner = j.find("owner"), gone = j.find("gone_ms");
  if (owner == j.end() || !owner->is_string() || gone == j.end() || !gone->is_number_integer())
    return not_a("a player", "owner or gone_ms missing");
  auto bytes = from_base64url(owner->get<std::string>());
  if (!bytes) return not_a("a player", "an owner that is not base64url");
  return player_record{std::move(*bytes), gone->get<std::int64_t>()};
}

}  // namespace scenert::cluster::detail

#include <scenert/bots/websocket.hpp>

#include <fmt/format.h>

namespace scenert::bots {
namespace {

constexpr std::size_t max_answer_header = 8192;

std::uint8_t byte_at(std::string_view s, std::size_t i) { return static_cast<std::uint8_t>(s[i]); }

// A header's size once its first two bytes are known (a server's frames carry no mask key).
std::size_t header_size_of(std::string_view h) {
  if (h.size() < 2) return 2;
  const std::uint8_t len7 = byte_at(h, 1) & 0x7F;
  return 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((byte_at(h, 1) & 0x80) != 0 ? 4 : 0);
}

error<ws_errc> bad(std::string message) { return fail(ws_errc::bad_frame, std::move(message)); }

}  // namespace

std::string ws_upgrade_request(std::string_view host, std::string_view path, std::string_view subprotocol,
                               std::string_view key) {
  std::string r = fmt::format(
      "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {}\r\n"
      "Sec-WebSocket-Version: 13\r\n",
      path, host, key);
  if (!subprotocol.empty()) r += fmt::format("Sec-WebSocket-Protocol: {}\r\n", subprotocol);
  return r + "\r\n";
}

std::string ws_key(std::uint64_t hi, std::uint64_t lo) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::uint8_t in[16];
  for (int i = 0; i < 8; ++i) {
    in[i] = static_cast<std::uint8_t>(hi >> (56 - 8 * i));
    in[8 + i] = static_cast<std::uint8_t>(lo >> (56 - 8 * i));
  }
  std::string out;
  for (int i = 0; i < 15; i += 3) {
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8) | in[i + 2];
    for (int k = 18; k >= 0; k -= 6) out += alphabet[(v >> k) & 63];
  }
  out += alphabet[in[15] >> 2];
  out += alphabet[(in[15] & 3) << 4];
  return out + "==";
}

result<std::size_t, ws_errc> ws_upgrade_answer(std::string_view bytes) {
  const std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > max_answer_header)
      return fail(ws_errc::refused,
                  fmt::format("the answer to the upgrade has no end within {} bytes", max_answer_header));
    return std::size_t{0};
  }
  const std::string_view status = bytes.substr(0, bytes.find("\r\n"));
  if (!status.starts_with("HTTP/1.1 101"))
    return fail(ws_errc::refused, fmt::format("the server refused the upgrade: \"{}\"", status));
  return end + 4;
}

void ws_append_masked(std::string& out, std::string_view payload, std::uint32_t mask, std::uint8_t opcode) {
  out += static_cast<char>(0x80 | opcode);  // FIN
  const std::uint64_t n = payload.size();
  if (n < 126) {
    out += static_cast<char>(0x80 | n);
  } else if (n <= 0xFFFF) {
    out += static_cast<char>(0x80 | 126);
    for (int k = 8; k >= 0; k -= 8) out += static_cast<char>((n >> k) & 0xFF);
  } else {
    out += static_cast<char>(0x80 | 127);
    for (int k = 56; k >= 0; k -= 8) out += static_cast<char>((n >> k) & 0xFF);
  }
  const char key[4] = {static_cast<char>(mask >> 24), static_cast<char>(mask >> 16),
                       static_cast<char>(mask >> 8), static_cast<char>(mask)};
  out.append(key, 4);
  const std::size_t at = out.size();
  out.append(payload);
  for (std::size_t i = 0; i < payload.size(); ++i) out[at + i] = static_cast<char>(out[at + i] ^ key[i & 3]);
}

result<bool, ws_errc> ws_unframer::take_header(std::string_view& bytes) {
  while (held_.size() < header_size_of(held_)) {
    if (bytes.empty()) return false;
    held_ += bytes.front();
    bytes.remove_prefix(1);
  }
  const std::uint8_t b0 = byte_at(held_, 0), b1 = byte_at(held_, 1);
  const bool fin = (b0 & 0x80) != 0;
  const std::uint8_t op = b0 & 0x0F;
  if ((b0 & 0x70) != 0) return bad("a frame with reserved bits set (no extension was agreed)");
  if ((b1 & 0x80) != 0) return bad("a masked frame from the server");
  std::uint64_t length = b1 & 0x7F;
  if (length >= 126) {
    length = 0;
    for (std::size_t i = 2; i < held_.size(); ++i) length = (length << 8) | byte_at(held_, i);
    if (length >> 63 != 0) return bad("a frame length with its top bit set");
  }
  if ((op & 8) != 0) {
    if (op != close && op != ping && op != pong) return bad(fmt::format("an unknown control opcode {}", op));
    if (!fin || length > 125) return bad("a control frame fragmented or over 125 bytes");
    opcode_ = op;
  } else {
    if (op == 1) return bad("a text message (the protocol is binary)");
    if (op != 0 && op != 2) return bad(fmt::format("an unknown data opcode {}", op));
    if ((op == 0) != in_message_)
      return bad(op == 0 ? "a continuation outside a message" : "a new message inside a fragmented one");
    in_message_ = !fin;
    opcode_ = 2;
  }
  held_.clear();
  left_ = length;
  in_frame_ = true;
  return true;
}

}  // namespace scenert::bots

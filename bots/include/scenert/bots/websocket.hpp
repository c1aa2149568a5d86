#pragma once
// The bots' side of WebSocket (RFC 6455) on a plain socket. A bot reads the server's messages in
// bulk, as many as one read returns, as TCP bots do: one read per message (through Beast) kept 1,000
// WebSocket bots seconds behind what the server had sent them. So the client does its own upgrade,
// unframes what it reads and masks what it writes.

#include <cstdint>
#include <string>
#include <string_view>

#include <scenert/runtime/result.hpp>

namespace scenert::bots {

enum class ws_errc : std::uint8_t { refused, bad_frame };

/// The upgrade request for `path` on `host`, asking for `subprotocol` unless it is empty. `key` is
/// Sec-WebSocket-Key: 16 bytes in base64 (see ws_key).
std::string ws_upgrade_request(std::string_view host, std::string_view path, std::string_view subprotocol,
                               std::string_view key);

/// A Sec-WebSocket-Key from 128 bits.
std::string ws_key(std::uint64_t hi, std::uint64_t lo);

/// The server's answer to the upgrade, read so far: the size of its header once it is whole (the
/// bytes after it are the first messages), 0 while it is not, an error when it is not "101".
result<std::size_t, ws_errc> ws_upgrade_answer(std::string_view bytes);

/// Appends `payload` as one masked binary message (a client must mask: RFC 6455 5.3).
void ws_append_masked(std::string& out, std::string_view payload, std::uint32_t mask,
                      std::uint8_t opcode = 2);

/// Cuts the server's byte stream into messages: the data of binary messages (continuations
/// included) goes to `data` as it arrives, a piece at a time, and each control frame whole to
/// `control(opcode, payload)`. Only a header split across reads is kept (a few bytes per bot).
class ws_unframer {
 public:
  static constexpr std::uint8_t close = 8, ping = 9, pong = 10;

  template <class Data, class Control>
  result<void, ws_errc> feed(std::string_view bytes, Data&& data, Control&& control) {
    for (;;) {
      if (!in_frame_) {
        if (bytes.empty()) return {};
        auto header = take_header(bytes);
        if (!header) return header.error();
        if (!*header) return {};  // the rest of the header is still on its way
      }
      const std::size_t n = left_ < bytes.size() ? static_cast<std::size_t>(left_) : bytes.size();
      if (n != 0) {
        if (is_control())
          held_.append(bytes.data(), n);
        else
          data(bytes.substr(0, n));
        bytes.remove_prefix(n);
        left_ -= n;
      }
      if (left_ != 0) return {};  // every byte read went into this frame
      in_frame_ = false;
      if (is_control()) {
        control(opcode_, std::string_view(held_));
        held_.clear();
      }
    }
  }

 private:
  [[nodiscard]] bool is_control() const noexcept { return (opcode_ & 8) != 0; }
  // Takes a frame's header from the front of `bytes` (after what an earlier read left): true once
  // whole, and then the frame has begun (`left_` payload bytes to come, maybe none).
  result<bool, ws_errc> take_header(std::string_view& bytes);

  std::string held_;  // a header split across reads, then a control frame's payload
  std::uint64_t left_ = 0;
  std::uint8_t opcode_ = 0;
  bool in_frame_ = false;
  bool in_message_ = false;  // a binary message whose last frame has not come yet
};

}  // namespace scenert::bots

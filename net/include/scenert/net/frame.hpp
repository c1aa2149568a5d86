#pragma once
/// Framing on TCP (and inside each binary WebSocket message): an 8-byte header, `uint32 length`
/// then `uint32 id`, both little-endian; the length counts only the payload that follows.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <scenert/runtime/result.hpp>

namespace scenert::net {

inline constexpr std::size_t header_size = 8;
inline constexpr std::uint32_t default_max_payload = 64 * 1024;

/// Why a byte stream or a payload was refused.
enum class wire_errc : std::uint8_t { ok, oversize, unknown_id, bad_payload, count_ };
inline constexpr std::string_view wire_errc_names[] = {"ok", "oversize", "unknown_id", "bad_payload"};
static_assert(std::size(wire_errc_names) == static_cast<std::size_t>(wire_errc::count_),
              "wire_errc: name every code");
[[nodiscard]] constexpr std::string_view to_string(wire_errc e) noexcept {
  return wire_errc_names[static_cast<std::size_t>(e)];
}

/// Appends a header for a payload of `length` bytes with frame id `id`.
inline void append_header(std::string& out, std::uint32_t id, std::uint32_t length) {
  char h[header_size];
  for (int i = 0; i < 4; ++i) {
    h[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    h[4 + i] = static_cast<char>((id >> (8 * i)) & 0xff);
  }
  out.append(h, header_size);
}

/// Reads a little-endian uint32 from 4 bytes.
[[nodiscard]] inline std::uint32_t read_u32(const char* p) noexcept {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

/// Cuts a byte stream into frames. Whole frames inside one read are handed out in place; only a
/// frame split across reads is copied, and only once its header said it fits the cap: a header
/// that announces more than `max_payload` stops the stream before a byte of it is buffered.
class frame_reader {
 public:
  explicit frame_reader(std::uint32_t max_payload = default_max_payload) : max_(max_payload) {}

  /// Calls `fn(std::uint32_t id, std::string_view payload)` for each whole frame in `bytes`, in
  /// order, and keeps a trailing partial frame for the next call. After an error the stream is
  /// lost (its frame boundaries are unknown): the caller closes the connection.
  template <class F>
  result<void, wire_errc> feed(std::string_view bytes, F&& fn) {
    if (failed_) return fail(wire_errc::oversize, "the stream already failed");
    while (!bytes.empty()) {
      if (held_.empty() && bytes.size() >= header_size) {  // the fast path: in place
        const std::uint32_t length = read_u32(bytes.data());
        if (length > max_) return oversize(length);
        if (bytes.size() - header_size >= length) {
          fn(read_u32(bytes.data() + 4), bytes.substr(header_size, length));
          bytes.remove_prefix(header_size + length);
          continue;
        }
      }
      // A partial frame: gather its header, check it, then gather its payload.
      if (held_.size() < header_size) {
        const std::size_t take = std::min(header_size - held_.size(), bytes.size());
        held_.append(bytes.data(), take);
        bytes.remove_prefix(take);
        if (held_.size() < header_size) break;
        if (const std::uint32_t length = read_u32(held_.data()); length > max_) return oversize(length);
      }
      const std::size_t want = header_size + read_u32(held_.data());
      const std::size_t take = std::min(want - held_.size(), bytes.size());
      held_.append(bytes.data(), take);
      bytes.remove_prefix(take);
      if (held_.size() < want) break;
      fn(read_u32(held_.data() + 4), std::string_view(held_).substr(header_size));
      held_.clear();
    }
    return {};
  }

  /// Bytes of an unfinished frame are held (a read timeout applies to them).
  [[nodiscard]] bool mid_frame() const noexcept { return !held_.empty(); }
  [[nodiscard]] std::uint32_t max_payload() const noexcept { return max_; }

 private:
  result<void, wire_errc> oversize(std::uint32_t length) {
    failed_ = true;
    held_.clear();
    return fail(wire_errc::oversize, "a frame of " + std::to_string(length) + " bytes is over the limit of " +
                                         std::to_string(max_) + " bytes");
  }

  std::uint32_t max_;
  bool failed_ = false;
  std::string held_;
};

}  // namespace scenert::net

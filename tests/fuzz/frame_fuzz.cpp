// libFuzzer target over the wire: random byte streams through the frame reader (cut where the
// first byte says), each frame through both decoders, and each decoded message written again; a
// 1006's blocks through their decoder.
// A crash, a sanitizer report or a message that does not survive its own round trip fails.
#include <scenert/net/map_blocks.hpp>
#include <scenert/net/messages.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  scenert::net::frame_reader reader(4096);
  auto on_frame = [](std::uint32_t id, std::string_view payload) {
    if (auto c = scenert::net::decode_client(id, payload)) {
      std::string out;
      scenert::net::append_frame(out, c.value());
      if (out.size() < scenert::net::header_size) std::abort();
    }
    if (auto s = scenert::net::decode_server(id, payload)) {
      std::string out;
      scenert::net::append_frame(out, s.value());
      if (out.size() < scenert::net::header_size) std::abort();
      // Small maps only: a bitset of up to 128 MiB is allowed, and would only slow the fuzzer down.
      if (const auto* i = std::get_if<scenert::net::scene_info>(&s.value())) {
        const auto w = static_cast<std::uint32_t>(i->width), h = static_cast<std::uint32_t>(i->height);
        if (std::uint64_t{w} * h <= (1U << 20))
          (void)scenert::net::decode_blocks(w, h, i->block_rows, i->blocked);
      }
    }
  };
  while (!bytes.empty()) {
    const auto piece = bytes.substr(0, chunk);
    bytes.remove_prefix(piece.size());
    if (!reader.feed(piece, on_frame)) break;
  }
  return 0;
}

#pragma once
/// The messages between gateways and scene nodes, as bytes on NATS subjects. Little-endian,
/// fixed-width fields, one leading byte naming the message kind and one its version; a message
/// that does not decode is `bad_record`, naming what was read and where it ended.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <scenert/cluster/cluster_errc.hpp>
#include <scenert/scene/line_event.hpp>
#include <scenert/scene/world.hpp>

namespace scenert::cluster::wire {

/// One request of a gateway's client, with the gateway's ticket for its answer.
struct request_entry {
  std::uint64_t ticket = 0;
  world_request request;
  /// A journey: the node that is to place the player with `request`; this node, where it stands
  /// now, hands it over (an `arrival`) and lets it go once it is placed there. Empty: apply here.
  std::string to{};
};

/// A gateway's requests to one node since its last batch (subject scenert.node.NODE.requests).
struct request_batch {
  std::string gateway;  ///< where the answers go: scenert.gateway.GATEWAY.answers
  std::vector<request_entry> requests;
};

/// The node's answer to one ticket.
struct answer_entry {
  std::uint64_t ticket = 0;
  world_result result = placement{};
};

/// A node's answers to one gateway since its last batch.
struct answer_batch {
  std::string node;
  std::uint64_t epoch = 0;  ///< the node's epoch when it answered
  std::vector<answer_entry> answers;
};

/// One line's (or phase's) events of one tick (subject scenert.line.SCENE.LINE). `seq` counts the
/// batches of that (line generation, phase) from 1, so a gateway that misses one knows it.
struct event_batch {
  line_handle line;
  phase_id phase = 0;
  std::uint64_t seq = 0;
  std::vector<line_event> events;
  /// The sending node's epoch: a gateway hears no start of a node it declared dead (one stopped,
  /// declared dead and let run again publishes what it did before it learns so).
  std::uint64_t epoch = 0;
};

/// One line's game-module frames of a tick, on the line's events subject right after its events
/// (so a gateway reads them in the line's order). Not numbered: a batch lost is not made good (a
/// module's frames are its own to repeat).
struct frame_batch {
  line_handle line;
  std::vector<module_frame> frames;
};

/// Who stands on one line (or phase) after its batch `seq`: every player and monster as `entered`.
struct view_state {
  line_handle line;
  phase_id phase = 0;
  std::uint64_t seq = 0;
  std::vector<line_event> standing;
};

/// A node's lines as they stand (the answer to scenert.node.NODE.views).
struct views {
  std::string node;
  std::vector<view_state> lines;
  std::uint64_t epoch = 0;  ///< the answering node's epoch (as event_batch's)
};

/// A gateway resuming a client whose player another gateway held (subject scenert.node.NODE.claim,
/// request/reply): does this node host the player, and where does it stand?
struct claim {
  player_id player = 0;
  std::string gateway;  ///< the gateway that holds the player from now on
};

/// A node's answer to a claim: where the player stands, or not_in_scene when it hosts no such player.
struct claim_answer {
  std::string node;
  world_result result = placement{};
};

/// A player handed over between nodes (subject scenert.node.TO.arrive, replies to
/// scenert.node.FROM.arrived): `to` places it with `request`, its answers going to `gateway`. The same
/// message on scenert.node.TO.release takes back an arrival its node gave up waiting for.
struct arrival {
  std::uint64_t id = 0;  ///< the handing node's number for it
  std::string from, gateway;
  world_request request;
};

/// Where the arrival placed the player, or why not.
struct arrival_answer {
  std::uint64_t id = 0;
  std::string node;
  world_result result = placement{};
};

[[nodiscard]] std::string encode(const request_batch& b);
[[nodiscard]] std::string encode(const answer_batch& b);
[[nodiscard]] std::string encode(const event_batch& b);
[[nodiscard]] std::string encode(const frame_batch& b);
[[nodiscard]] std::string encode(const views& v);
[[nodiscard]] std::string encode(const claim& c);
[[nodiscard]] std::string encode(const claim_answer& a);
[[nodiscard]] std::string encode(const arrival& a);
[[nodiscard]] std::string encode(const arrival_answer& a);

[[nodiscard]] cluster_result<request_batch> decode_request_batch(std::string_view bytes);
[[nodiscard]] cluster_result<answer_batch> decode_answer_batch(std::string_view bytes);
[[nodiscard]] cluster_result<event_batch> decode_event_batch(std::string_view bytes);
[[nodiscard]] cluster_result<frame_batch> decode_frame_batch(std::string_view bytes);
/// Whether a message on a line's subject is a frame batch (else an event batch).
[[nodiscard]] bool is_frame_batch(std::string_view bytes);
[[nodiscard]] cluster_result<views> decode_views(std::string_view bytes);
[[nodiscard]] cluster_result<claim> decode_claim(std::string_view bytes);
[[nodiscard]] cluster_result<claim_answer> decode_claim_answer(std::string_view bytes);
[[nodiscard]] cluster_result<arrival> decode_arrival(std::string_view bytes);
[[nodiscard]] cluster_result<arrival_answer> decode_arrival_answer(std::string_view bytes);

}  // namespace scenert::cluster::wire

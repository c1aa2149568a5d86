#pragma once
/// SIGINT / SIGTERM as an event the main thread waits for, instead of an async handler.

#include <chrono>

namespace scenert::apps {

/// Blocks SIGINT and SIGTERM for this thread and every thread it starts afterwards, so the
/// signals stay pending until wait_for_shutdown() takes them. Call first thing in main().
void block_shutdown_signals();

/// Waits up to `timeout` for SIGINT or SIGTERM; true when one arrived.
[[nodiscard]] bool wait_for_shutdown(std::chrono::milliseconds timeout);

}  // namespace scenert::apps

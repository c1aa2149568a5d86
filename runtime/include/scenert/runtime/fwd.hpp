#pragma once
/// Forward declarations of the runtime's public types.

namespace scenert {
class clock;
class manual_clock;
class service;
class processor_pool;
struct tick_context;
struct pool_options;
struct pool_metrics;
struct service_metrics;
enum class pool_errc;
}  // namespace scenert

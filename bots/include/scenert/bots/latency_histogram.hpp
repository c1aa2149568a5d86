#pragma once
/// latency_histogram: the bots' durations in scenert's one histogram, 64 buckets per power of two
/// from 64 ns (within 1/64 of a value above it) to 2^62 ns; one per worker thread, merged for the
/// report.

#include <cstdint>

#include <scenert/runtime/log_histogram.hpp>

namespace scenert::bots {

using latency_histogram = log_histogram<6, 6, 62, std::uint64_t>;

}  // namespace scenert::bots

// How much per-connection state the capture tools keep at most (docs/robustness.md, "Limits"):
// a capture that opens ever more connections or UDP flows would otherwise make them hold ever
// more memory. The analysis (analysis.hpp), the conformance checker (conformance.hpp) and the
// table of UDP flows (flow_table.hpp) each keep at most this many entries by default; beyond it a
// new connection is not analysed, a new flow not remembered, and each says how many frames that
// left out. `scaleup stats`, `dump` and `check` take --max-connections, the Wireshark plugin a
// preference of the same meaning.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstddef>

namespace scaleup::dissect {

// What fits in about 1 GB: `scaleup stats` keeps about 400 bytes a connection over UDP (its
// analysis, its RTTs and PSNs in flight, the UDP flow: docs/robustness.md), `check` less.
inline constexpr std::size_t default_max_connections = 2'500'000;

}  // namespace scaleup::dissect

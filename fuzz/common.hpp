// Shared bits of the fuzz targets: a sink that discards, and a checked abort.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace scaleup::fuzz {

// An output sink for the printers that keeps nothing (but touches every byte it is given).
struct null_sink {
  std::size_t bytes = 0;
  void operator()(std::string_view s) noexcept {
    for (const char c : s) bytes += static_cast<unsigned char>(c) != 0 ? 1 : 0;
  }
};

// A broken invariant: crash loudly so both libFuzzer and the replay driver see it.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

}  // namespace scaleup::fuzz

// Queries of a dissected tree shared by the unit tests that dissect frames.
#pragma once

#include <scaleup/dissect/tree.hpp>

#include <string_view>

namespace scaleup::test {

// The R-CRC's status as the tree names it ("good", "bad", ...), or "<absent>" without one.
inline std::string_view rcrc_status(const dissect::tree& t) {
  const auto* f = t.find("sue.rcrc.status");
  return f ? f->value_name() : std::string_view("<absent>");
}

}  // namespace scaleup::test

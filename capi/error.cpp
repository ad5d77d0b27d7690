// Error names for C: wire::to_string(errc) as NUL-terminated strings.
#include "c_abi.hpp"

#include <array>

namespace {

// In errc's order; a string_view of to_string() is not known to end in a NUL, these are.
constexpr std::array<const char*, 11> errc_names{
    "none",       "truncated", "value_too_big", "bad_value",    "reserved_nonzero", "bad_checksum",
    "bad_length", "no_space",  "unsupported",   "not_captured", "unreachable"};

static_assert([] {
  for (std::size_t i = 0; i < errc_names.size(); ++i)
    if (scaleup::wire::to_string(static_cast<scaleup::wire::errc>(i)) != errc_names[i])
      return false;
  return true;
}());

}  // namespace

extern "C" const char* scaleup_errc_name(int code) {
  return code >= 0 && static_cast<std::size_t>(code) < errc_names.size() ? errc_names[code]
                                                                         : "unknown";
}

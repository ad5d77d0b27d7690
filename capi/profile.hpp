// The command profile of scaleup.h: a pack::profile over command types copied into the caller's
// memory, and the profile a C call means by a scaleup_profile pointer (NULL: the default).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "c_abi.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"

namespace scaleup::capi {

// The types a profile is built over: filled before the pack::profile, whose constructor indexes
// them.
struct command_types {
  command_types(const scaleup_command_type* c, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i)
      types[i] =
          pack::command_type{.code = c[i].code,
                             .name = c[i].name ? std::string_view(c[i].name) : std::string_view(),
                             .control_units = c[i].control_units,
                             .has_data = c[i].has_data,
                             .vc = c[i].vc};
  }
  std::array<pack::command_type, pack::max_types> types{};
};

}  // namespace scaleup::capi

// The opaque handle of scaleup.h. The caller checks n <= pack::max_types first.
struct scaleup_profile : scaleup::capi::command_types {
  scaleup_profile(std::string_view name, const scaleup_command_type* c, std::size_t n) noexcept
      : command_types(c, n), impl(name, std::span(types.data(), n)) {}
  scaleup::pack::profile impl;
};

namespace scaleup::capi {

inline const pack::profile& profile_of(const scaleup_profile* p) noexcept {
  return p ? p->impl : pack::default_profile;
}

}  // namespace scaleup::capi

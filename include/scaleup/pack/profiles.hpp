// The command profiles scaleup ships, by name (the CLI's --profile). A user profile is a
// constexpr pack::profile of its own; it needs no registration to be used by the library.
#pragma once

#include <array>
#include <string_view>

#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"

namespace scaleup::pack {

inline constexpr std::array<const profile*, 1> shipped_profiles{&default_profile};

constexpr const profile* find_profile(std::string_view name) noexcept {
  for (const profile* p : shipped_profiles)
    if (p->name() == name) return p;
  return nullptr;
}

}  // namespace scaleup::pack

// Random valid commands of any profile, for generators, tests and fuzzing: every field gets a
// random value of its width (reserved fields zero), the data random bytes. Works from the
// profile's tables alone, so a user profile gets the same treatment as the default one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>

#include "scaleup/pack/command.hpp"

namespace scaleup::pack {

// Writes one command of at most `max_bytes` into `out`; 0 bytes when no type fits.
template <class Rng>
wire::result<std::size_t> random_command(const profile& prof, Rng& rng, std::size_t max_bytes,
                                         mutable_bytes out, std::size_t max_data = max_data_bytes) {
  const auto types = prof.types();
  std::array<const command_type*, max_types> fit{};
  std::size_t n = 0;
  for (const auto& t : types)
    if (t.control_bytes() + (t.has_data ? 1 : 0) <= max_bytes) fit[n++] = &t;
  if (n == 0) return std::size_t{0};
  const command_type& t = *fit[std::uniform_int_distribution<std::size_t>(0, n - 1)(rng)];
  std::array<std::uint8_t, max_control_bytes> control{};
  std::uniform_int_distribution<unsigned> byte(0, 255);
  for (std::size_t i = 0; i < t.control_bytes(); ++i)
    control[i] = static_cast<std::uint8_t>(byte(rng));
  for (const auto& f : t.fields) {
    if (f.check == wire::rule::reserved) wire::put_bits(control.data(), f.bit, f.width, 0);
    if (f.check == wire::rule::fixed) wire::put_bits(control.data(), f.bit, f.width, f.expect);
  }
  control[0] = t.code;
  std::array<std::uint8_t, max_data_bytes> data{};
  std::size_t len = 0;
  if (t.has_data) {
    const std::size_t room = max_bytes - t.control_bytes();
    const std::size_t hi = room < max_data ? room : max_data;
    len = std::uniform_int_distribution<std::size_t>(1, hi < 1 ? 1 : hi)(rng);
    for (std::size_t i = 0; i < len; ++i) data[i] = static_cast<std::uint8_t>(byte(rng));
  }
  return emit_command(prof, bytes(control.data(), t.control_bytes()), bytes(data.data(), len), out);
}

}  // namespace scaleup::pack

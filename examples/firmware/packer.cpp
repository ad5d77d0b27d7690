#include <array>

#include "firmware.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"

namespace fw {
namespace {
// 16 destinations, 2 VCs, 16 queued commands: static storage, no heap.
// Payloads of up to 128 bytes: a firmware's PDU buffers are small.
scaleup::pack::packer<16, 2, 16> the_packer(scaleup::pack::default_profile,
                                            scaleup::pack::packer_config<2>{.limit = 128});
std::array<std::array<std::uint8_t, 12>, 16> controls{};
std::size_t next_control = 0;
}  // namespace

bool pack_write(std::uint16_t dst, std::uint8_t vc, std::uint64_t addr, const std::uint8_t* data) {
  auto& ctrl = controls[next_control++ % controls.size()];  // the packer keeps views
  const auto c = scaleup::wire::to_bytes(scaleup::pack::cmd_write{.tag = 1, .addr = addr});
  if (!c.ok()) return false;
  ctrl = c.value;
  return !the_packer.push(
      {.destination = dst, .vc = vc, .control = ctrl, .data = scaleup::wire::bytes(data, 64)});
}

std::size_t pack_next(std::uint8_t* out, std::size_t cap, std::uint16_t& dst, std::uint8_t& vc) {
  const auto r = the_packer.next(scaleup::wire::mutable_bytes(out, cap));
  if (!r.ok() || r->commands == 0) return 0;
  dst = static_cast<std::uint16_t>(r->destination);
  vc = static_cast<std::uint8_t>(r->vc);
  return r->bytes;
}

int unpack_count(const std::uint8_t* payload, std::size_t n) {
  scaleup::pack::unpacker u(scaleup::pack::default_profile, scaleup::wire::bytes(payload, n));
  int count = 0;
  for (scaleup::pack::command_view c; u.next(c);) ++count;
  return u.error_found() ? -1 : count;
}

}  // namespace fw

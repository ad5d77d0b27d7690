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
}  // namespace

// The control is encoded into the packer's pool; the 64 data bytes are borrowed: the caller
// keeps them until pack_next() has packed the command.
bool pack_write(std::uint16_t dst, std::uint8_t vc, std::uint64_t addr, const std::uint8_t* data) {
  return !the_packer.push(scaleup::pack::queued<scaleup::pack::cmd_write>{
      .destination = dst,
      .vc = vc,
      .control = {.tag = 1, .addr = addr},
      .data = scaleup::pack::borrow(scaleup::wire::bytes(data, 64))});
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

// The unpacker for C (pack::unpacker over the default profile or a caller's), kept in the
// caller's scaleup_unpacker: the C++ object is built in its opaque bytes, so a walk needs no heap
// and nothing to release.
#include "c_abi.hpp"

#include <new>
#include <type_traits>

#include "profile.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"

namespace pack = scaleup::pack;
using scaleup::capi::in;
using scaleup::capi::report;

static_assert(pack::max_control_bytes == SCALEUP_MAX_CONTROL_BYTES);
static_assert(pack::max_data_bytes == SCALEUP_MAX_DATA_BYTES);
static_assert(pack::code::atomic_response == SCALEUP_CMD_ATOMIC_RESPONSE);
static_assert(pack::code::read == SCALEUP_CMD_READ);
// What lets C copy the struct and drop it without a call.
static_assert(sizeof(pack::unpacker) <= sizeof(scaleup_unpacker{}.opaque.bytes));
static_assert(alignof(pack::unpacker) <= alignof(scaleup_unpacker));
static_assert(std::is_trivially_copyable_v<pack::unpacker>);
static_assert(std::is_trivially_destructible_v<pack::unpacker>);

namespace {

pack::unpacker& impl(scaleup_unpacker* u) {
  return *std::launder(reinterpret_cast<pack::unpacker*>(u->opaque.bytes));
}
const pack::unpacker& impl(const scaleup_unpacker* u) {
  return *std::launder(reinterpret_cast<const pack::unpacker*>(u->opaque.bytes));
}

}  // namespace

extern "C" {

std::size_t scaleup_command_control_size(std::uint8_t code, bool* has_data) {
  const pack::command_type* t = pack::default_profile.find(code);
  if (has_data) *has_data = t && t->has_data;
  return t ? t->control_bytes() : 0;
}

void scaleup_unpacker_init_with(scaleup_unpacker* u, const scaleup_profile* profile,
                                const std::uint8_t* payload, std::size_t len,
                                std::size_t base_offset) {
  ::new (static_cast<void*>(u->opaque.bytes))
      pack::unpacker(scaleup::capi::profile_of(profile), in(payload, len), base_offset);
}

void scaleup_unpacker_init(scaleup_unpacker* u, const std::uint8_t* payload, std::size_t len,
                           std::size_t base_offset) {
  scaleup_unpacker_init_with(u, nullptr, payload, len, base_offset);
}

int scaleup_unpacker_next(scaleup_unpacker* u, scaleup_command* out) {
  pack::command_view v;
  if (!impl(u).next(v)) return 0;
  *out = scaleup_command{v.code(),      v.control.data(), v.control.size(), v.data.data(),
                         v.data.size(), v.offset,         v.index,          v.type->vc};
  return 1;
}

int scaleup_unpacker_error(const scaleup_unpacker* u, scaleup_error* err) {
  return report(impl(u).error_found(), err);
}

std::size_t scaleup_unpacker_count(const scaleup_unpacker* u) { return impl(u).count(); }
std::size_t scaleup_unpacker_padding(const scaleup_unpacker* u) { return impl(u).padding(); }

}  // extern "C"

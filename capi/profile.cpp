// Command profiles for C: a caller's table of command types as a pack::profile, built in memory
// the caller provides and checked by profile::check(), as a C++ profile is at compile time.
#include "profile.hpp"

#include <type_traits>

namespace pack = scaleup::pack;
namespace w = scaleup::wire;
using scaleup::capi::report;

static_assert(pack::max_types == SCALEUP_MAX_COMMAND_TYPES);
// Dropping the caller's storage is the only cleanup: nothing to destroy.
static_assert(std::is_trivially_destructible_v<scaleup_profile>);

namespace {

w::error refused(std::string_view what, std::string_view field, std::uint64_t value,
                 w::errc code = w::errc::bad_value) noexcept {
  return w::error{.code = code, .layer = "profile", .what = what, .field = field, .value = value};
}

}  // namespace

extern "C" {

std::size_t scaleup_profile_size(void) { return scaleup::capi::room_for<scaleup_profile>(); }

scaleup_profile* scaleup_profile_init(void* storage, std::size_t size, const char* name,
                                      const scaleup_command_type* types, std::size_t count,
                                      scaleup_error* err) {
  if (count > pack::max_types) {
    report(refused("more than 255 command types", "count", count, w::errc::value_too_big), err);
    return nullptr;
  }
  if (!types && count > 0) {
    report(refused("no command types", "types", count), err);
    return nullptr;
  }
  auto* p = scaleup::capi::place<scaleup_profile>(
      storage, size, name ? std::string_view(name) : std::string_view(), types, count);
  if (!p) {
    report(scaleup::capi::no_room("profile", scaleup_profile_size(), size), err);
    return nullptr;
  }
  if (const std::string_view why = p->impl.check(); !why.empty()) {
    report(refused(why, "types", count), err);
    return nullptr;
  }
  report(w::error{}, err);
  return p;
}

}  // extern "C"

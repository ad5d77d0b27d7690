// Structured errors: what went wrong and where, never a bare bool (decisions.md practice 4,
// etherparse).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>

namespace scaleup::wire {

enum class errc : std::uint8_t {
  none = 0,
  truncated,         // fewer bytes than the layer needs
  value_too_big,     // encode: a value does not fit its field
  bad_value,         // a field holds a value the format forbids
  reserved_nonzero,  // a reserved field is not zero (reported, not rejected)
  bad_checksum,      // IPv4 header checksum, UDP checksum, R-CRC
  bad_length,        // a length field disagrees with the bytes present
  no_space,          // encode: the output buffer is too small
  unsupported,       // valid, but not a variant this library decodes
  not_captured,      // bytes on the wire that the capture did not keep (its snapshot length)
  unreachable,       // a transport's destination answers on no port (R2 3.5.8): work failed
};

constexpr std::string_view to_string(errc e) noexcept {
  switch (e) {
    case errc::none:
      return "none";
    case errc::truncated:
      return "truncated";
    case errc::value_too_big:
      return "value_too_big";
    case errc::bad_value:
      return "bad_value";
    case errc::reserved_nonzero:
      return "reserved_nonzero";
    case errc::bad_checksum:
      return "bad_checksum";
    case errc::bad_length:
      return "bad_length";
    case errc::no_space:
      return "no_space";
    case errc::unsupported:
      return "unsupported";
    case errc::not_captured:
      return "not_captured";
    case errc::unreachable:
      return "unreachable";
  }
  return "unknown";
}

// error: what was read cannot be trusted (a receiver drops it); warning: it can, but something
// is off; note: a fact worth knowing that is no fault of the packet (bytes a capture did not
// keep), as Wireshark's PI_NOTE.
enum class severity : std::uint8_t { error, warning, note };

constexpr std::string_view to_string(severity s) noexcept {
  switch (s) {
    case severity::error:
      return "error";
    case severity::warning:
      return "warning";
    case severity::note:
      return "note";
  }
  return "error";
}

// layer: the display-filter prefix of the layer ("sue.rh", "ip"); offset: byte offset of the
// problem from the start of the buffer handed to the decoder (the frame, for the dissector);
// needed/available: byte counts for length errors, zero otherwise; field: the field's filter
// name where one field is at fault; value: the offending value; item: for a repeated unit such
// as the commands packed in a PDU, which one (1-based; 0 when not applicable).
struct error {
  errc code = errc::none;
  std::string_view layer{};
  std::uint32_t offset = 0;
  std::uint32_t needed = 0;
  std::uint32_t available = 0;
  std::string_view what{};
  std::string_view field{};
  std::uint64_t value = 0;
  severity level = severity::error;
  std::uint32_t item = 0;

  constexpr explicit operator bool() const noexcept { return code != errc::none; }
};

constexpr error truncated(std::string_view layer, std::size_t offset, std::size_t needed,
                          std::size_t available, std::string_view what = "truncated") noexcept {
  return error{errc::truncated,
               layer,
               static_cast<std::uint32_t>(offset),
               static_cast<std::uint32_t>(needed),
               static_cast<std::uint32_t>(available),
               what,
               {},
               0,
               severity::error};
}

// The problems a reader found, in the order found: fixed capacity, no heap. An error past the
// capacity is dropped and `overflow` says so; the first N are kept.
// Room for N entries of T, of which a count kept beside says how many are set: a list's
// storage. Nothing is written when it is made: at run time an entry is written when it is set and
// read only after (clearing a frame's 16 error entries and 24 layer records every frame was a
// tenth of reading a short one). In a constant expression every entry starts value-initialised,
// as the language wants of an object.
template <class T, std::size_t N>
class list_storage {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  constexpr list_storage() noexcept {
    if (std::is_constant_evaluated()) std::construct_at(&items_);
  }
  constexpr void set(std::size_t i, const T& v) noexcept { std::construct_at(&items_[i], v); }
  constexpr const T& operator[](std::size_t i) const noexcept { return items_[i]; }
  constexpr const T* data() const noexcept { return items_.data(); }
  static constexpr std::size_t size() noexcept { return N; }

 private:
  union {
    std::array<T, N> items_;
  };
};

template <std::size_t N>
struct error_list {
  list_storage<error, N> items;
  std::size_t count = 0;
  bool overflow = false;

  constexpr void add(const error& e) noexcept {
    if (count < N)
      items.set(count++, e);
    else
      overflow = true;
  }
  constexpr std::size_t size() const noexcept { return count; }
  constexpr bool empty() const noexcept { return count == 0; }
  constexpr const error& operator[](std::size_t i) const noexcept { return items[i]; }
  constexpr const error* begin() const noexcept { return items.data(); }
  constexpr const error* end() const noexcept { return items.data() + count; }
  constexpr std::span<const error> list() const noexcept { return {items.data(), count}; }
  // No entry of error severity, and none dropped (it might have been one): what was read may
  // be acted on (warnings allowed).
  constexpr bool ok() const noexcept {
    if (overflow) return false;
    for (const error& e : list())
      if (e.level == severity::error) return false;
    return true;
  }
};

// A value or an error; T must be default-constructible. No exceptions, usable in constant
// expressions.
template <class T>
struct [[nodiscard]] result {
  T value{};
  error err{};

  constexpr result() = default;
  constexpr result(T v) : value(v) {}    // NOLINT: implicit on purpose, like std::expected
  constexpr result(error e) : err(e) {}  // NOLINT
  constexpr result(T v, error e) : value(v), err(e) {}

  constexpr bool ok() const noexcept { return err.code == errc::none; }
  constexpr explicit operator bool() const noexcept { return ok(); }
  constexpr const T& operator*() const noexcept { return value; }
  constexpr const T* operator->() const noexcept { return &value; }
};

}  // namespace scaleup::wire

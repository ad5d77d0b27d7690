// The format-neutral dissection tree: layers, fields and errors, built from the field tables.
// The CLI prints it and the Wireshark plugin walks it; neither knows a bit position.
// Fixed capacity, no heap: a frame that needs more nodes gets an error, never a silent cut.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/ip_address.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::dissect {

using wire::error;
using wire::field_info;

struct layer_node {
  std::string_view name;     // filter prefix: "sue.rh"
  std::string_view title;    // "SUE Reliability Header"
  std::uint32_t offset = 0;  // bytes from the start of the frame
  std::uint32_t length = 0;
  std::string_view list{};  // a repeated layer (one command of many): the list it belongs to
  // No two of its fields share a filter name, as its maker knows (a command of a checked
  // profile): the JSON printer then does not look for names to gather into an array.
  bool distinct_names = false;
};

struct field_node {
  const field_info* info = nullptr;
  std::uint16_t layer = 0;  // index into layers
  std::uint32_t bit = 0;    // absolute bit offset in the frame (generated: of its layer)
  bool generated = false;   // computed, not on the wire (like Wireshark's [brackets])
  std::uint64_t value = 0;
  // For byte-array fields (IPv6 addresses): points into the dissected frame, so the tree is
  // printable only while the frame's bytes live.
  const std::uint8_t* raw = nullptr;

  constexpr std::string_view value_name() const noexcept { return info->name_of(value); }
};

// A table entry's address spread over all 64 bits (Fibonacci hashing): a table that looks a
// node's field up by its entry (`info`) takes the slot from the top bits, where every bit of
// the address counts.
inline std::uint64_t entry_hash(const field_info* f) noexcept {
  const std::uint64_t address = std::hash<const field_info*>{}(f);
  return address * 0x9E3779B97F4A7C15ull;
}

// Whether a problem a reader found makes a receiver drop the PDU (analysis.hpp says which
// frames count): errors, except those of the packed commands (layers "sue.cmd", "sue.opaque"),
// which are the XPU's business once the transport has accepted the PDU.
constexpr bool counts_against_pdu(const error& e) noexcept {
  if (e.level != wire::severity::error) return false;
  return e.layer != "sue.cmd" && e.layer != "sue.opaque";
}

// What the sequence analysis and the conformance rules read of a frame (analysis.hpp
// facts_of): the typed values the engine read, kept beside the tree rather than looked for
// again among its fields (a frame's tree can hold thousands of command fields).
struct pdu_summary {
  std::optional<wire::reliability_header> rh;
  std::uint32_t payload_length = 0;  // with rh: bytes between RH and R-CRC, on the wire
  // The XPU the frame is addressed to where it carries one (AFH Gen 1 and Gen 2), or, for a
  // PDU over IP, where the user's XPU map gives one (the engine's generated sue.dst_xpu).
  std::optional<std::uint32_t> dst_xpu;
  std::optional<wire::ip_address> src_ip, dst_ip;  // the first IP header's
  // A reader found a problem that makes a receiver drop the PDU (counts_against_pdu), or more
  // problems than it keeps (one of them might be such).
  bool dropped = false;
};

template <std::size_t MaxLayers = 64, std::size_t MaxFields = 512, std::size_t MaxErrors = 16>
struct basic_tree {
  std::string_view encap{};
  std::uint32_t frame_length = 0;  // bytes dissected (FCS excluded when found)
  // The same frame's length on the wire, when the capture kept fewer bytes (its snapshot
  // length); 0: as frame_length. Use length_on_wire().
  std::uint32_t wire_length = 0;
  std::array<layer_node, MaxLayers> layers{};
  std::array<field_node, MaxFields> fields{};
  std::array<error, MaxErrors> errors{};
  std::size_t layer_count = 0;
  std::size_t field_count = 0;
  std::size_t error_count = 0;
  bool overflow = false;  // a node did not fit; reported as the last error
  pdu_summary pdu{};      // set by the engine from what the readers found

  constexpr std::span<const layer_node> layer_list() const noexcept {
    return {layers.data(), layer_count};
  }
  constexpr std::span<const field_node> field_list() const noexcept {
    return {fields.data(), field_count};
  }
  constexpr std::span<const error> error_list() const noexcept {
    return {errors.data(), error_count};
  }

  // Inlined and stored member by member, as add_field: a node built on the stack and copied
  // out of line is stored in narrow pieces and loaded again in wide ones (a stall a layer).
  SCALEUP_ALWAYS_INLINE constexpr std::uint16_t add_layer(std::string_view name,
                                                          std::string_view title,
                                                          std::size_t offset, std::size_t length,
                                                          std::string_view list = {},
                                                          bool distinct_names = false) noexcept {
    if (layer_count == MaxLayers) {
      note_overflow();
      // The fields of the layers that did not fit go to the last one: its names may repeat.
      layers[MaxLayers - 1].distinct_names = false;
      return static_cast<std::uint16_t>(MaxLayers - 1);
    }
    layer_node& l = layers[layer_count];
    l.name = name;
    l.title = title;
    l.offset = static_cast<std::uint32_t>(offset);
    l.length = static_cast<std::uint32_t>(length);
    l.list = list;
    l.distinct_names = distinct_names;
    return static_cast<std::uint16_t>(layer_count++);
  }

  // Inlined: built in the caller and copied out of line, a node was stored in narrow pieces
  // and reloaded in wide ones (a store-forwarding stall per field, 10 % of `scaleup stats`).
  SCALEUP_ALWAYS_INLINE constexpr void add_field(const field_node& f) noexcept {
    if (field_count == MaxFields) return note_overflow();
    fields[field_count++] = f;
  }

  constexpr void add_error(const error& e) noexcept {
    if (error_count == MaxErrors) {
      overflow = true;
      return;
    }
    errors[error_count++] = e;
  }

  // Empty again, without touching the node arrays: nothing reads past the counts, so a tree
  // reused frame after frame costs nothing to reset (a `Tree{}` would rewrite every node).
  constexpr void clear() noexcept {
    encap = {};
    frame_length = 0;
    wire_length = 0;
    layer_count = field_count = error_count = 0;
    overflow = false;
    pdu = {};
  }

  constexpr std::uint32_t length_on_wire() const noexcept {
    return wire_length > frame_length ? wire_length : frame_length;
  }

  constexpr bool has_errors() const noexcept {
    for (const auto& e : error_list())
      if (e.level == wire::severity::error) return true;
    return false;
  }

  // The first field with this filter name, or nullptr.
  constexpr const field_node* find(std::string_view filter) const noexcept {
    for (const auto& f : field_list())
      if (f.info->filter == filter) return &f;
    return nullptr;
  }
  // The first field of this table entry (wire::info_of, computed_fields), or nullptr: what code
  // that knows the header asks, by the entry itself rather than by its name.
  constexpr const field_node* find(const field_info& entry) const noexcept {
    for (const auto& f : field_list())
      if (f.info == &entry) return &f;
    return nullptr;
  }

  constexpr const layer_node* find_layer(std::string_view name) const noexcept {
    for (const auto& l : layer_list())
      if (l.name == name) return &l;
    return nullptr;
  }

 private:
  SCALEUP_COLD constexpr void note_overflow() noexcept {
    if (overflow) return;
    overflow = true;
    if (error_count == MaxErrors) error_count = MaxErrors - 1;
    errors[error_count++] = error{
        wire::errc::no_space, "frame", 0, 0, 0, "dissection tree full; later fields not shown"};
  }
};

using tree = basic_tree<>;
// Room for a full PDU of the smallest commands (4096 / 4), each with its fields.
using large_tree = basic_tree<1100, 9000, 64>;

}  // namespace scaleup::dissect

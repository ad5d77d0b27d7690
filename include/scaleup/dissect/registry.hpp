// Every field table the library has, in one list: what the docs generator draws, the Wireshark
// plugin registers, the scapy module is checked against and the header fuzz target round-trips.
// A new header is added here once and appears in all of them.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>
#include <tuple>

#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/frame_meta.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/dissect/rdma.hpp"
#include "scaleup/dissect/tofu.hpp"
#include "scaleup/pack/axi.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/profiles.hpp"
#include "scaleup/pack/signal_interface.hpp"
#include "scaleup/rdma/pending_transactions.hpp"
#include "scaleup/rdma/transaction_table.hpp"
#include "scaleup/rdma/transfer_descriptor.hpp"
#include "scaleup/rdma/transfer_metadata.hpp"
#include "scaleup/tofu/routing_header.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/transport/cbfc.hpp"
#include "scaleup/transport/llr.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/bsd_loopback.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/failover.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/ip_fragment.hpp"
#include "scaleup/wire/linux_sll.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::dissect {

enum class table_group : std::uint8_t {
  frame,    // headers the dissector reads in frames
  command,  // control layouts of the default command profile
  link,     // link and flow control (not in frames the dissector reads yet)
  xpu,      // what crosses the XPU-SUE boundary
  engine,   // the RDMA engine's descriptors and tables (memory, not frames)
};

struct table {
  std::string_view name;
  std::string_view title;
  std::string_view seed;
  std::size_t size;
  std::span<const wire::field_info> fields;
  table_group group;
};

template <class T>
constexpr table table_of(table_group g) noexcept {
  return {wire::layout<T>::name, wire::layout<T>::title, wire::layout<T>::seed,
          wire::layout<T>::size, wire::field_infos<T>,   g};
}

// One entry of the list below: a header's type and its group.
template <class T, table_group G>
struct table_entry {
  using type = T;
  static constexpr table_group group = G;
};

// Every field table, as types: the one list. `tables` is made from it, and so is whatever needs
// the types themselves (fuzz/headers.cpp decodes and encodes each). Document order: frame
// headers in the order of include/scaleup/wire/, then the default profile's command shapes,
// then link and XPU-interface tables.
using table_types = std::tuple<table_entry<wire::reliability_header, table_group::frame>,
                               table_entry<wire::linux_sll, table_group::frame>,
                               table_entry<wire::linux_sll2, table_group::frame>,
                               table_entry<wire::bsd_loopback, table_group::frame>,
                               table_entry<wire::ethernet_header, table_group::frame>,
                               table_entry<wire::vlan_tag, table_group::frame>,
                               table_entry<wire::service_tag, table_group::frame>,
                               table_entry<wire::ipv4_header, table_group::frame>,
                               table_entry<wire::ipv6_header, table_group::frame>,
                               table_entry<wire::ipv6_fragment_header, table_group::frame>,
                               table_entry<wire::udp_header, table_group::frame>,
                               table_entry<wire::afh1_addresses, table_group::frame>,
                               table_entry<wire::afh1_shim, table_group::frame>,
                               table_entry<wire::afh2_normal, table_group::frame>,
                               table_entry<wire::afh2_compressed, table_group::frame>,
                               table_entry<wire::afh2_ethertype, table_group::frame>,
                               table_entry<wire::rcrc_trailer, table_group::frame>,
                               table_entry<wire::failover_message, table_group::frame>,
                               table_entry<tofu::record_header, table_group::frame>,
                               table_entry<tofu::routing_header, table_group::frame>,
                               table_entry<tofu::fcs_trailer, table_group::frame>,
                               table_entry<rdma::data_header, table_group::frame>,
                               table_entry<rdma::response_header, table_group::frame>,
                               table_entry<rdma::control_header, table_group::frame>,
                               table_entry<rdma::control_payload, table_group::frame>,
                               table_entry<rdma::packet_footer, table_group::frame>,
                               table_entry<pack::cmd_write, table_group::command>,
                               table_entry<pack::cmd_write_partial, table_group::command>,
                               table_entry<pack::cmd_read, table_group::command>,
                               table_entry<pack::cmd_response_data, table_group::command>,
                               table_entry<pack::cmd_response, table_group::command>,
                               table_entry<pack::cmd_message, table_group::command>,
                               table_entry<pack::cmd_barrier, table_group::command>,
                               table_entry<pack::cmd_atomic, table_group::command>,
                               table_entry<transport::llr_header, table_group::link>,
                               table_entry<transport::llr_control, table_group::link>,
                               table_entry<transport::cbfc_update, table_group::link>,
                               table_entry<transport::pfc_pdu, table_group::link>,
                               table_entry<pack::credit_word, table_group::xpu>,
                               table_entry<pack::axi_user, table_group::xpu>,
                               table_entry<rdma::memory_descriptor, table_group::engine>,
                               table_entry<rdma::memory_descriptor_notify, table_group::engine>,
                               table_entry<rdma::inline_descriptor, table_group::engine>,
                               table_entry<rdma::inline_descriptor_long, table_group::engine>,
                               table_entry<rdma::block_descriptor, table_group::engine>,
                               table_entry<rdma::pending_entry, table_group::engine>,
                               table_entry<rdma::transfer_metadata, table_group::engine>>;

namespace detail {
template <class Entries>
struct table_list;
template <class... E>
struct table_list<std::tuple<E...>> {
  static constexpr std::array<table, sizeof...(E)> tables{table_of<typename E::type>(E::group)...};
};
}  // namespace detail

inline constexpr auto tables = detail::table_list<table_types>::tables;

// Computed fields of every dissector, for the same consumers.
inline constexpr auto computed = [] {
  std::array<const wire::field_info*,
             computed_fields::all.size() + tofu_computed_fields::all.size() +
                 rdma_computed_fields::all.size() + reassembly_computed_fields::all.size()>
      out{};
  std::size_t n = 0;
  for (const auto* f : computed_fields::all) out[n++] = f;
  for (const auto* f : tofu_computed_fields::all) out[n++] = f;
  for (const auto* f : rdma_computed_fields::all) out[n++] = f;
  for (const auto* f : reassembly_computed_fields::all) out[n++] = f;
  return out;
}();

// How Wireshark lists the protocols a person looks for (full and short name by filter prefix),
// for the plugin and the Lua dissector alike; any other prefix a table brings (a future format)
// is named after its first table.
struct protocol_name {
  std::string_view prefix, full, short_name;
};
inline constexpr std::array<protocol_name, 7> protocol_names{{
    {"sue", "Scale-Up Ethernet", "SUE"},
    {"sue_lite", "Scale-Up Ethernet Lite", "SUE Lite"},
    {"afh1", "AI Forwarding Header Gen 1", "AFH1"},
    {"afh2", "AI Forwarding Header Gen 2", "AFH2"},
    {"afh2c", "AI Forwarding Header Gen 2, compressed", "AFH2c"},
    {"tofu", "Tofu-style slices and frames", "Tofu"},
    {"rdma", "RDMA engine packets (ExaJet)", "RDMA"},
}};

// Whether `filter` names something a frame's output can show (`scaleup dump -T fields -e`): a
// field of any table, a computed field, a control field of `prof`'s commands, "encap", or one of
// the capture's frame.* fields.
constexpr bool is_field_name(std::string_view filter, const pack::profile* prof) noexcept {
  if (filter == "encap") return true;
  for (const auto name : frame_fields)
    if (name == filter) return true;
  for (const auto& t : tables)
    for (const auto& f : t.fields)
      if (f.filter == filter) return true;
  for (const auto* f : computed)
    if (f->filter == filter) return true;
  if (prof) {
    if (prof->name_field().filter == filter) return true;
    for (const auto& type : prof->types())
      for (const auto& f : type.fields)
        if (f.filter == filter) return true;
  }
  return false;
}

}  // namespace scaleup::dissect

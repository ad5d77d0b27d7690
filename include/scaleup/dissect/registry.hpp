// Every field table the library has, in one list: what the docs generator draws and what the
// Wireshark plugin registers. A new header is added here once and appears in both.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/dissect/print.hpp"
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

// Document order: frame headers in the order of include/scaleup/wire/, then the default
// profile's command shapes, then link and XPU-interface tables.
inline constexpr auto tables = std::array{
    table_of<wire::reliability_header>(table_group::frame),
    table_of<wire::linux_sll>(table_group::frame),
    table_of<wire::linux_sll2>(table_group::frame),
    table_of<wire::bsd_loopback>(table_group::frame),
    table_of<wire::ethernet_header>(table_group::frame),
    table_of<wire::vlan_tag>(table_group::frame),
    table_of<wire::service_tag>(table_group::frame),
    table_of<wire::ipv4_header>(table_group::frame),
    table_of<wire::ipv6_header>(table_group::frame),
    table_of<wire::ipv6_fragment_header>(table_group::frame),
    table_of<wire::udp_header>(table_group::frame),
    table_of<wire::afh1_addresses>(table_group::frame),
    table_of<wire::afh1_shim>(table_group::frame),
    table_of<wire::afh2_normal>(table_group::frame),
    table_of<wire::afh2_compressed>(table_group::frame),
    table_of<wire::afh2_ethertype>(table_group::frame),
    table_of<wire::rcrc_trailer>(table_group::frame),
    table_of<tofu::record_header>(table_group::frame),
    table_of<tofu::routing_header>(table_group::frame),
    table_of<tofu::fcs_trailer>(table_group::frame),
    table_of<rdma::data_header>(table_group::frame),
    table_of<rdma::response_header>(table_group::frame),
    table_of<rdma::control_header>(table_group::frame),
    table_of<rdma::control_payload>(table_group::frame),
    table_of<rdma::packet_footer>(table_group::frame),
    table_of<pack::cmd_write>(table_group::command),
    table_of<pack::cmd_write_partial>(table_group::command),
    table_of<pack::cmd_read>(table_group::command),
    table_of<pack::cmd_response_data>(table_group::command),
    table_of<pack::cmd_response>(table_group::command),
    table_of<pack::cmd_message>(table_group::command),
    table_of<pack::cmd_barrier>(table_group::command),
    table_of<pack::cmd_atomic>(table_group::command),
    table_of<transport::llr_header>(table_group::link),
    table_of<transport::llr_control>(table_group::link),
    table_of<transport::cbfc_update>(table_group::link),
    table_of<transport::pfc_pdu>(table_group::link),
    table_of<pack::credit_word>(table_group::xpu),
    table_of<pack::axi_user>(table_group::xpu),
    table_of<rdma::memory_descriptor>(table_group::engine),
    table_of<rdma::memory_descriptor_notify>(table_group::engine),
    table_of<rdma::inline_descriptor>(table_group::engine),
    table_of<rdma::inline_descriptor_long>(table_group::engine),
    table_of<rdma::block_descriptor>(table_group::engine),
    table_of<rdma::pending_entry>(table_group::engine),
    table_of<rdma::transfer_metadata>(table_group::engine),
};

// Computed fields of every dissector, for the same consumers.
inline constexpr auto computed = [] {
  std::array<const wire::field_info*, generated::all.size() + tofu_generated::all.size() +
                                          rdma_generated::all.size() +
                                          reassembly_generated::all.size()>
      out{};
  std::size_t n = 0;
  for (const auto* f : generated::all) out[n++] = f;
  for (const auto* f : tofu_generated::all) out[n++] = f;
  for (const auto* f : rdma_generated::all) out[n++] = f;
  for (const auto* f : reassembly_generated::all) out[n++] = f;
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

// The UDP flows a capture reader has found SUE on (wire/udp_flow.hpp): once a datagram of a flow
// passed for a PDU on a port nobody named, the flow's later datagrams are SUE whatever they hold,
// as Wireshark binds a conversation to the dissector whose heuristic matched it. Grows with the
// capture (one entry per flow), so it is opt-in state on the heap, like the analysis; `scaleup
// dump` and `scaleup stats` hand one to the reader through receive_options::flows. A capture cut
// by its snapshot length holds no R-CRC in its long datagrams: they are SUE on a flow or port
// recognised before (by a whole datagram), so a tool that reads a file may read it a second
// time with the table the first pass filled (worth_rereading), as tshark's two passes do.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>

#include "scaleup/dissect/flat_index.hpp"
#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::dissect {

class flow_table final : public wire::flow_binding {
 public:
  // Keyed with the process's key (hash_key.hpp), or with `key`.
  flow_table() = default;
  explicit flow_table(const wire::hash_key& key) : flows_(key), left_(key) {}

  bool bound(const wire::udp_flow& f) const noexcept override { return flows_.contains(f); }
  void bind(const wire::udp_flow& f) noexcept override {
    if (!flows_.insert(f).second) return;
    ports_.set(f.port_a);
    ports_.set(f.port_b);
    ++version_;
  }
  bool port_bound(std::uint16_t port) const noexcept override { return ports_.test(port); }
  void unconfirmed(const wire::udp_flow& f) noexcept override {
    ++unconfirmed_;
    left_.insert(f);
  }

  std::size_t size() const noexcept { return flows_.size(); }
  // Counts the changes to what bound() and port_bound() answer: two reads of the table at the
  // same version get the same answers (parallel readers check their copies by it).
  std::uint64_t version() const noexcept { return version_; }
  // Cut datagrams with a plausible RH left as UDP since the last reset_unconfirmed().
  std::size_t unconfirmed_count() const noexcept { return unconfirmed_; }
  // Whether reading the capture again with what this table now knows would take more of them
  // for SUE: the flow or a port of one of them was recognised since (by a whole datagram after
  // it). Cut datagrams of a flow never shown SUE (another protocol's, on its own port) are no
  // reason to read a whole file again.
  bool worth_rereading() const noexcept {
    for (const auto& f : left_.keys())
      if (bound(f) || port_bound(f.port_a) || port_bound(f.port_b)) return true;
    return false;
  }
  // The slots both of its tables examined (flat_index::probe_stats).
  dissect::probe_stats probe_stats() const noexcept {
    dissect::probe_stats s = flows_.probe_stats();
    return s += left_.probe_stats();
  }
  void reset_unconfirmed() noexcept {
    unconfirmed_ = 0;
    left_.clear();
  }

 private:
  // Asked for every UDP datagram on an unnamed port: hashed, and the ports a bit each (8 KiB).
  flat_index<wire::udp_flow, wire::udp_flow_hash> flows_;
  std::bitset<65536> ports_;
  std::uint64_t version_ = 0;
  std::size_t unconfirmed_ = 0;
  // The flows of those datagrams: one entry per flow.
  flat_index<wire::udp_flow, wire::udp_flow_hash> left_;
};

}  // namespace scaleup::dissect

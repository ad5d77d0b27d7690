// The UDP flows a capture reader has found SUE on (wire/udp_flow.hpp): once a datagram of a flow
// passed for a PDU on a port nobody named, the flow's later datagrams are SUE whatever they hold,
// as Wireshark binds a conversation to the dissector whose heuristic matched it. Grows with the
// capture (one entry per flow), so it is opt-in state on the heap, like the analysis; `scaleup
// dump` and `scaleup stats` hand one to the reader through receive_options::flows. A capture cut
// by its snapshot length holds no R-CRC in its long datagrams: they are SUE on a flow or port
// recognised before (by a whole datagram), so a tool that reads a file may read it a second
// time with the table the first pass filled (worth_rereading), as tshark's two passes do.
// At most max_flows flows are remembered (limits.hpp): a flow recognised beyond that is not, but
// its ports are (a bit each), so its datagrams are still SUE by their own R-CRC, and cut ones by
// the port; only a damaged datagram of such a flow on a port nobody named stays UDP. Counted
// (not_remembered).
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>

#include "scaleup/dissect/flat_index.hpp"
#include "scaleup/dissect/limits.hpp"
#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::dissect {

class flow_table final : public wire::flow_binding {
 public:
  // At most `max_flows` flows; keyed with the process's key (hash_key.hpp), or with `key`.
  explicit flow_table(std::size_t max_flows = default_max_connections) : max_(max_flows) {}
  flow_table(std::size_t max_flows, const wire::hash_key& key) : flows_(key), max_(max_flows) {}

  bool bound(const wire::udp_flow& f) const noexcept override { return flows_.contains(f); }
  void bind(const wire::udp_flow& f) noexcept override {
    if (flows_.size() >= max_) {
      if (flows_.contains(f)) return;
      ++not_remembered_;
      if (ports_.test(f.port_a) && ports_.test(f.port_b)) return;
    } else if (!flows_.insert(f).second) {
      return;
    }
    ports_.set(f.port_a);
    ports_.set(f.port_b);
    ++version_;
  }
  bool port_bound(std::uint16_t port) const noexcept override { return ports_.test(port); }
  void unconfirmed(const wire::udp_flow& f) noexcept override {
    ++unconfirmed_;
    left_.set(f.port_a);
    left_.set(f.port_b);
  }

  // A copy of `from` made earlier (or an empty table) brought up to date with what `from` has
  // learned since: the flows it bound since (as many lookups as those, not a copy of the whole
  // table) and its ports. For a reader's own copy: bound() and port_bound() then answer as
  // `from` does, at its version.
  void catch_up(const flow_table& from) {
    const auto& k = from.flows_.keys();
    for (std::size_t i = flows_.size(); i < k.size(); ++i) flows_.insert(k[i]);
    ports_ = from.ports_;
    version_ = from.version_;
  }

  std::size_t size() const noexcept { return flows_.size(); }
  std::size_t max_flows() const noexcept { return max_; }
  // Recognitions of a flow beyond max_flows, which was then not remembered (its ports were).
  std::uint64_t not_remembered() const noexcept { return not_remembered_; }
  // Counts the changes to what bound() and port_bound() answer: two reads of the table at the
  // same version get the same answers (parallel readers check their copies by it).
  std::uint64_t version() const noexcept { return version_; }
  // Cut datagrams with a plausible RH left as UDP since the last reset_unconfirmed().
  std::size_t unconfirmed_count() const noexcept { return unconfirmed_; }
  // Whether reading the capture again with what this table now knows would take more of them
  // for SUE: the flow or a port of one of them was recognised since (by a whole datagram after
  // it). Cut datagrams of a flow never shown SUE (another protocol's, on its own port) are no
  // reason to read a whole file again. A bound flow has its ports bound, so the ports of those
  // datagrams' flows tell it exactly.
  bool worth_rereading() const noexcept { return (left_ & ports_).any(); }
  // The slots its table of flows examined (flat_index::probe_stats).
  dissect::probe_stats probe_stats() const noexcept { return flows_.probe_stats(); }
  void reset_unconfirmed() noexcept {
    unconfirmed_ = 0;
    left_.reset();
  }

 private:
  // Asked for every UDP datagram on an unnamed port: hashed, and the ports a bit each (8 KiB).
  flat_index<wire::udp_flow, wire::udp_flow_hash> flows_;
  std::bitset<65536> ports_;
  std::uint64_t version_ = 0;
  std::size_t unconfirmed_ = 0;
  // The ports of those datagrams' flows, a bit each: a fixed size, whatever the flows.
  std::bitset<65536> left_;
  std::size_t max_;
  std::uint64_t not_remembered_ = 0;
};

}  // namespace scaleup::dissect

// The UDP flows a capture reader has found SUE on (wire/udp_flow.hpp): once a datagram of a flow
// passed for a PDU on a port nobody named, the flow's later datagrams are SUE whatever they hold,
// as Wireshark binds a conversation to the dissector whose heuristic matched it. Grows with the
// capture (one entry per flow), so it is opt-in state on the heap, like the analysis; `scaleup
// dump` and `scaleup stats` hand one to the reader through receive_options::flows.
#pragma once

#include <cstddef>
#include <set>

#include "scaleup/wire/udp_flow.hpp"

namespace scaleup::dissect {

class flow_table final : public wire::flow_binding {
 public:
  bool bound(const wire::udp_flow& f) const noexcept override { return flows_.contains(f); }
  void bind(const wire::udp_flow& f) noexcept override { flows_.insert(f); }
  std::size_t size() const noexcept { return flows_.size(); }

 private:
  std::set<wire::udp_flow> flows_;
};

}  // namespace scaleup::dissect

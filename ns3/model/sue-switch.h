// A switch of one plane: it forwards each frame to the port of the XPU it is addressed to, read
// through the library's frame reader (AFH Gen 1 or Gen 2 addresses, or the IP destination of
// SUE over UDP; AFH Gen 1 control frames by their address bits, as R2 3.5.3 has a switch look
// at them). Each port keeps a FIFO egress queue (bounded: QueueFrames) and the link layer of its
// end of the link (LLR, CBFC, the peer's PFC), as the XPU's end does. With Pfc, a port pauses its
// XPU's priority (IEEE 802.1Qbb, R2 3.5.6) while the frames it took in and has not yet sent on
// hold more than PfcXoff bytes, until they hold less than PfcXon. A port whose LLR gives up on its
// link stays down: the frames waiting for it, and those that come for it later, are dropped, and
// their credits go back to the ports they came in on.
#ifndef SUE_SWITCH_H
#define SUE_SWITCH_H

#include <ns3/nstime.h>
#include <ns3/traced-callback.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "scaleup/pack/storage.hpp"
#include "scaleup/transport/link_port.hpp"
#include "scaleup/transport/pfc.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/receive.hpp"
#include "sue-port-owner.h"

namespace ns3 {

class SueSwitch : public SuePortOwner {
 public:
  static TypeId GetTypeId();
  SueSwitch();
  ~SueSwitch() override;

  // Frames to XPU `xpu` leave on `port`.
  void AddRoute(std::uint16_t xpu, std::uint32_t port);

  // (port, why): a frame dropped (bad FCS or LLR, no route, queue full, the link given up by LLR).
  using DropCallback = void (*)(std::uint32_t port, std::string why);

 protected:
  void DoInitialize() override;
  void DoDispose() override;
  void Wake(const std::vector<Input>& inputs) override;

 private:
  using link_t = scaleup::transport::link_port<256, 256 * 1024, scaleup::pack::heap_storage>;
  struct Queued {
    Ptr<Packet> frame;
    std::uint32_t ingress;
    scaleup::transport::link_info info;  // as it arrived
  };
  struct Port {
    std::unique_ptr<link_t> link;
    std::deque<Queued> queue;
    bool touched = false;
    std::uint64_t armed = scaleup::transport::link_never;  // the deadline last queued
  };
  void Start();
  void Arrive(const Input& in, std::uint64_t now);
  void Egress(std::uint32_t port, std::uint64_t now);
  void DropQueue(std::uint32_t port, std::uint64_t now);
  void Messages(std::uint32_t port);
  std::uint8_t Priority(std::uint8_t cls) const;
  void Touch(std::uint32_t port);

  bool m_llr = false, m_pfc = false;
  std::uint32_t m_pfcXoff = 64 * 1024, m_pfcXon = 32 * 1024;
  std::uint32_t m_cbfcCredits = 0, m_queueFrames = 4096;
  std::string m_encap = "afh1-shim";
  scaleup::transport::link_config m_link{};
  scaleup::wire::receive_options m_receive{};
  scaleup::wire::encap m_kind = scaleup::wire::encap::afh1_shim;
  std::vector<Port> m_state;
  std::vector<std::uint32_t> m_touched;
  // Ports' link-layer deadlines, earliest first (an entry may be stale: its port is then looked
  // at for nothing).
  std::priority_queue<std::pair<std::uint64_t, std::uint32_t>,
                      std::vector<std::pair<std::uint64_t, std::uint32_t>>, std::greater<>>
      m_deadlines;
  std::unordered_map<std::uint16_t, std::uint32_t> m_routes;
  std::vector<std::uint8_t> m_buffer;
  TracedCallback<std::uint32_t, std::string> m_drop;
  TracedCallback<std::uint8_t> m_llrReplay;
};

}  // namespace ns3

#endif

// What an XPU's SUE and a switch share: the ports they own, and one clock that makes a
// simulation's result independent of how it is split across ranks.
//
// ns-3 runs the events of one time in the order they were scheduled. Split across ranks, a frame
// from another rank is scheduled when its message arrives, so its place among the events of its
// arrival time differs from an undivided run's. An owner therefore never acts in a port's event:
// the events only queue what happened (a frame, a link message, a port free again, a timer), and
// one wake-up per time, scheduled after every event of that time that was already queued, handles
// the lot in a fixed order (by port, then in arrival order). Every run, on one rank or many, then
// makes the same decisions.
#ifndef SUE_PORT_OWNER_H
#define SUE_PORT_OWNER_H

#include <ns3/event-id.h>
#include <ns3/nstime.h>
#include <ns3/object.h>
#include <ns3/packet.h>

#include <cstdint>
#include <vector>

#include "scaleup/transport/link_port.hpp"
#include "sue-net-device.h"

namespace ns3 {

class SuePortOwner : public Object {
 public:
  static TypeId GetTypeId();

  struct Input {
    enum What : std::uint8_t { FRAME, MESSAGE, FREE } what = FRAME;
    std::uint32_t port = 0;
    Ptr<Packet> packet;                          // FRAME: the Ethernet frame, without FCS
    scaleup::transport::link_info info{};        // FRAME
    scaleup::transport::link_message message{};  // MESSAGE
  };

  // Adds a port; its number is the order of adding.
  std::uint32_t AddPort(Ptr<SueNetDevice> device);
  std::uint32_t GetNPorts() const { return static_cast<std::uint32_t>(m_ports.size()); }
  Ptr<SueNetDevice> GetPort(std::uint32_t i) const { return m_ports.at(i); }

  // A port's event: queued for this time's wake-up.
  void Enqueue(Input in);

 protected:
  void DoDispose() override;
  // This time's inputs, in order; every owner then sends what its free ports can take.
  virtual void Wake(const std::vector<Input>& inputs) = 0;
  // Wakes at `at` (or now), with or without inputs; the earliest asked for is kept.
  void WakeAt(std::uint64_t at_ns);
  // A wake-up this time, after every event already scheduled for it.
  void WakeNow();
  static std::uint64_t NowNs();

  std::vector<Ptr<SueNetDevice>> m_ports;

 private:
  void RunWake();
  void Timer();

  std::vector<Input> m_inputs, m_running;
  bool m_wakePending = false;
  EventId m_timer;
  std::uint64_t m_timerAt = 0;
};

}  // namespace ns3

#endif

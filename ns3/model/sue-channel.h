// A full-duplex point-to-point link between two SUE ports (an XPU's port and a switch's), with
// a propagation delay; the ports' devices set the rate. When the two ends are on different
// ranks of a distributed simulation, a frame crosses through ns-3's MPI interface, as ns-3's
// own remote point-to-point channel does; its Delay is then the lookahead.
#ifndef SUE_CHANNEL_H
#define SUE_CHANNEL_H

#include <ns3/channel.h>
#include <ns3/nstime.h>
#include <ns3/packet.h>
#include <ns3/ptr.h>

#include <array>

namespace ns3 {

class SueNetDevice;

class SueChannel : public Channel {
 public:
  static TypeId GetTypeId();
  SueChannel();

  void Attach(Ptr<SueNetDevice> device);
  // `packet` leaves `from` now and takes `txTime` to serialise: it arrives at the other end
  // `txTime` + Delay from now.
  void Transmit(Ptr<SueNetDevice> from, Ptr<Packet> packet, Time txTime);

  std::size_t GetNDevices() const override;
  Ptr<NetDevice> GetDevice(std::size_t i) const override;
  Ptr<SueNetDevice> GetSueDevice(std::size_t i) const;
  Time GetDelay() const { return m_delay; }

 private:
  Time m_delay;
  std::array<Ptr<SueNetDevice>, 2> m_ends;
  std::size_t m_attached = 0;
};

}  // namespace ns3

#endif

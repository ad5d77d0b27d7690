#include "sue-channel.h"

#include <ns3/node.h>
#include <ns3/simulator.h>

#include "sue-net-device.h"

#ifdef NS3_MPI
#include <ns3/mpi-interface.h>
#endif

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SueChannel);

TypeId SueChannel::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::SueChannel")
          .SetParent<Channel>()
          .SetGroupName("Sue")
          .AddConstructor<SueChannel>()
          // Read by ns-3's distributed simulator as the lookahead of a link between ranks.
          .AddAttribute("Delay", "Propagation delay of the link, each way",
                        TimeValue(NanoSeconds(100)), MakeTimeAccessor(&SueChannel::m_delay),
                        MakeTimeChecker(Time(0)));
  return tid;
}

SueChannel::SueChannel() = default;

void SueChannel::Attach(Ptr<SueNetDevice> device) {
  NS_ABORT_MSG_IF(m_attached >= 2, "an SUE link joins two ports");
  m_ends[m_attached++] = device;
}

void SueChannel::Transmit(Ptr<SueNetDevice> from, Ptr<Packet> packet, Time txTime) {
  NS_ABORT_MSG_IF(m_attached != 2, "an SUE link with one end");
  Ptr<SueNetDevice> to = m_ends[0] == from ? m_ends[1] : m_ends[0];
  Ptr<Node> node = to->GetNode();
#ifdef NS3_MPI
  if (MpiInterface::IsEnabled() && node->GetSystemId() != MpiInterface::GetSystemId()) {
    MpiInterface::SendPacket(packet, Simulator::Now() + txTime + m_delay, node->GetId(),
                             to->GetIfIndex());
    return;
  }
#endif
  Simulator::ScheduleWithContext(node->GetId(), txTime + m_delay, &SueNetDevice::Receive, to,
                                 packet);
}

std::size_t SueChannel::GetNDevices() const { return m_attached; }

Ptr<NetDevice> SueChannel::GetDevice(std::size_t i) const { return m_ends.at(i); }

Ptr<SueNetDevice> SueChannel::GetSueDevice(std::size_t i) const { return m_ends.at(i); }

}  // namespace ns3

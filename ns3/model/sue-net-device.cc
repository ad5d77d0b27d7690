#include "sue-net-device.h"

#include <ns3/pointer.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include "sue-channel.h"
#include "sue-link-header.h"
#include "sue-port-owner.h"

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SueNetDevice);

TypeId SueNetDevice::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::SueNetDevice")
          .SetParent<NetDevice>()
          .SetGroupName("Sue")
          .AddConstructor<SueNetDevice>()
          .AddAttribute("DataRate", "The port's line rate", DataRateValue(DataRate("800Gbps")),
                        MakeDataRateAccessor(&SueNetDevice::m_rate), MakeDataRateChecker())
          .AddAttribute("Mtu", "The largest frame's payload, in bytes", UintegerValue(9216),
                        MakeUintegerAccessor(&SueNetDevice::SetMtu, &SueNetDevice::GetMtu),
                        MakeUintegerChecker<std::uint16_t>())
          .AddAttribute("ReceiveErrorModel",
                        "Marks arriving frames as received with a bad FCS (none: every frame good)",
                        PointerValue(), MakePointerAccessor(&SueNetDevice::m_receiveErrorModel),
                        MakePointerChecker<ErrorModel>())
          .AddTraceSource("Tx", "A frame starts on the wire",
                          MakeTraceSourceAccessor(&SueNetDevice::m_txTrace),
                          "ns3::Packet::TracedCallback")
          .AddTraceSource("Rx", "A frame arrived with a good FCS",
                          MakeTraceSourceAccessor(&SueNetDevice::m_rxTrace),
                          "ns3::Packet::TracedCallback")
          .AddTraceSource("Drop", "A frame arrived with a bad FCS (the error model marked it)",
                          MakeTraceSourceAccessor(&SueNetDevice::m_dropTrace),
                          "ns3::Packet::TracedCallback")
          .AddTraceSource("Sniffer",
                          "Every frame sent and every frame arriving, before the FCS is checked: a "
                          "tap on the link",
                          MakeTraceSourceAccessor(&SueNetDevice::m_snifferTrace),
                          "ns3::Packet::TracedCallback");
  return tid;
}

SueNetDevice::SueNetDevice() = default;

bool SueNetDevice::Attach(Ptr<SueChannel> channel) {
  m_channel = channel;
  channel->Attach(this);
  return true;
}

void SueNetDevice::SetOwner(SuePortOwner* owner, std::uint32_t port) {
  m_owner = owner;
  m_port = port;
}

void SueNetDevice::TransmitFrame(Ptr<Packet> frame, const scaleup::transport::link_info& info) {
  NS_ASSERT_MSG(!m_busy, "a port sends one frame at a time");
  m_txTrace(frame);
  m_snifferTrace(frame);
  Ptr<Packet> p = frame->Copy();
  SueLinkHeader h;
  h.info = info;
  p->AddHeader(h);
  const Time tx = m_rate.CalculateBytesTxTime(frame->GetSize());
  m_busy = true;
  Simulator::Schedule(tx, &SueNetDevice::TransmitComplete, this);
  m_channel->Transmit(this, p, tx);
}

void SueNetDevice::TransmitComplete() {
  m_busy = false;
  SuePortOwner::Input in;
  in.what = SuePortOwner::Input::FREE;
  in.port = m_port;
  m_owner->Enqueue(std::move(in));
}

void SueNetDevice::SendMessage(const scaleup::transport::link_message& message) {
  Ptr<Packet> p = Create<Packet>();
  SueLinkHeader h;
  h.kind = SueLinkHeader::MESSAGE;
  h.message = message;
  p->AddHeader(h);
  m_channel->Transmit(this, p, Time(0));
}

void SueNetDevice::Receive(Ptr<Packet> packet) {
  SueLinkHeader h;
  packet->RemoveHeader(h);
  SuePortOwner::Input in;
  in.port = m_port;
  if (h.kind == SueLinkHeader::MESSAGE) {
    in.what = SuePortOwner::Input::MESSAGE;
    in.message = h.message;
  } else {
    in.what = SuePortOwner::Input::FRAME;
    in.info = h.info;
    // The capture is a tap on the link: it sees the frame before the MAC checks its FCS.
    m_snifferTrace(packet);
    if (m_receiveErrorModel && m_receiveErrorModel->IsCorrupt(packet)) {
      in.info.fcs_ok = false;
      m_dropTrace(packet);
    } else {
      m_rxTrace(packet);
    }
    in.packet = packet;
  }
  m_owner->Enqueue(std::move(in));
}

void SueNetDevice::DoDispose() {
  m_node = nullptr;
  m_channel = nullptr;
  m_receiveErrorModel = nullptr;
  m_owner = nullptr;
  NetDevice::DoDispose();
}

void SueNetDevice::SetIfIndex(const uint32_t index) { m_ifIndex = index; }
uint32_t SueNetDevice::GetIfIndex() const { return m_ifIndex; }
Ptr<Channel> SueNetDevice::GetChannel() const { return m_channel; }
void SueNetDevice::SetAddress(Address address) { m_address = Mac48Address::ConvertFrom(address); }
Address SueNetDevice::GetAddress() const { return m_address; }
bool SueNetDevice::SetMtu(const uint16_t mtu) {
  m_mtu = mtu;
  return true;
}
uint16_t SueNetDevice::GetMtu() const { return m_mtu; }
bool SueNetDevice::IsLinkUp() const { return m_channel != nullptr; }
void SueNetDevice::AddLinkChangeCallback(Callback<void>) {}
bool SueNetDevice::IsBroadcast() const { return false; }
Address SueNetDevice::GetBroadcast() const { return Mac48Address::GetBroadcast(); }
bool SueNetDevice::IsMulticast() const { return false; }
Address SueNetDevice::GetMulticast(Ipv4Address) const {
  return Mac48Address::GetMulticast(Ipv4Address());
}
Address SueNetDevice::GetMulticast(Ipv6Address) const {
  return Mac48Address::GetMulticast(Ipv6Address());
}
bool SueNetDevice::IsBridge() const { return false; }
// The distributed simulator takes the lookahead from point-to-point devices' channels.
bool SueNetDevice::IsPointToPoint() const { return true; }
bool SueNetDevice::Send(Ptr<Packet>, const Address&, uint16_t) { return false; }
bool SueNetDevice::SendFrom(Ptr<Packet>, const Address&, const Address&, uint16_t) { return false; }
Ptr<Node> SueNetDevice::GetNode() const { return m_node; }
void SueNetDevice::SetNode(Ptr<Node> node) { m_node = node; }
bool SueNetDevice::NeedsArp() const { return false; }
void SueNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback) {}
void SueNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback) {}
bool SueNetDevice::SupportsSendFrom() const { return false; }

}  // namespace ns3

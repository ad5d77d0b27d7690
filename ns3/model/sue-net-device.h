// One SUE port: an XPU's (R2 Table 1: 1, 2 or 4 per XPU) or a switch's. It serialises the frames
// its owner gives it at its DataRate onto its SueChannel and hands what arrives to its owner.
// Frames are whole Ethernet frames as the library emits them (no FCS), and that is what the
// Sniffer trace (and so the helper's pcaps, DLT_EN10MB) sees: a tap on the link, which records
// what the port sends and what arrives at it before its MAC checks the FCS, so that a pcap holds
// every frame of every go-back (docs/conformance.md: captures are taken before the loss). The
// ReceiveErrorModel is the error hook: a frame it marks arrives with a bad FCS, which LLR repairs
// when it is on and which is otherwise dropped, for go-back-N to repair end to end.
#ifndef SUE_NET_DEVICE_H
#define SUE_NET_DEVICE_H

#include <ns3/data-rate.h>
#include <ns3/error-model.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <ns3/traced-callback.h>

#include <cstdint>

#include "scaleup/transport/link_port.hpp"

namespace ns3 {

class SueChannel;
class SuePortOwner;

class SueNetDevice : public NetDevice {
 public:
  static TypeId GetTypeId();
  SueNetDevice();

  bool Attach(Ptr<SueChannel> channel);
  void SetOwner(SuePortOwner* owner, std::uint32_t port);
  std::uint32_t GetPortNumber() const { return m_port; }
  DataRate GetDataRate() const { return m_rate; }

  // Whether a frame is being serialised now.
  bool IsBusy() const { return m_busy; }
  // Puts `frame` on the wire (the port must not be busy); `info` travels below the capture.
  void TransmitFrame(Ptr<Packet> frame, const scaleup::transport::link_info& info);
  // A message of the link layer to the other end: out of band, after the link's delay.
  void SendMessage(const scaleup::transport::link_message& message);
  // What the channel (or another rank) delivers: the link header, then the frame.
  void Receive(Ptr<Packet> packet);

  // NetDevice
  void SetIfIndex(const uint32_t index) override;
  uint32_t GetIfIndex() const override;
  Ptr<Channel> GetChannel() const override;
  void SetAddress(Address address) override;
  Address GetAddress() const override;
  bool SetMtu(const uint16_t mtu) override;
  uint16_t GetMtu() const override;
  bool IsLinkUp() const override;
  void AddLinkChangeCallback(Callback<void> callback) override;
  bool IsBroadcast() const override;
  Address GetBroadcast() const override;
  bool IsMulticast() const override;
  Address GetMulticast(Ipv4Address multicastGroup) const override;
  Address GetMulticast(Ipv6Address addr) const override;
  bool IsBridge() const override;
  bool IsPointToPoint() const override;
  // The SUE stack sends through its owner; packets from a protocol stack are not carried.
  bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
  bool SendFrom(Ptr<Packet> packet, const Address& source, const Address& dest,
                uint16_t protocolNumber) override;
  Ptr<Node> GetNode() const override;
  void SetNode(Ptr<Node> node) override;
  bool NeedsArp() const override;
  void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
  void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
  bool SupportsSendFrom() const override;

 protected:
  void DoDispose() override;

 private:
  void TransmitComplete();

  Ptr<Node> m_node;
  Ptr<SueChannel> m_channel;
  SuePortOwner* m_owner = nullptr;
  std::uint32_t m_port = 0;
  std::uint32_t m_ifIndex = 0;
  Mac48Address m_address;
  std::uint16_t m_mtu = 9216;
  DataRate m_rate;
  Ptr<ErrorModel> m_receiveErrorModel;
  bool m_busy = false;

  TracedCallback<Ptr<const Packet>> m_txTrace, m_rxTrace, m_dropTrace, m_snifferTrace;
};

}  // namespace ns3

#endif

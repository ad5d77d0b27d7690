#include "ns3/sue-helper.h"

#include <ns3/abort.h>
#include <ns3/error-model.h>
#include <ns3/pcap-file-wrapper.h>
#include <ns3/pointer.h>
#include <ns3/trace-helper.h>
#include <ns3/uinteger.h>

#include "ns3/sue-channel.h"
#include "ns3/sue-net-device.h"

#ifdef NS3_MPI
#include <ns3/mpi-interface.h>
#include <ns3/mpi-receiver.h>
#endif

namespace ns3 {

SueHelper::SueHelper() {
  m_xpu.SetTypeId("ns3::SueXpu");
  m_switch.SetTypeId("ns3::SueSwitch");
  m_device.SetTypeId("ns3::SueNetDevice");
  m_channel.SetTypeId("ns3::SueChannel");
}

void SueHelper::SetXpuAttribute(const std::string& name, const AttributeValue& value) {
  m_xpu.Set(name, value);
  if (name == "Encapsulation" || name == "Llr" || name == "CbfcCredits") m_switch.Set(name, value);
}
void SueHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value) {
  m_switch.Set(name, value);
}
void SueHelper::SetDeviceAttribute(const std::string& name, const AttributeValue& value) {
  m_device.Set(name, value);
}
void SueHelper::SetChannelAttribute(const std::string& name, const AttributeValue& value) {
  m_channel.Set(name, value);
}
void SueHelper::SetLoss(double rate, std::int64_t stream, bool switchPortsToo) {
  m_loss = rate;
  m_stream = stream;
  m_switchLoss = switchPortsToo;
}

Ptr<SueNetDevice> SueHelper::MakeDevice(Ptr<Node> node, bool lossy) {
  Ptr<SueNetDevice> dev = m_device.Create<SueNetDevice>();
  dev->SetAddress(Mac48Address::Allocate());
  node->AddDevice(dev);
  if (lossy && m_loss > 0) {
    Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
    em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
    em->SetRate(m_loss);
    em->AssignStreams(m_stream++);
    dev->SetAttribute("ReceiveErrorModel", PointerValue(em));
  }
#ifdef NS3_MPI
  // Frames from another rank arrive through the device's MPI receiver.
  if (MpiInterface::IsEnabled()) {
    Ptr<MpiReceiver> r = CreateObject<MpiReceiver>();
    r->SetReceiveCallback(MakeCallback(&SueNetDevice::Receive, dev));
    dev->AggregateObject(r);
  }
#endif
  return dev;
}

NetDeviceContainer SueHelper::Install(NodeContainer xpus, NodeContainer switches,
                                      std::uint16_t firstId) {
  const std::uint32_t ports = switches.GetN();
  NS_ABORT_MSG_IF(ports != 1 && ports != 2 && ports != 4,
                  "SueHelper: 1, 2 or 4 switches, one per port (R2 Table 1)");
  for (std::uint32_t s = 0; s < ports; ++s) {
    if (!switches.Get(s)->GetObject<SueSwitch>())
      switches.Get(s)->AggregateObject(m_switch.Create<SueSwitch>());
  }
  NetDeviceContainer out;
  for (std::uint32_t i = 0; i < xpus.GetN(); ++i) {
    Ptr<Node> node = xpus.Get(i);
    NS_ABORT_MSG_IF(node->GetObject<SueXpu>(),
                    "SueHelper: node " << node->GetId() << " has an XPU already");
    const auto id = static_cast<std::uint16_t>(firstId + i);
    Ptr<SueXpu> xpu = m_xpu.Create<SueXpu>();
    xpu->SetAttribute("XpuId", UintegerValue(id));
    node->AggregateObject(xpu);
    for (std::uint32_t p = 0; p < ports; ++p) {
      Ptr<Node> swNode = switches.Get(p);
      Ptr<SueSwitch> sw = swNode->GetObject<SueSwitch>();
      Ptr<SueNetDevice> a = MakeDevice(node, true);
      Ptr<SueNetDevice> b = MakeDevice(swNode, m_switchLoss);
      Ptr<SueChannel> ch = m_channel.Create<SueChannel>();
      a->Attach(ch);
      b->Attach(ch);
      xpu->AddPort(a);
      sw->AddRoute(id, sw->AddPort(b));
      out.Add(a);
      m_switchPorts.Add(b);
    }
  }
  return out;
}

std::vector<Ptr<SueXpu>> SueHelper::GetXpus(const NodeContainer& nodes) {
  std::vector<Ptr<SueXpu>> out;
  for (auto n = nodes.Begin(); n != nodes.End(); ++n) out.push_back((*n)->GetObject<SueXpu>());
  return out;
}

void SueHelper::EnablePcapInternal(std::string prefix, Ptr<NetDevice> nd, bool,
                                   bool explicitFilename) {
  Ptr<SueNetDevice> dev = nd->GetObject<SueNetDevice>();
  if (!dev) return;
  PcapHelper pcap;
  const std::string file = explicitFilename ? prefix : pcap.GetFilenameFromDevice(prefix, dev);
  Ptr<PcapFileWrapper> w = pcap.CreateFile(file, std::ios::out, PcapHelper::DLT_EN10MB);
  pcap.HookDefaultSink<SueNetDevice>(dev, "Sniffer", w);
}

}  // namespace ns3

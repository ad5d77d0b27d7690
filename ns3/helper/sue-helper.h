// Builds SUE fabrics in a user's script: XPUs (SueXpu on each node, one SueNetDevice per port)
// on SueChannel links to switches (SueSwitch), port p of every XPU on switch p (one plane per
// port, R2 Figure 3), and pcaps of any device (Ethernet, DLT_EN10MB).
//
//   SueHelper sue;
//   sue.SetXpuAttribute("Encapsulation", StringValue("afh1-shim"));
//   NetDeviceContainer ports = sue.Install(xpus, switches);
//   sue.EnablePcap("sue", ports);
#ifndef SUE_HELPER_H
#define SUE_HELPER_H

#include <ns3/net-device-container.h>
#include <ns3/node-container.h>
#include <ns3/object-factory.h>
#include <ns3/trace-helper.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ns3/sue-switch.h"
#include "ns3/sue-xpu.h"

namespace ns3 {

class SueHelper : public PcapHelperForDevice {
 public:
  SueHelper();

  // SueXpu's attributes; Encapsulation, Llr and CbfcCredits go to the switches too, as both
  // ends of a link must agree on them.
  void SetXpuAttribute(const std::string& name, const AttributeValue& value);
  void SetSwitchAttribute(const std::string& name, const AttributeValue& value);
  // SueNetDevice's (DataRate, Mtu) on every port, XPU's and switch's.
  void SetDeviceAttribute(const std::string& name, const AttributeValue& value);
  // SueChannel's (Delay).
  void SetChannelAttribute(const std::string& name, const AttributeValue& value);
  // The XPUs' ports mark this share of the frames they receive as received with a bad FCS (and,
  // with `switchPortsToo`, the switches' ports too). Each device draws from a random stream of
  // its own, numbered from `stream` in the order the devices are made, so that a run is the same
  // however it is split across ranks. Losses on the way down only leave every port's pcap (a tap
  // before the FCS check) holding every frame of every go-back, which `scaleup check` needs to
  // judge them; a loss on the way up happens before the receiver's tap (docs/conformance.md).
  void SetLoss(double rate, std::int64_t stream = 0, bool switchPortsToo = false);

  // An XPU on every node of `xpus` with one port per node of `switches` (1, 2 or 4), port p linked
  // to switch p. XPU ids are the nodes' order in `xpus`, from `firstId` (call Install again, with
  // the next id, to add XPUs to the same switches). Returns the XPUs' ports, XPU by XPU.
  NetDeviceContainer Install(NodeContainer xpus, NodeContainer switches, std::uint16_t firstId = 0);
  // The switch ports made so far, in order.
  NetDeviceContainer GetSwitchPorts() const { return m_switchPorts; }

  static Ptr<SueXpu> GetXpu(Ptr<Node> node) { return node->GetObject<SueXpu>(); }
  static Ptr<SueSwitch> GetSwitch(Ptr<Node> node) { return node->GetObject<SueSwitch>(); }
  // The XPUs of `nodes`, in order.
  static std::vector<Ptr<SueXpu>> GetXpus(const NodeContainer& nodes);

 private:
  void EnablePcapInternal(std::string prefix, Ptr<NetDevice> nd, bool promiscuous,
                          bool explicitFilename) override;
  Ptr<SueNetDevice> MakeDevice(Ptr<Node> node, bool lossy);

  ObjectFactory m_xpu, m_switch, m_device, m_channel;
  double m_loss = 0;
  bool m_switchLoss = false;
  std::int64_t m_stream = 0;
  NetDeviceContainer m_switchPorts;
};

}  // namespace ns3

#endif

// Two ranks under DistributedSimulatorImpl: rank 0 sends one packet with MpiInterface::SendPacket
// to a device of node 1 (on rank 1), which takes it in through an aggregated MpiReceiver, as
// ns-3's point-to-point remote channel does. Rank 1 reports when it arrived and whether the
// bytes, a packet tag and a byte tag came across the MPI hop (Packet::Serialize).
#include <ns3/core-module.h>
#include <ns3/distributed-simulator-impl.h>
#include <ns3/mpi-interface.h>
#include <ns3/mpi-receiver.h>
#include <ns3/network-module.h>

#include <cstring>
#include <iostream>

using namespace ns3;

namespace {
constexpr char kPayload[] = "frame across ranks";
constexpr uint32_t kMark = 0x5ca1ab1e;

class MarkTag : public Tag {
public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("scaleup::MarkTag").SetParent<Tag>().AddConstructor<MarkTag>();
    return tid;
  }
  TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  uint32_t GetSerializedSize() const override { return 4; }
  void Serialize(TagBuffer b) const override { b.WriteU32(mark); }
  void Deserialize(TagBuffer b) override { mark = b.ReadU32(); }
  void Print(std::ostream& os) const override { os << std::hex << mark << std::dec; }
  uint32_t mark = 0;
};
NS_OBJECT_ENSURE_REGISTERED(MarkTag);

int received = 0;
std::string summary;

void Receive(Ptr<Packet> p) {
  ++received;
  std::string bytes(p->GetSize(), '\0');
  p->CopyData(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size());
  MarkTag tag;
  bool packet_tag = p->PeekPacketTag(tag) && tag.mark == kMark;
  bool byte_tag = p->FindFirstMatchingByteTag(tag) && tag.mark == kMark;
  summary = std::to_string(bytes.size()) + " bytes at " +
            std::to_string(Simulator::Now().GetNanoSeconds()) + " ns, bytes " +
            (bytes == kPayload ? "intact" : "CHANGED") + ", packet tag " +
            (packet_tag ? "kept" : "lost") + ", byte tag " + (byte_tag ? "kept" : "lost");
}

void Send(Ptr<Node> to) {
  Ptr<Packet> p = Create<Packet>(reinterpret_cast<const uint8_t*>(kPayload), std::strlen(kPayload));
  MarkTag tag;
  tag.mark = kMark;
  p->AddPacketTag(tag);
  p->AddByteTag(tag);
  // The receive time must lie at least the lookahead ahead of now.
  MpiInterface::SendPacket(p, Simulator::Now() + MicroSeconds(10), to->GetId(), 0);
}
}  // namespace

int main(int argc, char** argv) {
  GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DistributedSimulatorImpl"));
  MpiInterface::Enable(&argc, &argv);
  const uint32_t rank = MpiInterface::GetSystemId();
  if (MpiInterface::GetSize() != 2) {
    std::cerr << "smoke: needs exactly 2 ranks\n";
    MpiInterface::Disable();
    return 1;
  }
  // Every rank builds the same nodes in the same order: node ids agree across ranks.
  Ptr<Node> n0 = CreateObject<Node>(0);
  Ptr<Node> n1 = CreateObject<Node>(1);
  Ptr<SimpleNetDevice> dev = CreateObject<SimpleNetDevice>();
  n1->AddDevice(dev);
  Ptr<MpiReceiver> receiver = CreateObject<MpiReceiver>();
  receiver->SetReceiveCallback(MakeCallback(&Receive));
  dev->AggregateObject(receiver);
  // Without point-to-point channels between ranks the lookahead is unbounded: bound it.
  DynamicCast<DistributedSimulatorImpl>(Simulator::GetImplementation())
      ->BoundLookAhead(MicroSeconds(10));

  if (rank == 0) Simulator::ScheduleWithContext(n0->GetId(), MilliSeconds(1), &Send, n1);
  Simulator::Stop(MilliSeconds(5));
  Simulator::Run();
  if (rank == 1) std::cout << "smoke: rank 1 got " << received << " packet: " << summary << "\n";
  Simulator::Destroy();
  MpiInterface::Disable();
  return 0;
}

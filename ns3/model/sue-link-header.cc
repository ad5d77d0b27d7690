#include "sue-link-header.h"

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SueLinkHeader);

TypeId SueLinkHeader::GetTypeId() {
  static TypeId tid = TypeId("ns3::SueLinkHeader")
                          .SetParent<Header>()
                          .SetGroupName("Sue")
                          .AddConstructor<SueLinkHeader>();
  return tid;
}

TypeId SueLinkHeader::GetInstanceTypeId() const { return GetTypeId(); }

// kind, flags (llr, fcs_ok), seq, class; then the message: what, seq, class, limit.
std::uint32_t SueLinkHeader::GetSerializedSize() const { return kind == FRAME ? 5 : 10; }

void SueLinkHeader::Serialize(Buffer::Iterator i) const {
  i.WriteU8(kind);
  if (kind == FRAME) {
    i.WriteU8(static_cast<std::uint8_t>((info.llr ? 1 : 0) | (info.fcs_ok ? 2 : 0)));
    i.WriteHtonU16(info.seq);
    i.WriteU8(info.cls);
    return;
  }
  i.WriteU8(static_cast<std::uint8_t>(message.what));
  i.WriteHtonU16(message.seq);
  i.WriteU8(message.update.cls);
  i.WriteU8(message.update.rsvd);
  i.WriteHtonU32(message.update.limit);
}

std::uint32_t SueLinkHeader::Deserialize(Buffer::Iterator i) {
  kind = i.ReadU8() == MESSAGE ? MESSAGE : FRAME;
  if (kind == FRAME) {
    const std::uint8_t flags = i.ReadU8();
    info.llr = (flags & 1) != 0;
    info.fcs_ok = (flags & 2) != 0;
    info.seq = i.ReadNtohU16();
    info.cls = i.ReadU8();
    return 5;
  }
  message.what = static_cast<scaleup::transport::link_message::kind>(i.ReadU8());
  message.seq = i.ReadNtohU16();
  message.update.cls = i.ReadU8();
  message.update.rsvd = i.ReadU8();
  message.update.limit = i.ReadNtohU32();
  return 10;
}

void SueLinkHeader::Print(std::ostream& os) const {
  if (kind == FRAME) {
    os << "frame llr=" << info.llr << " seq=" << info.seq << " class=" << unsigned(info.cls)
       << " fcs_ok=" << info.fcs_ok;
  } else {
    os << "link message " << unsigned(static_cast<std::uint8_t>(message.what))
       << " seq=" << message.seq;
  }
}

}  // namespace ns3

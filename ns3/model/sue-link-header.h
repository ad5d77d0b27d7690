// What travels with a frame below the capture on an SUE link: the link layer's information
// (LLR's sequence number, the CBFC class, whether the FCS is good), or a message of the link
// layer itself (an LLR ACK or NACK, a credit update). It is a header of bytes, not a packet
// tag, so that it crosses ranks of a distributed simulation with the frame; the channel puts it
// on and the receiving device takes it off, so pcaps never see it.
#ifndef SUE_LINK_HEADER_H
#define SUE_LINK_HEADER_H

#include <ns3/header.h>

#include <cstdint>

#include "scaleup/transport/link_port.hpp"

namespace ns3 {

class SueLinkHeader : public Header {
 public:
  enum Kind : std::uint8_t { FRAME = 0, MESSAGE = 1 };

  static TypeId GetTypeId();
  TypeId GetInstanceTypeId() const override;
  std::uint32_t GetSerializedSize() const override;
  void Serialize(Buffer::Iterator start) const override;
  std::uint32_t Deserialize(Buffer::Iterator start) override;
  void Print(std::ostream& os) const override;

  Kind kind = FRAME;
  scaleup::transport::link_info info{};        // FRAME
  scaleup::transport::link_message message{};  // MESSAGE
};

}  // namespace ns3

#endif

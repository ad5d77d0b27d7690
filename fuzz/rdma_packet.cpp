// ExaJet RDMA packets: decode_packet must cope with any bytes, and report within its bounds.
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/rdma/exajet_packet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scaleup;
  const auto d = rdma::decode_packet(wire::bytes(data, size));
  fuzz::check(d.error_count <= d.errors.size(), "rdma: error count past its array");
  if (d.ok()) fuzz::check(d.payload_offset <= size, "rdma: payload starts past the packet");
  for (const auto& e : d.error_list()) fuzz::check(static_cast<bool>(e), "rdma: empty error kept");
  return 0;
}

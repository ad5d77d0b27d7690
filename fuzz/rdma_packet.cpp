// ExaJet RDMA packets: read_packet must cope with any bytes, and report within its bounds.
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/rdma/exajet_packet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scaleup;
  const auto d = rdma::read_packet(wire::bytes(data, size));
  fuzz::check(d.errors.size() <= d.errors.items.size(), "rdma: error count past its array");
  fuzz::check(d.errors_before_payload <= d.errors_before_footer &&
                  d.errors_before_footer <= d.errors.size(),
              "rdma: error marks out of order");
  if (d.ok()) fuzz::check(d.payload_offset <= size, "rdma: payload starts past the packet");
  if (!d.payload.empty())
    fuzz::check(d.payload.data() >= data && d.payload.data() + d.payload.size() <= data + size,
                "rdma: payload outside the packet");
  for (const auto& e : d.errors) fuzz::check(static_cast<bool>(e), "rdma: empty error kept");
  return 0;
}

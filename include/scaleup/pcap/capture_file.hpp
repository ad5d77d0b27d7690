// A capture file written in the format its name asks for: pcapng for a name ending in .pcapng,
// with `interfaces` interfaces of one link type (named portN when there are several: a fabric's
// planes), each frame on the one it crossed; classic pcap otherwise, which has no interfaces:
// every frame is written alike. The generators and the Python module's write_pcap write
// through it. Failures come back as false with a message meant to be shown as it is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scaleup/pcap/packet.hpp"
#include "scaleup/pcap/pcapng_writer.hpp"
#include "scaleup/pcap/writer.hpp"

namespace scaleup::pcap {

// Whether a file's name asks for pcapng rather than pcap: the one test of every writer that
// picks a format by name (this one, and dump -w's, which opens its writer at the first frame).
inline bool names_pcapng(std::string_view path) noexcept { return path.ends_with(".pcapng"); }

class capture_file {
 public:
  bool open(const std::string& path, link_type link, std::uint32_t snaplen, std::string& error,
            unsigned interfaces = 1) {
    if (!names_pcapng(path)) {
      pcap_ = writer::create(path, link, snaplen, error);
      return pcap_.has_value();
    }
    std::vector<pcapng_writer::interface> ifs(std::max(interfaces, 1u), {link, ""});
    if (ifs.size() > 1)
      for (std::size_t p = 0; p < ifs.size(); ++p) ifs[p].name = "port" + std::to_string(p);
    if (auto w = pcapng_writer::create(path, ifs, snaplen, error)) ng_.emplace(std::move(*w));
    return ng_.has_value();
  }
  bool write(std::span<const std::uint8_t> frame, std::uint64_t ns, std::uint32_t interface = 0) {
    return pcap_ ? pcap_->write(frame, ns) : ng_->write(interface, frame, ns);
  }
  bool close() { return pcap_ ? pcap_->close() : ng_->close(); }
  const std::string& error() const { return pcap_ ? pcap_->error() : ng_->error(); }

 private:
  std::optional<writer> pcap_;
  std::optional<pcapng_writer> ng_;
};

}  // namespace scaleup::pcap

// Capture files: reading pcap and pcapng (reader.hpp, no library needed) and writing pcap
// through libpcap (writer.hpp). Including this header means linking libpcap (scaleup::pcap).
#pragma once

#include "scaleup/pcap/packet.hpp"
#include "scaleup/pcap/reader.hpp"
#include "scaleup/pcap/writer.hpp"

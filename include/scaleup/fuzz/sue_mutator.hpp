// Structure-aware mutation of SUE frames and of captures of them, for coverage-guided fuzzing
// (libFuzzer's LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver).
//
// A byte mutator alone breaks the R-CRC of nearly every frame it touches, so a receiver under test
// drops nearly every input at its first check and what lies behind that check is never reached.
// This mutator takes a frame apart with the library's reader (wire::read_frame: the network
// headers, the RH, the packed commands), changes one part, with the caller's byte mutator
// (libFuzzer's LLVMFuzzerMutate) or by structure (an RH field; a command inserted, removed,
// duplicated, swapped or resized; the payload cut; another encapsulation), and puts the frame
// together again with what a receiver checks made right: the RH's fixed bits (version 0, reserved
// bits zero), each command's length as the command profile frames it, the IPv4 total length and
// header checksum, the UDP length and checksum, the IPv6 payload length, the AFH Gen 1 shim
// length, the R-CRC, the padding to the Ethernet minimum, and an FCS when asked. One mutation in
// mutator_config::fault_one_in leaves one of them wrong on purpose, so that the receiver's
// refusals are fuzzed too.
//
// A capture (classic pcap, either byte order) is mutated as a list of frames: one frame as above,
// or a frame duplicated, dropped, moved, answered (an ACK or NACK from its receiver), cut by a
// snapshot length, split into IP fragments, or moved in time.
//
// No heap and no exceptions: the object holds its buffers (about 70 KiB), so a fuzz target keeps
// one, static. One per thread.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/random_command.hpp"
#include "scaleup/pack/receive.hpp"
#include "scaleup/pcap/file_field.hpp"
#include "scaleup/pcap/pcap_file.hpp"
#include "scaleup/sim/splitmix.hpp"
#include "scaleup/wire/afh_gen1.hpp"
#include "scaleup/wire/afh_gen2.hpp"
#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/ethernet.hpp"
#include "scaleup/wire/frame.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/ip_fragment.hpp"
#include "scaleup/wire/pdu.hpp"
#include "scaleup/wire/receive.hpp"
#include "scaleup/wire/reliability_header.hpp"

// libFuzzer's byte mutator, declared weak: in a program linked with libFuzzer it is libFuzzer's,
// elsewhere (a build with another compiler or without -fsanitize=fuzzer) the address is null and
// the mutator uses a byte mutator of its own (basic_byte_mutator).
#if defined(__GNUC__) || defined(__clang__)
extern "C" [[gnu::weak]] std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size,
                                                      std::size_t max_size);
#endif

namespace scaleup::fuzz {

// Whether LLVMFuzzerMutate is there to call (the program runs under libFuzzer).
inline bool libfuzzer_linked() noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return &::LLVMFuzzerMutate != nullptr;
#else
  return false;
#endif
}

// The mutator's randomness, from the seed libFuzzer passes: SplitMix64, a UniformRandomBitGenerator
// (pack::random_command takes it).
class mutation_rng {
 public:
  using result_type = std::uint64_t;
  constexpr explicit mutation_rng(std::uint64_t seed) noexcept : state_(seed) {}
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type{0}; }
  constexpr result_type operator()() noexcept { return sim::splitmix64(state_); }
  // 0 to n - 1 (0 when n is 0).
  constexpr std::size_t below(std::size_t n) noexcept {
    return n == 0 ? 0 : static_cast<std::size_t>((*this)() % n);
  }
  constexpr bool one_in(std::size_t n) noexcept { return n != 0 && below(n) == 0; }

 private:
  std::uint64_t state_;
};

// A byte mutator of the shape of LLVMFuzzerMutate (data, size, max_size -> new size, at most
// max_size) for where libFuzzer's is not linked in: a bit flipped, a byte set (at random or to 0,
// 1, 0x7F, 0x80, 0xFF), a byte inserted or erased, or a run of bytes copied over another.
struct basic_byte_mutator {
  mutation_rng* rng = nullptr;

  std::size_t operator()(std::uint8_t* d, std::size_t size, std::size_t max_size) const noexcept {
    mutation_rng& r = *rng;
    if (size == 0) {
      if (max_size == 0) return 0;
      d[0] = static_cast<std::uint8_t>(r());
      return 1;
    }
    switch (r.below(6)) {
      case 0:
        d[r.below(size)] ^= static_cast<std::uint8_t>(1u << r.below(8));
        return size;
      case 1:
        d[r.below(size)] = static_cast<std::uint8_t>(r());
        return size;
      case 2: {
        static constexpr std::array<std::uint8_t, 5> special{0, 1, 0x7F, 0x80, 0xFF};
        d[r.below(size)] = special[r.below(special.size())];
        return size;
      }
      case 3: {
        if (size >= max_size) return size;
        const std::size_t at = r.below(size + 1);
        std::memmove(d + at + 1, d + at, size - at);
        d[at] = static_cast<std::uint8_t>(r());
        return size + 1;
      }
      case 4: {
        if (size < 2) return size;
        const std::size_t at = r.below(size);
        std::memmove(d + at, d + at + 1, size - at - 1);
        return size - 1;
      }
      default: {
        const std::size_t n = 1 + r.below(std::min<std::size_t>(size, 8));
        std::memmove(d + r.below(size - n + 1), d + r.below(size - n + 1), n);
        return size;
      }
    }
  }
};

// libFuzzer's LLVMFuzzerMutate where the program is linked with libFuzzer, else
// basic_byte_mutator with the mutator's randomness.
struct default_byte_mutator {
  mutation_rng* rng = nullptr;

  std::size_t operator()(std::uint8_t* d, std::size_t size, std::size_t max_size) const noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if (libfuzzer_linked()) return ::LLVMFuzzerMutate(d, size, max_size);
#endif
    return basic_byte_mutator{rng}(d, size, max_size);
  }
};

// Frames longer than this are mutated as bytes only (a jumbo frame fits).
inline constexpr std::size_t max_frame = 10240;
// Bytes in front of the PDU that a frame taken apart may have (tags, IP options, cooked headers).
inline constexpr std::size_t max_head = 256;
// A payload's room: the SUE limit and one command more, which the repair then cuts off.
inline constexpr std::size_t max_payload = wire::sue_max_payload + pack::max_command_bytes;
// Records of a capture that are looked at; those after are kept as they are.
inline constexpr std::size_t max_records = 512;

struct mutator_config {
  // The link type of the frames mutate_frame gets (a capture says its own).
  std::uint32_t link = wire::link_ethernet;
  // The command profile that frames the payloads; null: payloads are opaque bytes.
  const pack::profile* profile = &pack::default_profile;
  // How frames are read to find their parts: UDP ports taken as SUE, Ethertypes (the flow table
  // is not used). A UDP datagram found on another port is taken as SUE when its R-CRC is bad too.
  wire::receive_options receive{};
  bool fixed_bits = true;  // RH version and reserved bits, commands' reserved and fixed fields
  bool fcs = false;        // frames end with an Ethernet FCS (kept right, like the R-CRC)
  bool pad = true;         // Ethernet and AFH Gen 2 frames padded to the 60-byte minimum
  std::size_t max_payload = wire::sue_max_payload;  // commands beyond it are cut off
  // One mutation in this many leaves one repair out (a bad R-CRC, a length off, a reserved bit
  // set, a command's length off); 0: never.
  std::uint32_t fault_one_in = 16;
};

// What a call did, for tests and statistics (sue_mutator::last).
enum class mutation : std::uint8_t {
  none,       // the input is returned as it was
  bytes,      // the byte mutator on the whole input (neither a SUE frame nor a pcap file)
  generated,  // a new frame or capture in place of an input that was none
  repaired,   // the byte mutator on the whole frame, then the frame repaired
  head_bytes,
  rh_bytes,
  rh_field,
  payload_bytes,
  command_bytes,
  command_insert,
  command_remove,
  command_duplicate,
  command_swap,
  command_resize,
  payload_cut,
  encapsulation,
  record_duplicate,
  record_remove,
  record_move,
  record_reply,
  record_time,
  record_cut,
  record_fragment,
  cross_over,
};

// clang-format off
inline constexpr std::array<std::string_view, 24> mutation_names{
    "none", "bytes", "generated", "repaired", "head_bytes", "rh_bytes", "rh_field",
    "payload_bytes", "command_bytes", "command_insert", "command_remove", "command_duplicate",
    "command_swap", "command_resize", "payload_cut", "encapsulation", "record_duplicate",
    "record_remove", "record_move", "record_reply", "record_time", "record_cut",
    "record_fragment", "cross_over"};
// clang-format on

static_assert(mutation_names.size() == static_cast<std::size_t>(mutation::cross_over) + 1);

constexpr std::string_view to_string(mutation m) noexcept {
  return mutation_names[static_cast<std::size_t>(m)];
}

// The repair left out on purpose (mutator_config::fault_one_in).
enum class fault : std::uint8_t { none, rcrc, length, rh_bits, command_length };

// A SUE frame taken apart: the bytes in front of the PDU as they were, where the length fields
// in them are, the RH and the packed payload. put_together writes the rest.
struct frame_parts {
  static constexpr std::size_t npos = ~std::size_t{0};

  std::uint32_t link = wire::link_ethernet;
  std::optional<wire::encap> kind;
  std::array<std::uint8_t, max_head> head{};
  std::size_t head_size = 0;
  // Offsets in head of the headers whose lengths and checksums cover the PDU (npos: none).
  std::size_t ipv4_at = npos;
  std::size_t ipv6_at = npos;
  std::size_t udp_at = npos;
  std::size_t shim_at = npos;
  std::size_t afh2_at = npos;  // an AFH Gen 2 header (normal or compressed, by kind)
  bool eth = false;            // head starts with an Ethernet header
  bool has_rh = true;          // false: SUE Lite (no RH, no R-CRC)
  std::array<std::uint8_t, wire::layout<wire::reliability_header>::size> rh{};
  std::array<std::uint8_t, max_payload> payload{};
  std::size_t payload_size = 0;
  // The endpoints as the frame names them (XPU ids, or from addresses of the addressing plan of
  // wire/frame.hpp), for another encapsulation.
  std::uint32_t src_xpu = 0;
  std::uint32_t dst_xpu = 0;

  wire::bytes payload_bytes() const noexcept { return {payload.data(), payload_size}; }
};

namespace detail {

template <class T, auto Member>
std::uint64_t get_field(const std::uint8_t* header) noexcept {
  const wire::field_info& f = wire::info_of<T, Member>();
  return wire::get_bits(header, f.bit, f.width);
}

template <class T, auto Member>
void set_field(std::uint8_t* header, std::uint64_t v) noexcept {
  const wire::field_info& f = wire::info_of<T, Member>();
  wire::put_bits(header, f.bit, f.width, v & wire::max_value(f.width));
}

// Exchanges two fields of one width in place (addresses, ports): byte-aligned ones of any width.
template <class T, auto A, auto B>
void swap_fields(std::uint8_t* header) noexcept {
  const wire::field_info& a = wire::info_of<T, A>();
  const wire::field_info& b = wire::info_of<T, B>();
  if (a.width == b.width && a.bit % 8 == 0 && b.bit % 8 == 0 && a.width % 8 == 0) {
    std::swap_ranges(header + a.bit / 8, header + (a.bit + a.width) / 8, header + b.bit / 8);
    return;
  }
  const std::uint64_t va = wire::get_bits(header, a.bit, a.width);
  wire::put_bits(header, a.bit, a.width, wire::get_bits(header, b.bit, b.width));
  wire::put_bits(header, b.bit, b.width, va);
}

using rh = wire::reliability_header;

// The RH fields a structural mutation changes.
inline constexpr std::array<const wire::field_info*, 6> rh_mutable_fields{
    &wire::info_of<rh, &rh::npsn>(),  &wire::info_of<rh, &rh::apsn>(),
    &wire::info_of<rh, &rh::op>(),    &wire::info_of<rh, &rh::vc>(),
    &wire::info_of<rh, &rh::xpuid>(), &wire::info_of<rh, &rh::partition>()};

// The encapsulations a frame on `link` may be rebuilt in (frame.hpp's emitters write them).
inline constexpr std::array<wire::encap, 9> ethernet_encaps{
    wire::encap::udp4,      wire::encap::udp6,      wire::encap::afh1,
    wire::encap::afh1_vlan, wire::encap::afh1_shim, wire::encap::afh1_vlan_shim,
    wire::encap::afh2,      wire::encap::afh2c,     wire::encap::lite};
inline constexpr std::array<wire::encap, 3> afh2_encaps{wire::encap::afh2, wire::encap::afh2c,
                                                        wire::encap::lite};
constexpr std::span<const wire::encap> encaps_for(std::uint32_t link) noexcept {
  if (link == wire::link_ethernet) return ethernet_encaps;
  if (link == wire::link_afh2) return afh2_encaps;
  return {};
}

// Where the Ethernet minimum frame applies (what wrap_in_place pads).
constexpr bool padded_link(std::uint32_t link) noexcept {
  return link == wire::link_ethernet || link == wire::link_afh2;
}

// A classic pcap file's records, as far as they are whole.
struct capture_index {
  pcap::byte_order order = pcap::byte_order::little;
  std::size_t record_size = pcap::pcap_file::record_size;
  bool nano = false;
  std::uint32_t link = 0;
  std::size_t count = 0;
  std::array<std::size_t, max_records + 1> at{};  // record headers; at[count]: after the last

  std::uint32_t caplen(const std::uint8_t* d, std::size_t i) const noexcept {
    return pcap::load32(d + at[i], pcap::pcap_file::captured_length, order);
  }
  std::uint32_t len(const std::uint8_t* d, std::size_t i) const noexcept {
    return pcap::load32(d + at[i], pcap::pcap_file::original_length, order);
  }
  std::uint64_t time_ns(const std::uint8_t* d, std::size_t i) const noexcept {
    namespace f = pcap::pcap_file;
    return f::time_ns(pcap::load32(d + at[i], f::ts_seconds, order),
                      pcap::load32(d + at[i], f::ts_fraction, order),
                      nano ? pcap::nano_digits : pcap::micro_digits);
  }
  // Writes a record header (the patched format's extra bytes zero).
  void put_header(std::uint8_t* h, std::uint64_t ns, std::size_t caplen,
                  std::size_t len) const noexcept {
    namespace f = pcap::pcap_file;
    std::memset(h, 0, record_size);
    const std::uint64_t unit = nano ? 1 : 1000;
    pcap::store32(h, f::ts_seconds, order, static_cast<std::uint32_t>(ns / 1'000'000'000u));
    pcap::store32(h, f::ts_fraction, order,
                  static_cast<std::uint32_t>((ns % 1'000'000'000u) / unit));
    pcap::store32(h, f::captured_length, order, static_cast<std::uint32_t>(caplen));
    pcap::store32(h, f::original_length, order, static_cast<std::uint32_t>(len));
  }
};

inline bool index_capture(const std::uint8_t* d, std::size_t size, capture_index& c) noexcept {
  namespace f = pcap::pcap_file;
  if (size < f::header_size) return false;
  const auto r = f::recognise(d);
  if (!r) return false;
  c.order = r->order;
  c.record_size = r->kind.record_size;
  c.nano = r->kind.precision == pcap::nano_digits;
  c.link = pcap::load32(d, f::link_type, c.order) & f::link_type_mask;
  c.count = 0;
  std::size_t at = f::header_size;
  while (c.count < max_records && size - at >= c.record_size) {
    const std::uint32_t caplen = pcap::load32(d + at, f::captured_length, c.order);
    if (caplen > size - at - c.record_size) break;
    c.at[c.count++] = at;
    at += c.record_size + caplen;
  }
  c.at[c.count] = at;
  return true;
}

// Replaces d[at, at + old_n) with new_n bytes of src (not inside d); false, nothing changed, when
// the result would be longer than max_size.
inline bool splice(std::uint8_t* d, std::size_t& size, std::size_t max_size, std::size_t at,
                   std::size_t old_n, const std::uint8_t* src, std::size_t new_n) noexcept {
  if (size - old_n + new_n > max_size) return false;
  std::memmove(d + at + new_n, d + at + old_n, size - at - old_n);
  if (new_n) std::memcpy(d + at, src, new_n);
  size = size - old_n + new_n;
  return true;
}

}  // namespace detail

class sue_mutator {
 public:
  explicit sue_mutator(const mutator_config& c = {}) noexcept : cfg_(c) {}

  mutator_config& config() noexcept { return cfg_; }
  const mutator_config& config() const noexcept { return cfg_; }
  // What the last call did, and the repair it left out.
  mutation last() const noexcept { return last_; }
  fault last_fault() const noexcept { return last_fault_; }

  // ---- frames --------------------------------------------------------------------------------

  // Mutates the frame in data[0, size) (on config().link) in place, with room for max_size bytes:
  // its new size. `bytes` is a byte mutator of LLVMFuzzerMutate's shape. A frame that is not SUE
  // (as read_frame reads it) gets the byte mutator, or half the time a new SUE frame.
  template <class ByteMutator>
  std::size_t mutate_frame(std::uint8_t* data, std::size_t size, std::size_t max_size,
                           unsigned seed, ByteMutator&& bytes) noexcept {
    mutation_rng r(seed_of(seed));
    last_fault_ = fault::none;
    return mutate_one(data, size, std::min(max_size, max_frame), cfg_.link, r, bytes);
  }
  // With libFuzzer's byte mutator (basic_byte_mutator outside libFuzzer).
  std::size_t mutate_frame(std::uint8_t* data, std::size_t size, std::size_t max_size,
                           unsigned seed) noexcept {
    mutation_rng r(seed_of(seed) ^ 0x5EED);
    return mutate_frame(data, size, max_size, seed, default_byte_mutator{&r});
  }

  // Frame a's network headers and RH with a's first commands and b's last ones, into out: the
  // size written (at most max_out), or a's bytes when either is not a SUE frame.
  std::size_t cross_over_frame(wire::bytes a, wire::bytes b, std::uint8_t* out, std::size_t max_out,
                               unsigned seed) noexcept {
    mutation_rng r(seed_of(seed));
    last_ = mutation::cross_over;
    last_fault_ = fault::none;
    if (take_apart(b, cfg_.link, other_) && take_apart(a, cfg_.link, parts_)) {
      frame_parts& p = parts_;
      const std::size_t ka = command_starts(p.payload_bytes(), starts_);
      const std::size_t cut_a = starts_[r.below(ka + 1)];
      const std::size_t kb = command_starts(other_.payload_bytes(), starts_);
      const std::size_t cut_b = starts_[r.below(kb + 1)];
      const std::size_t from_b = std::min(other_.payload_size - cut_b, p.payload.size() - cut_a);
      std::memcpy(p.payload.data() + cut_a, other_.payload.data() + cut_b, from_b);
      p.payload_size = cut_a + from_b;
      repair_parts(p);
      const std::size_t n = put_together(p, wire::mutable_bytes(out, max_out));
      if (n) return n;
    }
    last_ = mutation::none;
    const std::size_t n = std::min(a.size(), max_out);
    if (n) std::memmove(out, a.data(), n);
    return n;
  }

  // Repairs the SUE frame in data[0, size) (on config().link) in place: the RH's fixed bits
  // (config().fixed_bits), the commands' lengths, the carrier's lengths and checksums, the
  // R-CRC, the padding and the FCS (config().fcs). A length that leaves too little for what it
  // carries is first taken to the end of the frame. The repaired size (at most max_size), or 0
  // when no SUE PDU was found (the bytes are left as they were).
  std::size_t repair_frame(std::uint8_t* data, std::size_t size, std::size_t max_size) noexcept {
    last_ = mutation::none;
    last_fault_ = fault::none;
    if (!take_apart(wire::bytes(data, size), cfg_.link, parts_)) return 0;
    repair_parts(parts_);
    const std::size_t n = put_together(parts_, wire::mutable_bytes(out_.data(), out_.size()));
    if (n == 0 || n > max_size) return 0;
    std::memcpy(data, out_.data(), n);
    return n;
  }

  // Takes a SUE frame on `link` apart (read as config() says, a UDP datagram on an unnamed port
  // taken as SUE, a carrier length too short for what it carries taken to the frame's end);
  // false when no SUE PDU (or SUE Lite payload) is found, or the frame is an IP fragment.
  bool take_apart(wire::bytes frame, std::uint32_t link, frame_parts& p) noexcept {
    if (frame.size() > max_frame) return false;
    if (!frame.empty()) std::memcpy(work_.data(), frame.data(), frame.size());
    const wire::mutable_bytes b(work_.data(), frame.size());
    wire::receive_options o = read_options();
    for (int round = 0; round < 6; ++round) {
      const wire::received_frame f = pack::read_frame(b, link, cfg_.profile, o);
      if (f.fragment) return false;
      if (f.kind && (f.rh || *f.kind == wire::encap::lite)) return parts_of(f, link, p);
      if (f.udp && !f.kind && !o.is_sue_port(f.udp->value.dst_port)) {
        if (!o.add_udp_port(f.udp->value.dst_port)) return false;
        continue;
      }
      if (!stretch(f, b)) return false;
    }
    return false;
  }

  // Writes the frame p describes into out: head, RH, payload, R-CRC, padding, FCS, with every
  // length and checksum of the head computed (but for `f`, the one left wrong). Its size, or 0
  // when out is too small.
  std::size_t put_together(const frame_parts& p, wire::mutable_bytes out,
                           fault f = fault::none) noexcept {
    constexpr std::size_t rh_size = wire::layout<wire::reliability_header>::size;
    const std::size_t end =
        p.head_size + p.payload_size + (p.has_rh ? rh_size + wire::rcrc_size : 0);
    const std::size_t padded =
        cfg_.pad && detail::padded_link(p.link) ? std::max(end, wire::ethernet_min_frame) : end;
    const std::size_t total = padded + (cfg_.fcs ? wire::fcs_size : 0);
    if (total > out.size()) return 0;
    std::uint8_t* o = out.data();
    std::memcpy(o, p.head.data(), p.head_size);
    std::size_t at = p.head_size;
    const std::size_t pdu_at = at;
    if (p.has_rh) {
      std::memcpy(o + at, p.rh.data(), rh_size);
      if (f == fault::rh_bits) detail::set_field<detail::rh, &detail::rh::rsvd>(o + at, 1);
      at += rh_size;
    }
    if (p.payload_size) std::memcpy(o + at, p.payload.data(), p.payload_size);
    if (f == fault::command_length) lengthen_a_command(wire::mutable_bytes(o + at, p.payload_size));
    at += p.payload_size;
    if (p.has_rh) {
      std::uint32_t crc = wire::crc32(wire::bytes(o + pdu_at, at - pdu_at));
      if (f == fault::rcrc) crc ^= 1u << (p.payload_size % 32);
      wire::store_be32(o + at, crc);
      at += wire::rcrc_size;
    }
    std::memset(o + end, 0, padded - end);
    put_lengths(p, o, end, f);
    if (cfg_.fcs) wire::put_fcs(out, padded);
    return total;
  }

  // ---- captures ------------------------------------------------------------------------------

  // Mutates the pcap file in data[0, size) in place, with room for max_size bytes: its new size.
  // One of its frames is mutated as mutate_frame does, or a frame is duplicated, dropped, moved,
  // answered, cut, fragmented or moved in time. Not a pcap file: the byte mutator, or half the
  // time a new capture of a few SUE frames.
  template <class ByteMutator>
  std::size_t mutate_capture(std::uint8_t* data, std::size_t size, std::size_t max_size,
                             unsigned seed, ByteMutator&& bytes) noexcept {
    mutation_rng r(seed_of(seed));
    last_fault_ = fault::none;
    if (!detail::index_capture(data, size, cap_)) {
      if (r.one_in(2))
        if (const std::size_t n = generate_capture(data, max_size, r)) return n;
      last_ = mutation::bytes;
      return bytes(data, size, max_size);
    }
    // Now and then the file as bytes: the reader's own checks.
    if (r.one_in(64)) {
      last_ = mutation::bytes;
      return bytes(data, size, max_size);
    }
    if (cap_.count == 0) {
      if (append_generated(data, size, max_size, r)) return size;
      last_ = mutation::bytes;
      return bytes(data, size, max_size);
    }
    const std::size_t i = r.below(cap_.count);
    switch (r.below(18)) {
      case 0:
        if (duplicate_record(data, size, max_size, i, r)) return size;
        break;
      case 1:
        if (cap_.count > 1) {
          last_ = mutation::record_remove;
          const std::size_t n = cap_.at[i + 1] - cap_.at[i];
          detail::splice(data, size, max_size, cap_.at[i], n, nullptr, 0);
          return size;
        }
        break;
      case 2:
        if (cap_.count > 1) {
          last_ = mutation::record_move;
          const std::size_t j = r.below(cap_.count);
          if (j < i)
            std::rotate(data + cap_.at[j], data + cap_.at[i], data + cap_.at[i + 1]);
          else
            std::rotate(data + cap_.at[i], data + cap_.at[i + 1], data + cap_.at[j + 1]);
          return size;
        }
        break;
      case 3:
      case 4:
        if (reply_record(data, size, max_size, i, r)) return size;
        break;
      case 5:
        move_in_time(data, i, r);
        return size;
      case 6:
        if (cut_record(data, size, i, r)) return size;
        break;
      case 7:
        if (fragment_record(data, size, max_size, i, r)) return size;
        break;
      default:
        break;
    }
    return mutate_record(data, size, max_size, i, r, bytes);
  }
  std::size_t mutate_capture(std::uint8_t* data, std::size_t size, std::size_t max_size,
                             unsigned seed) noexcept {
    mutation_rng r(seed_of(seed) ^ 0x5EED);
    return mutate_capture(data, size, max_size, seed, default_byte_mutator{&r});
  }

  // Capture a's header and first records, then b's records from one on (b's only when its link
  // type is a's), into out: the size written (at most max_out). Not pcap files: a's bytes.
  std::size_t cross_over_capture(wire::bytes a, wire::bytes b, std::uint8_t* out,
                                 std::size_t max_out, unsigned seed) noexcept {
    mutation_rng r(seed_of(seed));
    last_fault_ = fault::none;
    detail::capture_index cb;
    if (!detail::index_capture(a.data(), a.size(), cap_) ||
        !detail::index_capture(b.data(), b.size(), cb) || cb.link != cap_.link ||
        max_out < pcap::pcap_file::header_size) {
      last_ = mutation::none;
      const std::size_t n = std::min(a.size(), max_out);
      if (n) std::memmove(out, a.data(), n);
      return n;
    }
    last_ = mutation::cross_over;
    std::memmove(out, a.data(), pcap::pcap_file::header_size);
    std::size_t at = pcap::pcap_file::header_size;
    const std::size_t keep = r.below(cap_.count + 1);
    const std::size_t n_a = cap_.at[keep] - cap_.at[0];
    if (at + n_a > max_out) return at;
    std::memmove(out + at, a.data() + cap_.at[0], n_a);
    at += n_a;
    for (std::size_t j = r.below(cb.count + 1); j < cb.count; ++j) {
      const std::uint32_t caplen = cb.caplen(b.data(), j);
      if (at + cap_.record_size + caplen > max_out) break;
      cap_.put_header(out + at, cb.time_ns(b.data(), j), caplen, cb.len(b.data(), j));
      std::memmove(out + at + cap_.record_size, b.data() + cb.at[j] + cb.record_size, caplen);
      at += cap_.record_size + caplen;
    }
    return at;
  }

 private:
  static std::uint64_t seed_of(unsigned seed) noexcept {
    std::uint64_t x = seed;
    return sim::splitmix64(x);
  }

  // ---- taking apart ---------------------------------------------------------------------------

  // How frames are read: as config() says, with no flow table and the FCS as config().fcs says.
  wire::receive_options read_options() const noexcept {
    wire::receive_options o = cfg_.receive;
    o.flows = nullptr;
    o.flows_only = false;
    o.fcs = cfg_.fcs ? wire::fcs_mode::present : wire::fcs_mode::absent;
    return o;
  }

  bool parts_of(const wire::received_frame& f, std::uint32_t link, frame_parts& p) noexcept {
    constexpr std::size_t rh_size = wire::layout<wire::reliability_header>::size;
    const std::size_t pdu = f.pdu_offset;
    if (pdu > max_head || pdu > f.length) return false;
    p.link = link;
    p.kind = f.kind;
    std::memcpy(p.head.data(), f.frame.data(), pdu);
    p.head_size = pdu;
    const auto at = [pdu](const auto& h) {
      return h && h->offset < pdu ? h->offset : frame_parts::npos;
    };
    p.ipv4_at = at(f.ipv4);
    p.ipv6_at = at(f.ipv6);
    p.udp_at = at(f.udp);
    p.shim_at = at(f.shim);
    p.afh2_at = f.afh2 ? at(f.afh2) : at(f.afh2c);
    p.eth = f.eth && f.eth->offset == 0;
    p.has_rh = *f.kind != wire::encap::lite;
    if (p.has_rh)
      std::memcpy(p.rh.data(), f.frame.data() + pdu, rh_size);
    else
      (void)wire::encode(wire::reliability_header{}, p.rh);
    p.payload_size = std::min(f.payload.size(), p.payload.size());
    if (p.payload_size) std::memcpy(p.payload.data(), f.payload.data(), p.payload_size);
    // A Layer 2 PDU whose R-CRC matched nowhere was read to the frame's last four bytes: in a
    // frame padded to the minimum the old R-CRC and the padding are then in the payload, after
    // its commands. Up to four bytes and zeros after the commands are those, not a command.
    if (p.has_rh && f.bounds.status == wire::rcrc_status::bad && p.udp_at == frame_parts::npos &&
        p.shim_at == frame_parts::npos && cfg_.profile) {
      const std::size_t q = starts_[command_starts(p.payload_bytes(), starts_)];
      const wire::bytes rest = p.payload_bytes().subspan(q);
      if (wire::all_zero(rest.subspan(std::min<std::size_t>(rest.size(), wire::rcrc_size))))
        p.payload_size = q;
    }
    const std::uint32_t rh_src =
        static_cast<std::uint32_t>(detail::get_field<detail::rh, &detail::rh::xpuid>(p.rh.data()));
    std::optional<std::uint32_t> src = f.src_xpu, dst = f.dst_xpu;
    if (f.ipv4 && !src) src = wire::xpu_of_ipv4(f.ipv4->value.src);
    if (f.ipv4 && !dst) dst = wire::xpu_of_ipv4(f.ipv4->value.dst);
    if (f.ipv6 && !src) src = wire::xpu_of_ipv6(f.ipv6->value.src);
    if (f.ipv6 && !dst) dst = wire::xpu_of_ipv6(f.ipv6->value.dst);
    p.src_xpu = src.value_or(rh_src);
    p.dst_xpu = dst.value_or(0);
    return true;
  }

  // A carrier length that leaves too little for what it carries (below its own header, or short
  // of a UDP header or an RH), taken to the frame's end; false when there is none to change.
  bool stretch(const wire::received_frame& f, wire::mutable_bytes b) noexcept {
    using wire::ipv4_header;
    using wire::ipv6_header;
    using wire::udp_header;
    const std::size_t end = f.length;
    std::uint8_t* d = b.data();
    const auto set = [](std::uint64_t old, std::uint64_t now, auto&& write) {
      if (old == now) return false;
      write(now);
      return true;
    };
    if (f.ipv4 && !f.udp && f.ipv4->value.protocol == wire::ip_proto_udp) {
      std::uint8_t* h = d + f.ipv4->offset;
      bool changed = false;
      std::size_t hl = std::size_t{f.ipv4->value.ihl} * 4;
      if (hl < wire::layout<ipv4_header>::size || f.ipv4->offset + hl > end) {
        detail::set_field<ipv4_header, &ipv4_header::ihl>(h, 5);
        hl = wire::layout<ipv4_header>::size;
        changed = f.ipv4->value.ihl != 5;
      }
      const std::size_t total = std::min<std::size_t>(end - f.ipv4->offset, 0xFFFF);
      changed |= set(f.ipv4->value.total_length, total, [&](std::uint64_t v) {
        detail::set_field<ipv4_header, &ipv4_header::total_length>(h, v);
      });
      if (changed) ipv4_checksum(h, hl);
      return changed;
    }
    if (f.ipv6 && !f.udp && f.ipv6->value.next_header == wire::ip_proto_udp &&
        end >= f.ipv6->offset + wire::layout<ipv6_header>::size)
      return set(
          f.ipv6->value.payload_length,
          std::min<std::size_t>(end - f.ipv6->offset - wire::layout<ipv6_header>::size, 0xFFFF),
          [&](std::uint64_t v) {
            detail::set_field<ipv6_header, &ipv6_header::payload_length>(d + f.ipv6->offset, v);
          });
    constexpr std::size_t least =
        wire::layout<udp_header>::size + wire::layout<wire::reliability_header>::size;
    if (f.udp && f.udp->value.length < least)
      return set(f.udp->value.length, std::min<std::size_t>(end - f.udp->offset, 0xFFFF),
                 [&](std::uint64_t v) {
                   detail::set_field<udp_header, &udp_header::length>(d + f.udp->offset, v);
                 });
    if (f.shim && !f.rh)
      return set(
          f.shim->value.length,
          std::min<std::size_t>(
              end - std::min(end, f.shim->offset + wire::layout<wire::afh1_shim>::size), 0xFFFF),
          [&](std::uint64_t v) {
            detail::set_field<wire::afh1_shim, &wire::afh1_shim::length>(d + f.shim->offset, v);
          });
    return false;
  }

  // ---- repairs ---------------------------------------------------------------------------------

  void repair_parts(frame_parts& p) noexcept {
    if (cfg_.fixed_bits && p.has_rh) {
      std::uint8_t* h = p.rh.data();
      detail::set_field<detail::rh, &detail::rh::ver>(h, 0);
      detail::set_field<detail::rh, &detail::rh::rsv>(h, 0);
      detail::set_field<detail::rh, &detail::rh::rsvd>(h, 0);
    }
    repair_commands(p);
  }

  // Each command framed as the profile frames it: a type the profile lacks becomes one it has
  // (the bytes after it its control and data), a data length that runs past the payload is cut
  // to what is there, a command that cannot fit ends the payload, as do zeros to its end (what a
  // receiver takes for padding); reserved and fixed fields set (config().fixed_bits). Commands
  // beyond config().max_payload are cut off.
  void repair_commands(frame_parts& p) const noexcept {
    if (!cfg_.profile || cfg_.profile->types().empty()) return;
    const pack::profile& prof = *cfg_.profile;
    const auto types = prof.types();
    std::uint8_t* d = p.payload.data();
    std::size_t n = p.payload_size;
    std::size_t pos = 0;
    std::size_t fits = 0;  // the last boundary within max_payload
    while (pos < n) {
      if (std::all_of(d + pos, d + n, [](std::uint8_t x) { return x == 0; })) {
        n = pos;
        break;
      }
      std::uint16_t framing = prof.framing(d[pos]);
      if (framing == 0) {
        d[pos] = types[d[pos] % types.size()].code;
        framing = prof.framing(d[pos]);
      }
      const std::size_t ctrl = framing & pack::profile::control_mask;
      const std::size_t rem = n - pos;
      if (rem < ctrl) {
        n = pos;
        break;
      }
      std::size_t data = 0;
      if (framing & pack::profile::carries_data) {
        data = std::min<std::size_t>(std::size_t{d[pos + 1]} + 1, rem - ctrl);
        if (data == 0) {
          n = pos;
          break;
        }
        d[pos + 1] = static_cast<std::uint8_t>(data - 1);
      }
      if (cfg_.fixed_bits)
        if (const pack::command_type* t = prof.find(d[pos]))
          for (const auto& f : t->fields) {
            if (f.check == wire::rule::reserved) wire::put_bits(d + pos, f.bit, f.width, 0);
            if (f.check == wire::rule::fixed) wire::put_bits(d + pos, f.bit, f.width, f.expect);
          }
      pos += ctrl + data;
      if (pos <= cfg_.max_payload) fits = pos;
    }
    if (n > cfg_.max_payload) n = fits;
    p.payload_size = n;
  }

  // The command starts of a framed payload, and its end, into s: how many commands (s[0..k] are
  // the starts and s[k] the end). Without a profile, the payload is one piece.
  std::size_t command_starts(wire::bytes payload,
                             std::array<std::uint16_t, max_payload / 2 + 2>& s) const noexcept {
    std::size_t k = 0, pos = 0;
    if (cfg_.profile) {
      while (pos < payload.size() && k + 1 < s.size()) {
        std::size_t size = 0;
        const pack::command_type* t = nullptr;
        if (pack::frame_command(*cfg_.profile, payload.subspan(pos), 0, 0, size, t)) break;
        s[k++] = static_cast<std::uint16_t>(pos);
        pos += size;
      }
    } else if (!payload.empty()) {
      s[k++] = 0;
      pos = payload.size();
    }
    s[k] = static_cast<std::uint16_t>(pos);
    return k;
  }

  bool has_data_command(const frame_parts& p) noexcept {
    if (!cfg_.profile) return false;
    const std::size_t k = command_starts(p.payload_bytes(), starts_);
    for (std::size_t i = 0; i < k; ++i)
      if (const auto* t = cfg_.profile->find(p.payload[starts_[i]]);
          t && t->has_data && p.payload[starts_[i] + 1] < 0xFF)
        return true;
    return false;
  }

  // fault::command_length: the first command with data claims one byte more.
  void lengthen_a_command(wire::mutable_bytes payload) const noexcept {
    if (!cfg_.profile) return;
    std::size_t pos = 0;
    while (pos < payload.size()) {
      std::size_t size = 0;
      const pack::command_type* t = nullptr;
      if (pack::frame_command(*cfg_.profile, payload.subspan(pos), 0, 0, size, t)) return;
      if (t->has_data && payload[pos + 1] < 0xFF) {
        ++payload[pos + 1];
        return;
      }
      pos += size;
    }
  }

  static void ipv4_checksum(std::uint8_t* h, std::size_t hl) noexcept {
    using wire::ipv4_header;
    detail::set_field<ipv4_header, &ipv4_header::checksum>(h, 0);
    detail::set_field<ipv4_header, &ipv4_header::checksum>(
        h, wire::ones_sum{}.add(wire::bytes(h, hl)).checksum());
  }

  // The head's lengths and checksums, for a frame whose PDU ends at `end`.
  void put_lengths(const frame_parts& p, std::uint8_t* o, std::size_t end, fault f) noexcept {
    using wire::ipv4_header;
    using wire::ipv6_header;
    using wire::udp_header;
    using npos_t = std::size_t;
    constexpr npos_t npos = frame_parts::npos;
    // fault::length: the innermost length is off by one to eight, the checksums computed after.
    const std::size_t off = f == fault::length ? 1 + (end % 8) : 0;
    const auto wrong = [&](std::size_t v, bool last) {
      return static_cast<std::uint64_t>(last ? (end % 2 ? v + off : v - std::min(v, off)) : v);
    };
    if (p.shim_at != npos) {
      const std::size_t at = p.shim_at + wire::layout<wire::afh1_shim>::size;
      detail::set_field<wire::afh1_shim, &wire::afh1_shim::length>(o + p.shim_at,
                                                                   wrong(end - at, true));
    }
    std::size_t hl = 0;
    if (p.ipv4_at != npos) {
      std::uint8_t* h = o + p.ipv4_at;
      hl = std::size_t{static_cast<std::uint8_t>(
               detail::get_field<ipv4_header, &ipv4_header::ihl>(h))} *
           4;
      detail::set_field<ipv4_header, &ipv4_header::total_length>(
          h, wrong(end - p.ipv4_at, p.udp_at == npos));
      if (hl >= wire::layout<ipv4_header>::size && p.ipv4_at + hl <= p.head_size)
        ipv4_checksum(h, hl);
    }
    if (p.ipv6_at != npos)
      detail::set_field<ipv6_header, &ipv6_header::payload_length>(
          o + p.ipv6_at,
          wrong(end - p.ipv6_at - wire::layout<ipv6_header>::size, p.udp_at == npos));
    if (p.udp_at == npos) return;
    std::uint8_t* u = o + p.udp_at;
    const std::size_t udp_len = end - p.udp_at;
    detail::set_field<udp_header, &udp_header::length>(u, wrong(udp_len, true));
    // The checksum as the sender had it: none kept none over IPv4; over IPv6 there is always one.
    const bool v6 = p.ipv6_at != npos;
    if (!v6 && detail::get_field<udp_header, &udp_header::checksum>(u) == 0) return;
    if (!v6 && p.ipv4_at == npos) return;
    detail::set_field<udp_header, &udp_header::checksum>(u, 0);
    const wire::bytes head(o, p.head_size);
    wire::ones_sum sum =
        v6 ? wire::udp_pseudo_header(wire::decode<ipv6_header>(head, p.ipv6_at).value, udp_len)
           : wire::udp_pseudo_header(wire::decode<ipv4_header>(head, p.ipv4_at).value, udp_len);
    std::uint16_t c = sum.add(wire::bytes(u, udp_len)).checksum();
    if (c == 0) c = 0xFFFF;  // RFC 768: a computed zero is sent as all ones
    detail::set_field<udp_header, &udp_header::checksum>(u, c);
  }

  // ---- one frame -------------------------------------------------------------------------------

  // Mutates data[0, size) on `link` in place; the result is at most cap bytes.
  template <class ByteMutator>
  std::size_t mutate_one(std::uint8_t* data, std::size_t size, std::size_t cap, std::uint32_t link,
                         mutation_rng& r, ByteMutator& bytes) noexcept {
    frame_parts& p = parts_;
    if (!take_apart(wire::bytes(data, size), link, p)) {
      if (size == 0 || r.one_in(2)) {
        const std::size_t n =
            generate_frame(wire::mutable_bytes(out_.data(), out_.size()), link, r);
        if (n && n <= cap) {
          last_ = mutation::generated;
          std::memcpy(data, out_.data(), n);
          return n;
        }
      }
      last_ = mutation::bytes;
      return cap ? bytes(data, std::min(size, cap), cap) : 0;
    }
    last_ = mutate_parts(p, r, bytes);
    if (last_ == mutation::repaired) {
      // The whole frame's bytes went through the byte mutator (in out_): take it apart again.
      const std::size_t raw = raw_size_;
      if (!take_apart(wire::bytes(out_.data(), raw), link, p)) {
        last_ = mutation::bytes;  // no longer a SUE frame: kept as the byte mutator left it
        const std::size_t n = std::min(raw, cap);
        std::memcpy(data, out_.data(), n);
        return n;
      }
    }
    repair_parts(p);
    last_fault_ = cfg_.fault_one_in && r.one_in(cfg_.fault_one_in)
                      ? static_cast<fault>(1 + r.below(4))
                      : fault::none;
    // A fault the frame has no place for: the R-CRC's, or the length's of SUE Lite.
    const bool lengths = p.ipv4_at != frame_parts::npos || p.ipv6_at != frame_parts::npos ||
                         p.udp_at != frame_parts::npos || p.shim_at != frame_parts::npos;
    if (last_fault_ == fault::length && !lengths) last_fault_ = fault::rcrc;
    if (last_fault_ == fault::command_length && !has_data_command(p)) last_fault_ = fault::rcrc;
    if (!p.has_rh && (last_fault_ == fault::rcrc || last_fault_ == fault::rh_bits))
      last_fault_ = lengths ? fault::length : fault::none;
    const std::size_t n =
        put_together(p, wire::mutable_bytes(out_.data(), out_.size()), last_fault_);
    if (n == 0 || n > cap) {
      last_ = mutation::bytes;
      last_fault_ = fault::none;
      return cap ? bytes(data, std::min(size, cap), cap) : 0;
    }
    std::memcpy(data, out_.data(), n);
    return n;
  }

  template <class ByteMutator>
  mutation mutate_parts(frame_parts& p, mutation_rng& r, ByteMutator& bytes) noexcept {
    const std::size_t k = command_starts(p.payload_bytes(), starts_);
    const std::size_t room = std::min(p.payload.size(), cfg_.max_payload + pack::max_command_bytes);
    switch (r.below(26)) {
      case 0:
      case 1:
      case 2: {
        p.payload_size = bytes(p.payload.data(), p.payload_size, std::max(room, p.payload_size));
        return mutation::payload_bytes;
      }
      case 3:
      case 4:
      case 5:
        if (k > 0 && mutate_command(p, starts_, k, r, bytes)) return mutation::command_bytes;
        [[fallthrough]];
      case 6:
      case 7:
        if (insert_command(p, starts_, k, r)) return mutation::command_insert;
        [[fallthrough]];
      case 8:
      case 9:
      case 10:
      case 11:
        rh_field(p, r);
        return mutation::rh_field;
      case 12: {
        std::array<std::uint8_t, 8> h = p.rh;
        const std::size_t n = bytes(h.data(), h.size(), h.size());
        std::memcpy(p.rh.data(), h.data(), n);
        return mutation::rh_bytes;
      }
      case 13: {
        if (p.head_size == 0) break;
        const std::array<std::uint8_t, max_head> was = p.head;
        const std::size_t n = bytes(p.head.data(), p.head_size, p.head_size);
        if (n < p.head_size) std::memcpy(p.head.data() + n, was.data() + n, p.head_size - n);
        return mutation::head_bytes;
      }
      case 14:
      case 15:
        if (k > 0) {
          remove_range(p, starts_[r.below(k)], starts_);
          return mutation::command_remove;
        }
        break;
      case 16:
        if (k > 0 && duplicate_command(p, starts_, k, r)) return mutation::command_duplicate;
        break;
      case 17:
        if (k > 1) {
          swap_commands(p, starts_, k, r);
          return mutation::command_swap;
        }
        break;
      case 18:
        if (resize_command(p, starts_, k, r)) return mutation::command_resize;
        break;
      case 19:
        p.payload_size = starts_[r.below(k + 1)];
        return mutation::payload_cut;
      case 20:
      case 21:
        if (change_encap(p, r)) return mutation::encapsulation;
        break;
      default: {
        const std::size_t n = put_together(p, wire::mutable_bytes(out_.data(), out_.size()));
        if (n == 0) break;
        raw_size_ = bytes(out_.data(), n, std::min(out_.size(), n + 64));
        return mutation::repaired;
      }
    }
    rh_field(p, r);
    return mutation::rh_field;
  }

  void rh_field(frame_parts& p, mutation_rng& r) noexcept {
    const auto& fields = detail::rh_mutable_fields;
    const wire::field_info& f = *fields[r.below(fields.size())];
    const std::uint64_t cur = wire::get_bits(p.rh.data(), f.bit, f.width);
    const std::uint64_t top = wire::max_value(f.width);
    std::uint64_t v = cur;
    switch (r.below(8)) {
      case 0:
        v = cur + 1;
        break;
      case 1:
        v = cur - 1;
        break;
      case 2:
        v = cur + 2 + r.below(63);
        break;
      case 3:
        v = cur - 2 - r.below(63);
        break;
      case 4:
        v = 0;
        break;
      case 5:
        v = top;
        break;
      case 6:
        v = cur + (top >> 1) + 1;  // half the space away: where serial arithmetic turns
        break;
      default:
        v = r();
        break;
    }
    wire::put_bits(p.rh.data(), f.bit, f.width, v & top);
  }

  // Replaces payload[at, at + old_n) with new_n bytes of src (outside the payload); false when
  // it does not fit.
  static bool replace(frame_parts& p, std::size_t at, std::size_t old_n, const std::uint8_t* src,
                      std::size_t new_n) noexcept {
    std::size_t size = p.payload_size;
    if (!detail::splice(p.payload.data(), size, p.payload.size(), at, old_n, src, new_n))
      return false;
    p.payload_size = size;
    return true;
  }

  static void remove_range(frame_parts& p, std::size_t at,
                           const std::array<std::uint16_t, max_payload / 2 + 2>& s) noexcept {
    std::size_t i = 0;
    while (s[i] != at) ++i;
    replace(p, at, s[i + 1] - at, nullptr, 0);
  }

  template <class ByteMutator>
  bool mutate_command(frame_parts& p, const std::array<std::uint16_t, max_payload / 2 + 2>& s,
                      std::size_t k, mutation_rng& r, ByteMutator& bytes) noexcept {
    // The command, or a window of it that fits the scratch piece with room to grow (a payload
    // read without a profile is one piece).
    const std::size_t i = r.below(k);
    std::size_t at = s[i], n = s[i + 1] - s[i];
    if (n > piece_.size() / 2) {
      const std::size_t window = piece_.size() / 2;
      at += r.below(n - window + 1);
      n = window;
    }
    std::memcpy(piece_.data(), p.payload.data() + at, n);
    const std::size_t room = std::min(piece_.size(), p.payload.size() - (p.payload_size - n));
    const std::size_t m = bytes(piece_.data(), n, room);
    return replace(p, at, n, piece_.data(), std::min(m, room));
  }

  bool insert_command(frame_parts& p, const std::array<std::uint16_t, max_payload / 2 + 2>& s,
                      std::size_t k, mutation_rng& r) noexcept {
    if (!cfg_.profile) return false;
    const std::size_t room = std::min(piece_.size(), p.payload.size() - p.payload_size);
    // Mostly short data: a long one leaves little room for more commands.
    const std::size_t max_data = r.one_in(4) ? pack::max_data_bytes : 1 + r.below(32);
    const auto c = pack::random_command(*cfg_.profile, r, room, piece_, max_data);
    if (!c || c.value == 0) return false;
    return replace(p, s[r.below(k + 1)], 0, piece_.data(), c.value);
  }

  bool duplicate_command(frame_parts& p, const std::array<std::uint16_t, max_payload / 2 + 2>& s,
                         std::size_t k, mutation_rng& r) noexcept {
    const std::size_t i = r.below(k);
    const std::size_t n = s[i + 1] - s[i];
    if (n > piece_.size()) return false;
    std::memcpy(piece_.data(), p.payload.data() + s[i], n);
    return replace(p, s[r.below(k + 1)], 0, piece_.data(), n);
  }

  static void swap_commands(frame_parts& p, const std::array<std::uint16_t, max_payload / 2 + 2>& s,
                            std::size_t k, mutation_rng& r) noexcept {
    std::size_t i = r.below(k), j = r.below(k - 1);
    if (j >= i) ++j;
    if (j < i) std::swap(i, j);
    // A M B -> B M A, by two rotations.
    std::uint8_t* d = p.payload.data();
    const std::size_t a = s[i], m = s[i + 1], b = s[j], e = s[j + 1];
    std::rotate(d + a, d + m, d + e);                      // M B A
    std::rotate(d + a, d + a + (b - m), d + a + (e - m));  // B M A
  }

  bool resize_command(frame_parts& p, const std::array<std::uint16_t, max_payload / 2 + 2>& s,
                      std::size_t k, mutation_rng& r) noexcept {
    if (!cfg_.profile || k == 0) return false;
    const std::size_t i = r.below(k);
    const pack::command_type* t = cfg_.profile->find(p.payload[s[i]]);
    if (!t || !t->has_data) return false;
    const std::size_t ctrl = t->control_bytes();
    const std::size_t data = s[i + 1] - s[i] - ctrl;
    const std::size_t want = r.one_in(4) ? pack::max_data_bytes : 1 + r.below(pack::max_data_bytes);
    const std::size_t end = s[i + 1];
    if (want < data) {
      replace(p, end - (data - want), data - want, nullptr, 0);
    } else {
      const std::size_t more = want - data;
      for (std::size_t j = 0; j < more; ++j) piece_[j] = static_cast<std::uint8_t>(r());
      if (!replace(p, end, 0, piece_.data(), more)) return false;
    }
    p.payload[s[i] + 1] = static_cast<std::uint8_t>(want - 1);
    return true;
  }

  // Another encapsulation for the PDU, from frame.hpp's emitters (on the Ethernet and AFH Gen 2
  // link types), with the frame's endpoints and the RH's VC as traffic class.
  bool change_encap(frame_parts& p, mutation_rng& r) noexcept {
    const auto kinds = detail::encaps_for(p.link);
    if (kinds.empty()) return false;
    wire::frame_params fp;
    fp.kind = kinds[r.below(kinds.size())];
    const bool narrow = fp.kind != wire::encap::udp4 && fp.kind != wire::encap::udp6 &&
                        fp.kind != wire::encap::afh2;
    const std::uint32_t mask = fp.kind == wire::encap::udp4 ? wire::xpu_ipv4_max
                               : narrow                     ? 0xFFFFu
                                                            : 0xFFFFFFFFu;
    fp.src_xpu = p.src_xpu & mask;
    fp.dst_xpu = p.dst_xpu & mask;
    const auto vc = detail::get_field<detail::rh, &detail::rh::vc>(p.rh.data());
    fp.tc = fp.kind == wire::encap::afh1 ? 0 : static_cast<std::uint8_t>(vc);
    if (p.udp_at != frame_parts::npos) {
      fp.udp_src_port = static_cast<std::uint16_t>(
          detail::get_field<wire::udp_header, &wire::udp_header::src_port>(p.head.data() +
                                                                           p.udp_at));
      fp.udp_dst_port = static_cast<std::uint16_t>(
          detail::get_field<wire::udp_header, &wire::udp_header::dst_port>(p.head.data() +
                                                                           p.udp_at));
    } else if (cfg_.receive.udp_port_count) {
      fp.udp_src_port = fp.udp_dst_port = cfg_.receive.udp_ports[0];
    }
    fp.pad = cfg_.pad;
    const wire::mutable_bytes out(out_.data(), out_.size());
    const auto n =
        fp.kind == wire::encap::lite
            ? wire::emit_frame(fp, p.payload_bytes(), out)
            : wire::emit_sue_frame(fp, wire::decode<wire::reliability_header>(p.rh).value,
                                   p.payload_bytes(), out);
    if (!n) return false;
    const bool fcs = cfg_.fcs;
    cfg_.fcs = false;  // the emitted frame has none yet
    frame_parts& fresh = other_;
    const bool ok = take_apart(wire::bytes(out_.data(), n.value), p.link, fresh);
    cfg_.fcs = fcs;
    if (!ok) return false;
    if (!fresh.has_rh) fresh.rh = p.rh;  // kept for a later change back
    p.kind = fresh.kind;
    p.head = fresh.head;
    p.head_size = fresh.head_size;
    p.ipv4_at = fresh.ipv4_at;
    p.ipv6_at = fresh.ipv6_at;
    p.udp_at = fresh.udp_at;
    p.shim_at = fresh.shim_at;
    p.afh2_at = fresh.afh2_at;
    p.eth = fresh.eth;
    p.has_rh = fresh.has_rh;
    p.payload_size = std::min(p.payload_size, fresh.payload_size);
    return true;
  }

  // A new SUE frame on `link`: an encapsulation the emitters write, endpoints among the first
  // eight XPUs, an RH, a few commands. Its size, or 0 when no emitter writes frames of `link`.
  std::size_t generate_frame(wire::mutable_bytes out, std::uint32_t link,
                             mutation_rng& r) noexcept {
    const bool raw = link == wire::link_raw || link == wire::link_ipv4 || link == wire::link_ipv6;
    const auto kinds = detail::encaps_for(link);
    if (kinds.empty() && !raw) return 0;
    wire::frame_params fp;
    fp.kind = raw ? (link == wire::link_ipv6 || (link == wire::link_raw && r.one_in(2))
                         ? wire::encap::udp6
                         : wire::encap::udp4)
                  : kinds[r.below(kinds.size())];
    fp.src_xpu = static_cast<std::uint32_t>(r.below(8));
    fp.dst_xpu = static_cast<std::uint32_t>(r.below(8));
    if (cfg_.receive.udp_port_count) fp.udp_src_port = fp.udp_dst_port = cfg_.receive.udp_ports[0];
    wire::reliability_header rh;
    rh.op = static_cast<std::uint8_t>(r.below(3));
    rh.xpuid = static_cast<std::uint16_t>(fp.src_xpu);
    rh.npsn = static_cast<std::uint16_t>(r.one_in(2) ? r.below(8) : r());
    rh.apsn = static_cast<std::uint16_t>(r.one_in(2) ? r.below(8) : r());
    rh.vc = static_cast<std::uint8_t>(r.below(4));
    fp.tc = fp.kind == wire::encap::afh1 ? 0 : rh.vc;
    frame_parts& p = other_;
    p.payload_size = 0;
    const std::size_t commands = r.below(5);
    for (std::size_t i = 0; i < commands && cfg_.profile; ++i) {
      const std::size_t room = 512 - p.payload_size;
      const auto c = pack::random_command(
          *cfg_.profile, r, room, wire::mutable_bytes(p.payload.data() + p.payload_size, room),
          1 + r.below(64));
      if (!c) break;
      p.payload_size += c.value;
    }
    if (fp.kind == wire::encap::lite && p.payload_size && (p.payload[0] & 1u))
      fp.kind = wire::encap::afh2c;
    const auto n = fp.kind == wire::encap::lite
                       ? wire::emit_frame(fp, p.payload_bytes(), out)
                       : wire::emit_sue_frame(fp, rh, p.payload_bytes(), out);
    if (!n) return 0;
    std::size_t size = n.value;
    if (raw) {  // the same datagram without its Ethernet header
      constexpr std::size_t eth = wire::layout<wire::ethernet_header>::size;
      const std::size_t datagram = size - eth;
      std::memmove(out.data(), out.data() + eth, datagram);
      size = datagram;
      const wire::received_frame f = wire::read_frame(out.first(size), link);
      if (f.ipv4) size = f.ipv4->value.total_length;  // without the Ethernet padding
      if (f.ipv6) size = wire::layout<wire::ipv6_header>::size + f.ipv6->value.payload_length;
    }
    if (cfg_.fcs && detail::padded_link(link)) size = wire::put_fcs(out, size);
    return size;
  }

  // ---- captures ------------------------------------------------------------------------------

  // A pcap file (little-endian, microseconds) of one to four new frames on config().link, or on
  // Ethernet when no emitter writes that link type.
  std::size_t generate_capture(std::uint8_t* data, std::size_t max_size, mutation_rng& r) noexcept {
    namespace f = pcap::pcap_file;
    if (max_size < f::header_size) return 0;
    const std::uint32_t link =
        detail::encaps_for(cfg_.link).empty() ? wire::link_ethernet : cfg_.link;
    std::memset(data, 0, f::header_size);
    pcap::store32(data, f::magic, pcap::byte_order::little, f::variants[0].magic);
    boost::endian::store_little_u16(data + f::major_version.offset, 2);
    boost::endian::store_little_u16(data + f::minor_version.offset, 4);
    pcap::store32(data, f::snaplen, pcap::byte_order::little, pcap::max_snaplen);
    pcap::store32(data, f::link_type, pcap::byte_order::little, link);
    std::size_t size = f::header_size;
    if (!detail::index_capture(data, size, cap_)) return 0;
    const std::size_t frames = 1 + r.below(4);
    for (std::size_t i = 0; i < frames && append_generated(data, size, max_size, r); ++i)
      detail::index_capture(data, size, cap_);
    last_ = mutation::generated;
    return size;
  }

  // Appends a new frame as a record; false when it does not fit.
  bool append_generated(std::uint8_t* data, std::size_t& size, std::size_t max_size,
                        mutation_rng& r) noexcept {
    const std::size_t n = generate_frame(
        wire::mutable_bytes(rec_.data() + cap_.record_size, max_frame), cap_.link, r);
    const std::uint64_t ns =
        cap_.count ? cap_.time_ns(data, cap_.count - 1) + 1000 : 1'700'000'000'000'000'000ull;
    if (n == 0) return false;
    cap_.put_header(rec_.data(), ns, n, n);
    if (!detail::splice(data, size, max_size, cap_.at[cap_.count], 0, rec_.data(),
                        cap_.record_size + n))
      return false;
    last_ = mutation::generated;
    return true;
  }

  void set_time(std::uint8_t* data, std::size_t i, std::uint64_t ns) const noexcept {
    cap_.put_header(data + cap_.at[i], ns, cap_.caplen(data, i), cap_.len(data, i));
  }

  // A small step (a few microseconds), one past the retransmission timeout or the reassembly
  // age, or back in time.
  static std::int64_t time_step(mutation_rng& r) noexcept {
    switch (r.below(4)) {
      case 0:
        return static_cast<std::int64_t>(1 + r.below(100'000));
      case 1:
        return static_cast<std::int64_t>(1'000'000 + r.below(10'000'000'000ull));
      case 2:
        return -static_cast<std::int64_t>(1 + r.below(1'000'000'000));
      default:
        return static_cast<std::int64_t>(1000 + r.below(1'000'000));
    }
  }
  static std::uint64_t add_time(std::uint64_t ns, std::int64_t step) noexcept {
    if (step < 0 && static_cast<std::uint64_t>(-step) > ns) return 0;
    const std::uint64_t t = ns + static_cast<std::uint64_t>(step);
    return std::min<std::uint64_t>(t, 0xFFFFFFFFull * 1'000'000'000u);
  }

  void move_in_time(std::uint8_t* data, std::size_t i, mutation_rng& r) noexcept {
    last_ = mutation::record_time;
    set_time(data, i, add_time(cap_.time_ns(data, i), time_step(r)));
  }

  template <class ByteMutator>
  std::size_t mutate_record(std::uint8_t* data, std::size_t size, std::size_t max_size,
                            std::size_t i, mutation_rng& r, ByteMutator& bytes) noexcept {
    const std::uint32_t caplen = cap_.caplen(data, i);
    const std::size_t at = cap_.at[i] + cap_.record_size;
    if (caplen > max_frame) {
      last_ = mutation::bytes;
      return bytes(data, size, max_size);
    }
    const std::size_t most = std::min(max_frame, caplen + (max_size > size ? max_size - size : 0));
    std::memcpy(rec_.data(), data + at, caplen);
    const std::size_t n = mutate_one(rec_.data(), caplen, most, cap_.link, r, bytes);
    const std::uint64_t ns = cap_.time_ns(data, i);
    if (!detail::splice(data, size, max_size, at, caplen, rec_.data(), n)) return size;
    cap_.put_header(data + cap_.at[i], ns, n, n);
    return size;
  }

  bool duplicate_record(std::uint8_t* data, std::size_t& size, std::size_t max_size, std::size_t i,
                        mutation_rng& r) noexcept {
    const std::size_t n = cap_.at[i + 1] - cap_.at[i];
    if (n > rec_.size()) return false;
    std::memcpy(rec_.data(), data + cap_.at[i], n);
    const std::size_t j = i + 1 + r.below(cap_.count - i);
    cap_.put_header(rec_.data(), add_time(cap_.time_ns(data, i), time_step(r)),
                    cap_.caplen(data, i), cap_.len(data, i));
    if (!detail::splice(data, size, max_size, cap_.at[j], 0, rec_.data(), n)) return false;
    last_ = mutation::record_duplicate;
    return true;
  }

  // After record i, its receiver's answer: addresses and ports swapped, the RH an ACK (or a
  // NACK) of its PSN from the XPU it was sent to, mostly without commands.
  bool reply_record(std::uint8_t* data, std::size_t& size, std::size_t max_size, std::size_t i,
                    mutation_rng& r) noexcept {
    const std::uint32_t caplen = cap_.caplen(data, i);
    if (caplen != cap_.len(data, i)) return false;
    frame_parts& p = parts_;
    if (!take_apart(wire::bytes(data + cap_.at[i] + cap_.record_size, caplen), cap_.link, p) ||
        !p.has_rh)
      return false;
    std::uint8_t* h = p.head.data();
    if (p.eth)
      detail::swap_fields<wire::ethernet_header, &wire::ethernet_header::dst,
                          &wire::ethernet_header::src>(h);
    if (p.ipv4_at != frame_parts::npos)
      detail::swap_fields<wire::ipv4_header, &wire::ipv4_header::src, &wire::ipv4_header::dst>(
          h + p.ipv4_at);
    if (p.ipv6_at != frame_parts::npos)
      detail::swap_fields<wire::ipv6_header, &wire::ipv6_header::src, &wire::ipv6_header::dst>(
          h + p.ipv6_at);
    if (p.udp_at != frame_parts::npos)
      detail::swap_fields<wire::udp_header, &wire::udp_header::src_port,
                          &wire::udp_header::dst_port>(h + p.udp_at);
    if (p.shim_at != frame_parts::npos)
      detail::swap_fields<wire::afh1_shim, &wire::afh1_shim::src_xpu, &wire::afh1_shim::dst_xpu>(
          h + p.shim_at);
    if (p.afh2_at != frame_parts::npos && p.kind == wire::encap::afh2)
      detail::swap_fields<wire::afh2_normal, &wire::afh2_normal::src_xpu,
                          &wire::afh2_normal::dst_xpu>(h + p.afh2_at);
    if (p.afh2_at != frame_parts::npos && p.kind == wire::encap::afh2c)
      detail::swap_fields<wire::afh2_compressed, &wire::afh2_compressed::src_xpu,
                          &wire::afh2_compressed::dst_xpu>(h + p.afh2_at);
    std::uint8_t* rh = p.rh.data();
    const std::uint64_t psn = detail::get_field<detail::rh, &detail::rh::npsn>(rh);
    const bool nack = r.one_in(4);
    detail::set_field<detail::rh, &detail::rh::op>(
        rh, static_cast<std::uint64_t>(nack ? wire::rh_op::nack : wire::rh_op::ack));
    detail::set_field<detail::rh, &detail::rh::apsn>(rh, r.one_in(4) ? psn + 1 - r.below(3) : psn);
    detail::set_field<detail::rh, &detail::rh::xpuid>(rh, p.dst_xpu);
    detail::set_field<detail::rh, &detail::rh::npsn>(rh, r.one_in(2) ? r() : psn);
    if (!r.one_in(4)) p.payload_size = 0;
    repair_parts(p);
    const std::size_t n =
        put_together(p, wire::mutable_bytes(rec_.data() + cap_.record_size, max_frame));
    if (n == 0) return false;
    cap_.put_header(rec_.data(), add_time(cap_.time_ns(data, i), 1000 + r.below(50'000)), n, n);
    if (!detail::splice(data, size, max_size, cap_.at[i + 1], 0, rec_.data(), cap_.record_size + n))
      return false;
    last_ = mutation::record_reply;
    return true;
  }

  // A snapshot length: the record keeps fewer bytes than the frame had.
  bool cut_record(std::uint8_t* data, std::size_t& size, std::size_t i, mutation_rng& r) noexcept {
    const std::uint32_t caplen = cap_.caplen(data, i);
    if (caplen == 0) return false;
    const std::uint32_t keep = static_cast<std::uint32_t>(r.below(caplen));
    const std::uint64_t ns = cap_.time_ns(data, i);
    const std::uint32_t len = std::max(cap_.len(data, i), caplen);
    detail::splice(data, size, size, cap_.at[i] + cap_.record_size + keep, caplen - keep, nullptr,
                   0);
    cap_.put_header(data + cap_.at[i], ns, keep, len);
    last_ = mutation::record_cut;
    return true;
  }

  // Record i's UDP datagram (IPv4, or IPv6 with UDP right after its header) as two to four IP
  // fragments, in order, reversed or with two swapped, one of them sometimes twice.
  bool fragment_record(std::uint8_t* data, std::size_t& size, std::size_t max_size, std::size_t i,
                       mutation_rng& r) noexcept {
    using wire::ipv4_header;
    using wire::ipv6_header;
    const std::uint32_t caplen = cap_.caplen(data, i);
    if (caplen != cap_.len(data, i) || caplen > max_frame) return false;
    const wire::bytes frame(data + cap_.at[i] + cap_.record_size, caplen);
    wire::receive_options o = read_options();
    const wire::received_frame f = wire::read_frame(frame, cap_.link, o);
    if (f.fragment || !f.udp || (!f.ipv4 && !f.ipv6)) return false;
    const bool v6 = !f.ipv4;
    if (v6 && f.ipv6->value.next_header != wire::ip_proto_udp) return false;
    const std::size_t ip_at = v6 ? f.ipv6->offset : f.ipv4->offset;
    const std::size_t hl =
        v6 ? wire::layout<ipv6_header>::size : std::size_t{f.ipv4->value.ihl} * 4;
    const std::size_t dgram_end =
        std::min<std::size_t>(f.length, v6 ? ip_at + hl + f.ipv6->value.payload_length
                                           : ip_at + f.ipv4->value.total_length);
    if (dgram_end <= ip_at + hl + 8) return false;
    const wire::bytes body = frame.subspan(ip_at + hl, dgram_end - ip_at - hl);
    const std::size_t pieces = 2 + r.below(3);
    const std::size_t each = std::max<std::size_t>(8, (body.size() / pieces + 7) / 8 * 8);
    std::array<std::size_t, 5> order{};
    std::size_t count = 0;
    for (std::size_t start = 0; start < body.size() && count < 4; start += each)
      order[count++] = start;
    if (count < 2) return false;
    switch (r.below(3)) {
      case 0:
        std::reverse(order.begin(), order.begin() + count);
        break;
      case 1:
        std::swap(order[0], order[1 + r.below(count - 1)]);
        break;
      default:
        break;
    }
    if (r.one_in(4)) order[count] = order[r.below(count)], ++count;
    const std::uint32_t id = static_cast<std::uint32_t>(r());
    std::uint64_t ns = cap_.time_ns(data, i);
    std::size_t written = 0;
    const std::size_t frag_hl = hl + (v6 ? wire::layout<wire::ipv6_fragment_header>::size : 0);
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t start = order[k];
      const std::size_t n = std::min(each, body.size() - start);
      const bool more = start + n < body.size();
      const std::size_t flen = ip_at + frag_hl + n;
      const std::size_t padded =
          detail::padded_link(cap_.link) ? std::max(flen, wire::ethernet_min_frame) : flen;
      if (written + cap_.record_size + padded > frag_.size()) return false;
      std::uint8_t* rec = frag_.data() + written;
      std::uint8_t* fr = rec + cap_.record_size;
      std::memcpy(fr, frame.data(), ip_at + hl);
      std::uint8_t* ip = fr + ip_at;
      if (v6) {
        detail::set_field<ipv6_header, &ipv6_header::next_header>(ip, wire::ip_proto_ipv6_fragment);
        detail::set_field<ipv6_header, &ipv6_header::payload_length>(
            ip, wire::layout<wire::ipv6_fragment_header>::size + n);
        wire::ipv6_fragment_header fh{};
        fh.next_header = wire::ip_proto_udp;
        fh.offset = static_cast<std::uint16_t>(start / 8);
        fh.more = more ? 1 : 0;
        fh.id = id;
        (void)wire::encode(fh, wire::mutable_bytes(ip + hl, wire::layout<decltype(fh)>::size));
      } else {
        detail::set_field<ipv4_header, &ipv4_header::total_length>(ip, hl + n);
        detail::set_field<ipv4_header, &ipv4_header::id>(ip, id);
        detail::set_field<ipv4_header, &ipv4_header::flag_df>(ip, 0);
        detail::set_field<ipv4_header, &ipv4_header::flag_mf>(ip, more ? 1 : 0);
        detail::set_field<ipv4_header, &ipv4_header::frag_offset>(ip, start / 8);
        ipv4_checksum(ip, hl);
      }
      std::memcpy(fr + ip_at + frag_hl, body.data() + start, n);
      std::memset(fr + flen, 0, padded - flen);
      cap_.put_header(rec, ns, padded, padded);
      ns += 1 + r.below(20'000);
      written += cap_.record_size + padded;
    }
    if (!detail::splice(data, size, max_size, cap_.at[i], cap_.at[i + 1] - cap_.at[i], frag_.data(),
                        written))
      return false;
    last_ = mutation::record_fragment;
    return true;
  }

  mutator_config cfg_;
  mutation last_ = mutation::none;
  fault last_fault_ = fault::none;
  frame_parts parts_;
  frame_parts other_;
  detail::capture_index cap_;
  std::array<std::uint16_t, max_payload / 2 + 2> starts_{};
  std::array<std::uint8_t, max_frame> work_{};  // take_apart's copy
  std::array<std::uint8_t, max_frame + 64> out_{};
  std::array<std::uint8_t, max_frame + 64> rec_{};  // a record: header and frame
  std::array<std::uint8_t, 2 * max_frame> frag_{};
  std::array<std::uint8_t, 2 * pack::max_command_bytes> piece_{};
  std::size_t raw_size_ = 0;
};

}  // namespace scaleup::fuzz

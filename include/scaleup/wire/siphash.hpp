// SipHash (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012) over 64-bit words:
// the keyed hash of every table whose keys come from the network (UDP flows, connections). A
// fixed mix of attacker-chosen words can be inverted: with a linear one, for any first word a
// second lands on any chosen hash, and a capture of such keys makes every lookup walk one chain.
// SipHash is a pseudorandom function of a 128-bit secret key: without the key nobody can choose
// inputs that collide more often than at random. Tables use SipHash-1-3 (one compression round
// per word, three to finish), as Rust's HashMap and Python's dict do; the reference's 2-4 is
// here too, for its test vectors.
//
// Words, not bytes: a key is hashed as the 64-bit words its fields make, each word one block of
// the message, the last block its length in bytes (8 per word) in the top byte, as SipHash does
// for a message of 8 x n bytes read as little-endian words. No heap, no clock, no entropy:
// the key comes from the caller (dissect/hash_key.hpp draws one per process).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <concepts>
#include <cstdint>

namespace scaleup::wire {

// The secret key, as the reference's two little-endian key words k0 (bytes 0-7) and k1 (8-15).
struct hash_key {
  std::uint64_t k0 = 0;
  std::uint64_t k1 = 0;
  friend constexpr bool operator==(const hash_key&, const hash_key&) = default;
};

template <int CompressionRounds, int FinalRounds>
class basic_siphash {
 public:
  constexpr explicit basic_siphash(const hash_key& k) noexcept
      : v0_(k.k0 ^ 0x736f6d6570736575ull),
        v1_(k.k1 ^ 0x646f72616e646f6dull),
        v2_(k.k0 ^ 0x6c7967656e657261ull),
        v3_(k.k1 ^ 0x7465646279746573ull) {}

  constexpr basic_siphash& add(std::uint64_t m) noexcept {
    v3_ ^= m;
    for (int i = 0; i < CompressionRounds; ++i) round();
    v0_ ^= m;
    ++words_;
    return *this;
  }

  constexpr std::uint64_t finish() const noexcept {
    basic_siphash s = *this;
    const std::uint64_t b = std::uint64_t{static_cast<std::uint8_t>(8 * words_)} << 56;
    s.v3_ ^= b;
    for (int i = 0; i < CompressionRounds; ++i) s.round();
    s.v0_ ^= b;
    s.v2_ ^= 0xff;
    for (int i = 0; i < FinalRounds; ++i) s.round();
    return s.v0_ ^ s.v1_ ^ s.v2_ ^ s.v3_;
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept {
    return x << b | x >> (64 - b);
  }
  constexpr void round() noexcept {
    v0_ += v1_;
    v1_ = rotl(v1_, 13);
    v1_ ^= v0_;
    v0_ = rotl(v0_, 32);
    v2_ += v3_;
    v3_ = rotl(v3_, 16);
    v3_ ^= v2_;
    v0_ += v3_;
    v3_ = rotl(v3_, 21);
    v3_ ^= v0_;
    v2_ += v1_;
    v1_ = rotl(v1_, 17);
    v1_ ^= v2_;
    v2_ = rotl(v2_, 32);
  }

  std::uint64_t v0_, v1_, v2_, v3_;
  std::uint64_t words_ = 0;
};

using siphash13 = basic_siphash<1, 3>;
using siphash24 = basic_siphash<2, 4>;

// SipHash-1-3 of a few words under `k`: what a table's hash of a key is.
template <std::same_as<std::uint64_t>... Words>
constexpr std::uint64_t keyed_hash(const hash_key& k, Words... w) noexcept {
  siphash13 h(k);
  (h.add(w), ...);
  return h.finish();
}

}  // namespace scaleup::wire

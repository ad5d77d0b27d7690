// Declarative field tables: the single source of truth for every fixed-size header.
//
// A header is a plain value struct T plus a specialisation of layout<T> holding
//   name, title, size (bytes) and `fields`, a std::tuple of field<T, M> entries.
// Each entry binds one member of T to its place on the wire (bit offset from the first bit of
// the header, width) and to what a person or a tool needs to know about it (filter name,
// value names, description, seed section). From that one table come: the zero-copy view's
// accessors, encode, decode with validation, the dissection tree (and so text, JSON and the
// Wireshark fields) and the docs diagrams. No bit position is written anywhere else.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::wire {

// How a value is shown; the wire encoding is always big-endian bits.
enum class kind : std::uint8_t {
  uint,   // unsigned decimal
  hex,    // unsigned, shown in hex (checksums, Ethertypes)
  flag,   // one bit
  mac,    // 48-bit MAC address
  ipv4,   // 32-bit IPv4 address
  ipv6,   // 128-bit IPv6 address (a std::array<uint8_t, 16> member)
  label,  // a code shown by its value name only (computed statuses such as sue.rcrc.status)
};

// What decode checks: `fixed` fields must hold `expect` (error otherwise); `reserved` fields
// should be zero (a warning otherwise: decisions.md, "reserved fields ... reported, not
// rejected").
enum class rule : std::uint8_t { any, reserved, fixed };

struct value_name {
  std::uint64_t value;
  std::string_view name;
};

// A display-filter name as Wireshark takes a field's: letters, digits, '.', '_' and '-' (its
// proto.c refuses a field whose abbreviation has another character). A filter name is also the
// field's JSON key, so it never needs an escape; every table's are checked by the tests, a
// profile's when it is checked (pack::profile::check).
constexpr bool is_filter_name(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return false;
  return true;
}

// A 64-bit key of a filter name (FNV-1a): equal names have equal keys, so a printer tells
// repeated names apart by keys, comparing names only when two keys are equal. The printer looks
// at the top bits first, where FNV-1a hardly sees a name's last characters (ip.flags.df and
// ip.flags.mf shared their top ten bits, and every frame paid for a walk of the names before
// them): a multiply by 2^64 / phi spreads every bit upward.
constexpr std::uint64_t filter_key(std::string_view s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h * 0x9E3779B97F4A7C15ull;
}

struct field_info {
  std::string_view name;    // as the seed names it
  std::string_view filter;  // display-filter name (is_filter_name), also the JSON key
  std::uint16_t bit = 0;    // offset from the first bit of the header
  std::uint16_t width = 0;  // in bits
  kind type = kind::uint;
  std::span<const value_name> names{};
  std::string_view description{};
  std::string_view seed{};
  rule check = rule::any;
  std::uint64_t expect = 0;
  // filter_key(filter), computed where the field is made (at compile time for a table's): the
  // JSON printer looks for repeated names among a frame's fields by it.
  std::uint64_t key = filter_key(filter);

  constexpr std::string_view name_of(std::uint64_t v) const noexcept {
    for (const auto& n : names)
      if (n.value == v) return n.name;
    return {};
  }
};

template <class S, class M>
struct field : field_info {
  M S::*member;
};

template <class S, class M>
constexpr field<S, M> member(M S::*m, field_info info) noexcept {
  return field<S, M>{info, m};
}

template <class T>
struct layout;  // specialised next to each header

template <class M>
inline constexpr bool is_byte_array_v = false;
template <std::size_t N>
inline constexpr bool is_byte_array_v<std::array<std::uint8_t, N>> = true;

// ---- compile-time views of a table -------------------------------------------------------

template <class T>
inline constexpr std::size_t field_count = std::tuple_size_v<decltype(layout<T>::fields)>;

// The table without member pointers: what printing, docs and the Wireshark plugin iterate.
template <class T>
inline constexpr auto field_infos = std::apply(
    [](const auto&... f) { return std::array<field_info, sizeof...(f)>{f...}; }, layout<T>::fields);

// True when the fields, in table order, cover the header bit after bit: no gap, no overlap,
// nothing past the end; and each member type can hold its field.
template <class T>
constexpr bool tiles() {
  std::size_t next = 0;
  bool ok = true;
  std::apply(
      [&](const auto&... f) {
        ((
             ok = ok && f.bit == next && f.width > 0 &&
                  [&] {
                    using M = std::remove_cvref_t<decltype(std::declval<T>().*(f.member))>;
                    if constexpr (is_byte_array_v<M>)
                      return f.bit % 8 == 0 && f.width == 8 * std::tuple_size_v<M>;
                    else
                      return f.width <= 8 * sizeof(M);
                  }(),
             next += f.width),
         ...);
      },
      layout<T>::fields);
  return ok && next == layout<T>::size * 8;
}

// Index of the table entry bound to Member.
template <class T, auto Member>
constexpr std::size_t index_of() {
  std::size_t idx = field_count<T>;
  std::size_t i = 0;
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if constexpr (std::is_same_v<decltype(f.member), decltype(Member)>)
             if (f.member == Member) idx = i;
           ++i;
         }()),
         ...);
      },
      layout<T>::fields);
  return idx;
}

template <class T, auto Member>
constexpr const field_info& info_of() {
  constexpr std::size_t i = index_of<T, Member>();
  static_assert(i < field_count<T>, "member is not in the header's field table");
  return std::get<i>(layout<T>::fields);
}

// ---- one field ---------------------------------------------------------------------------

template <class M>
constexpr M read_field(const std::uint8_t* p, const field_info& f) noexcept {
  if constexpr (is_byte_array_v<M>) {
    M out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[f.bit / 8 + i];
    return out;
  } else {
    return static_cast<M>(get_bits(p, f.bit, f.width));
  }
}

template <class M>
constexpr void write_field(std::uint8_t* p, const field_info& f, const M& v) noexcept {
  if constexpr (is_byte_array_v<M>) {
    for (std::size_t i = 0; i < v.size(); ++i) p[f.bit / 8 + i] = v[i];
  } else {
    put_bits(p, f.bit, f.width, static_cast<std::uint64_t>(v));
  }
}

template <class M>
constexpr std::uint64_t as_u64(const M& v) noexcept {
  if constexpr (is_byte_array_v<M>)
    return 0;
  else
    return static_cast<std::uint64_t>(v);
}

// The check that encode and decode share: a value the field's rule forbids.
constexpr error check_rule(std::string_view layer, std::size_t base, const field_info& f,
                           std::uint64_t v) noexcept {
  if (f.check == rule::fixed && v != f.expect)
    return error{errc::bad_value,
                 layer,
                 static_cast<std::uint32_t>(base + f.bit / 8),
                 0,
                 0,
                 "field must hold its fixed value",
                 f.filter,
                 v,
                 severity::error};
  if (f.check == rule::reserved && v != 0)
    return error{errc::reserved_nonzero,
                 layer,
                 static_cast<std::uint32_t>(base + f.bit / 8),
                 0,
                 0,
                 "reserved field is not zero",
                 f.filter,
                 v,
                 severity::warning};
  return {};
}

// ---- the word plan: the table compiled into big-endian words ----------------------------
//
// From the table, at compile time: the header's bytes outside byte-array fields are cut into
// big-endian words of 8, 4, 2 or 1 bytes ("chunks"), and each field into the pieces that fall in
// each word (a field crossing a word boundary has two). Encode composes each word from the
// field values with constant shifts and stores it once; decode loads each word once and takes
// the fields out with constant shifts and masks. Nothing here states a bit position: every
// number comes from the table.
namespace detail {

struct chunk {
  std::uint16_t offset = 0;  // byte offset in the header
  std::uint8_t bytes = 0;    // 1, 2, 4 or 8
};

struct piece {
  std::uint16_t field = 0;       // index into the table
  std::uint16_t chunk = 0;       // index into the chunks
  std::uint8_t chunk_shift = 0;  // of the piece's lowest bit, from the word's lowest bit
  std::uint8_t width = 0;        // bits
  std::uint8_t value_shift = 0;  // of the piece's lowest bit, from the value's lowest bit
};

template <class T>
inline constexpr auto field_is_array = std::apply(
    [](const auto&... f) {
      return std::array<bool, sizeof...(f)>{
          is_byte_array_v<std::remove_cvref_t<decltype(std::declval<const T&>().*(f.member))>>...};
    },
    layout<T>::fields);

// Whether the word plan applies: fields in bit order, none overlapping another or running past
// the header, byte arrays on whole bytes, other fields 1..64 bits. Any other table (only broken
// ones, which tiles() rejects) takes the bit-by-bit path.
template <class T>
constexpr bool plannable() {
  constexpr auto& fs = field_infos<T>;
  std::size_t next = 0;
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const auto& f = fs[i];
    if (f.bit < next || f.width == 0 || f.bit + f.width > layout<T>::size * 8) return false;
    if (field_is_array<T>[i] ? (f.bit % 8 != 0 || f.width % 8 != 0) : f.width > 64) return false;
    next = f.bit + f.width;
  }
  return true;
}

template <class T>
struct plan {
  static constexpr std::size_t n_fields = field_count<T>;
  static constexpr std::size_t size = layout<T>::size;

  template <class E, std::size_t N>
  struct list {
    std::array<E, N> at{};
    std::size_t count = 0;
  };

  // Runs of bytes outside the byte arrays, cut greedily into 8, 4, 2 and 1-byte words.
  static constexpr auto chunks = [] {
    std::array<bool, size> in_array{};
    for (std::size_t i = 0; i < n_fields; ++i)
      if (field_is_array<T>[i])
        for (std::size_t b = field_infos<T>[i].bit / 8u;
             b < (field_infos<T>[i].bit + field_infos<T>[i].width) / 8u; ++b)
          in_array[b] = true;
    list<chunk, size> out{};
    std::size_t b = 0;
    while (b < size) {
      if (in_array[b]) {
        ++b;
        continue;
      }
      std::size_t run = 0;
      while (b + run < size && !in_array[b + run]) ++run;
      for (std::size_t w = 8; w > 0; w /= 2)
        while (run >= w) {
          out.at[out.count++] = chunk{static_cast<std::uint16_t>(b), static_cast<std::uint8_t>(w)};
          b += w;
          run -= w;
        }
    }
    return out;
  }();

  // Field by field, the parts of each field in each word. Fields are in bit order (plannable),
  // so the list is in chunk order too: each chunk's pieces, like each field's, are a run.
  static constexpr auto pieces = [] {
    list<piece, n_fields + size> out{};
    for (std::size_t i = 0; i < n_fields; ++i) {
      if (field_is_array<T>[i]) continue;
      const std::size_t fb = field_infos<T>[i].bit, fe = fb + field_infos<T>[i].width;
      for (std::size_t c = 0; c < chunks.count; ++c) {
        const std::size_t cb = chunks.at[c].offset * 8u, ce = cb + chunks.at[c].bytes * 8u;
        const std::size_t s = fb > cb ? fb : cb, e = fe < ce ? fe : ce;
        if (s >= e) continue;
        out.at[out.count++] =
            piece{static_cast<std::uint16_t>(i), static_cast<std::uint16_t>(c),
                  static_cast<std::uint8_t>(ce - e), static_cast<std::uint8_t>(e - s),
                  static_cast<std::uint8_t>(fe - e)};
      }
    }
    return out;
  }();

  // Per field: the first of its pieces and how many (pieces are in field order).
  static constexpr auto by_field = [] {
    std::array<std::pair<std::size_t, std::size_t>, n_fields> r{};
    for (std::size_t p = pieces.count; p-- > 0;) {
      r[pieces.at[p].field].first = p;
      ++r[pieces.at[p].field].second;
    }
    return r;
  }();

  // Whether a field has a fixed value: the one check decode makes (and a hard error if not).
  static constexpr bool has_fixed = [] {
    for (const auto& f : field_infos<T>)
      if (f.check == rule::fixed) return true;
    return false;
  }();
};

template <std::size_t Bytes>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t load_word(const std::uint8_t* p) noexcept {
  if constexpr (Bytes == 8)
    return load_be64(p);
  else if constexpr (Bytes == 4)
    return load_be32(p);
  else if constexpr (Bytes == 2)
    return load_be16(p);
  else
    return p[0];
}

template <std::size_t Bytes>
SCALEUP_ALWAYS_INLINE constexpr void store_word(std::uint8_t* p, std::uint64_t v) noexcept {
  if constexpr (Bytes == 8)
    store_be64(p, v);
  else if constexpr (Bytes == 4)
    store_be32(p, static_cast<std::uint32_t>(v));
  else if constexpr (Bytes == 2)
    store_be16(p, static_cast<std::uint16_t>(v));
  else
    p[0] = static_cast<std::uint8_t>(v);
}

// Field I's member pointer and type, as constants.
template <class T, std::size_t I>
inline constexpr auto member_ptr = std::get<I>(layout<T>::fields).member;
template <class T, std::size_t I>
using member_t = std::remove_cvref_t<decltype(std::declval<const T&>().*member_ptr<T, I>)>;

// The code below is folds over the plan's constants, no loops: once inlined, each piece is a
// shift and a mask. It is always inlined, so that it does not depend on how hot the compiler
// guesses the caller to be (the error paths are kept out of line instead).

// Piece P's bits, taken from its chunk's word and moved to their place in the field's value.
template <class T, std::size_t P>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t piece_from(std::uint64_t word) noexcept {
  constexpr piece pc = plan<T>::pieces.at[P];
  constexpr bool top = pc.chunk_shift + pc.width >= 8u * plan<T>::chunks.at[pc.chunk].bytes;
  const std::uint64_t x = word >> pc.chunk_shift;
  return (top ? x : x & max_value(pc.width)) << pc.value_shift;
}

// Piece P's bits, taken from the field's value (which fits the field), at the bottom of the
// result.
template <class T, std::size_t P>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t piece_bits(std::uint64_t value) noexcept {
  constexpr piece pc = plan<T>::pieces.at[P];
  constexpr bool top = pc.value_shift + pc.width >= field_infos<T>[pc.field].width;
  const std::uint64_t x = value >> pc.value_shift;
  return top ? x : x & max_value(pc.width);
}

// Field I from the loaded words.
template <class T, std::size_t I, std::size_t... K>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t field_from_words(const std::uint64_t* words,
                                                               std::index_sequence<K...>) noexcept {
  constexpr std::size_t first = plan<T>::by_field[I].first;
  return (std::uint64_t{0} | ... |
          piece_from<T, first + K>(words[plan<T>::pieces.at[first + K].chunk]));
}

// Field I straight from the header's bytes: only the words it lies in are loaded.
template <class T, std::size_t I, std::size_t... K>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t field_from_bytes(const std::uint8_t* p,
                                                               std::index_sequence<K...>) noexcept {
  constexpr std::size_t first = plan<T>::by_field[I].first;
  return (std::uint64_t{0} | ... |
          piece_from<T, first + K>(
              load_word<plan<T>::chunks.at[plan<T>::pieces.at[first + K].chunk].bytes>(
                  p + plan<T>::chunks.at[plan<T>::pieces.at[first + K].chunk].offset)));
}

template <class T, std::size_t I>
SCALEUP_ALWAYS_INLINE constexpr member_t<T, I> get_field(const std::uint8_t* p) noexcept {
  using M = member_t<T, I>;
  if constexpr (is_byte_array_v<M>) {
    M out{};
    copy_bytes(out.data(), p + field_infos<T>[I].bit / 8u, out.size());
    return out;
  } else {
    return static_cast<M>(
        field_from_bytes<T, I>(p, std::make_index_sequence<plan<T>::by_field[I].second>{}));
  }
}

template <class T, std::size_t... I>
SCALEUP_ALWAYS_INLINE constexpr std::array<std::uint64_t, sizeof...(I)> values_of(
    const T& v, std::index_sequence<I...>) noexcept {
  return {as_u64(v.*member_ptr<T, I>)...};
}

// Every field's value as a u64 (byte arrays: 0).
template <class T>
SCALEUP_ALWAYS_INLINE constexpr std::array<std::uint64_t, field_count<T>> values_of(
    const T& v) noexcept {
  return values_of(v, std::make_index_sequence<field_count<T>>{});
}

template <class T, std::size_t... C>
SCALEUP_ALWAYS_INLINE constexpr std::array<std::uint64_t, sizeof...(C)> load_words(
    const std::uint8_t* p, std::index_sequence<C...>) noexcept {
  return {load_word<plan<T>::chunks.at[C].bytes>(p + plan<T>::chunks.at[C].offset)...};
}

template <class T, std::size_t I>
SCALEUP_ALWAYS_INLINE constexpr void read_one(const std::uint8_t* p, const std::uint64_t* words,
                                              T& out) noexcept {
  using M = member_t<T, I>;
  if constexpr (is_byte_array_v<M>)
    out.*member_ptr<T, I> = get_field<T, I>(p);
  else
    out.*member_ptr<T, I> = static_cast<M>(
        field_from_words<T, I>(words, std::make_index_sequence<plan<T>::by_field[I].second>{}));
}

template <class T, std::size_t... I>
SCALEUP_ALWAYS_INLINE constexpr void read_fields(const std::uint8_t* p, const std::uint64_t* words,
                                                 T& out, std::index_sequence<I...>) noexcept {
  (read_one<T, I>(p, words, out), ...);
}

// Reads every field of the header at p (all of it readable) into out: each word loaded once.
template <class T>
SCALEUP_ALWAYS_INLINE constexpr void read_all(const std::uint8_t* p, T& out) noexcept {
  const auto words = load_words<T>(p, std::make_index_sequence<plan<T>::chunks.count>{});
  read_fields<T>(p, words.data(), out, std::make_index_sequence<field_count<T>>{});
}

template <class T, std::size_t... C>
SCALEUP_ALWAYS_INLINE constexpr void store_words(const std::uint64_t* words, std::uint8_t* p,
                                                 std::index_sequence<C...>) noexcept {
  (store_word<plan<T>::chunks.at[C].bytes>(p + plan<T>::chunks.at[C].offset, words[C]), ...);
}

template <class T, std::size_t I>
SCALEUP_ALWAYS_INLINE constexpr void write_array(const T& v, std::uint8_t* p) noexcept {
  if constexpr (field_is_array<T>[I]) {
    const auto& a = v.*member_ptr<T, I>;
    copy_bytes(p + field_infos<T>[I].bit / 8u, a.data(), a.size());
  }
}

template <class T, std::size_t... I>
SCALEUP_ALWAYS_INLINE constexpr void write_arrays(const T& v, std::uint8_t* p,
                                                  std::index_sequence<I...>) noexcept {
  (write_array<T, I>(v, p), ...);
}

// Writes every byte of the header at p: the words composed from v (compose), one store each,
// and v's byte arrays.
template <class T>
SCALEUP_ALWAYS_INLINE constexpr void write_all(
    const T& v, const std::array<std::uint64_t, plan<T>::chunks.count>& words,
    std::uint8_t* p) noexcept {
  store_words<T>(words.data(), p, std::make_index_sequence<plan<T>::chunks.count>{});
  write_arrays<T>(v, p, std::make_index_sequence<field_count<T>>{});
}

// Field I's part of decode's one test: a fixed field off its value, decode's only hard error,
// and, when `Reserved`, a reserved field not zero (decode_reported's warning). A byte array
// counts as 0, as in validate.
template <class T, std::size_t I, bool Reserved>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t misfit(std::uint64_t x) noexcept {
  if constexpr (field_infos<T>[I].check == rule::fixed)
    return x ^ field_infos<T>[I].expect;
  else if constexpr (Reserved && field_infos<T>[I].check == rule::reserved)
    return x;
  else
    return 0;
}

template <class T, bool Reserved, std::size_t... I>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t misfits(const std::uint64_t* vals,
                                                      std::index_sequence<I...>) noexcept {
  return (std::uint64_t{0} | ... | misfit<T, I, Reserved>(vals[I]));
}

// Non-zero when a fixed field is off its value (and with `Reserved`, when a reserved field is
// not zero): one test for the whole header, the problem itself then found field by field.
template <class T, bool Reserved = false>
SCALEUP_ALWAYS_INLINE constexpr std::uint64_t fixed_misfits(
    const std::array<std::uint64_t, field_count<T>>& vals) noexcept {
  return misfits<T, Reserved>(vals.data(), std::make_index_sequence<field_count<T>>{});
}

// Whether encode refuses field I's value x (what encode_error explains): too big for the field,
// or a fixed field off its value. Only fields with pieces are asked (not byte arrays).
template <class T, std::size_t I>
SCALEUP_ALWAYS_INLINE constexpr bool refuses(std::uint64_t x) noexcept {
  constexpr field_info f = field_infos<T>[I];
  bool bad = false;
  if constexpr (f.width < 64) bad = x > max_value(f.width);
  if constexpr (f.check == rule::fixed) bad = bad || x != f.expect;
  return bad;
}

// Piece P into its chunk's word; and when P is its field's first piece, whether the field's value
// is refused (ORed into `refused` as a short circuit: GCC then tests each value with one compare
// and a branch straight to the refusal, where ORing the values of each width into accumulators
// and testing those took an OR, a register copy and a zero-extension per value). Each word is built
// most significant piece first: each step moves the word built so far up by the distance to the
// next piece and adds that piece (the pieces' bits do not overlap: adding is ORing), and the last
// piece's shift moves it all into place. That is a shift and an add per piece where shifting each
// piece into place and ORing took two, and on x86-64 a shift by 1, 2 or 3 and an add are one `lea`.
template <class T, std::size_t P>
SCALEUP_ALWAYS_INLINE constexpr void compose_piece(const T& v, std::uint64_t* words,
                                                   bool& refused) noexcept {
  constexpr auto& pcs = plan<T>::pieces;
  constexpr piece pc = pcs.at[P];
  const std::uint64_t x = as_u64(v.*member_ptr<T, pc.field>);
  if constexpr (P == 0 || pcs.at[P - 1].field != pc.field)
    refused = refused || refuses<T, pc.field>(x);
  std::uint64_t& word = words[pc.chunk];
  if constexpr (P == 0 || pcs.at[P - 1].chunk != pc.chunk)
    word = piece_bits<T, P>(x);
  else
    word = (word << (pcs.at[P - 1].chunk_shift - pc.chunk_shift)) + piece_bits<T, P>(x);
  if constexpr (P + 1 == pcs.count || pcs.at[P + 1].chunk != pc.chunk) word <<= pc.chunk_shift;
}

template <class T, std::size_t... P>
SCALEUP_ALWAYS_INLINE constexpr void compose_pieces(const T& v, std::uint64_t* words, bool& refused,
                                                    std::index_sequence<P...>) noexcept {
  (compose_piece<T, P>(v, words, refused), ...);
}

// The header's words from v, and whether encode refuses one of its values (`refused` set; the
// words are then meaningless): one pass over the pieces in bit order, each value used as soon as
// it is read. (Reading all the values first, then checking, then composing kept them all live
// at once: GCC spilled the RH's nine to the stack.)
template <class T>
SCALEUP_ALWAYS_INLINE constexpr std::array<std::uint64_t, plan<T>::chunks.count> compose(
    const T& v, bool& refused) noexcept {
  std::array<std::uint64_t, plan<T>::chunks.count> words{};
  compose_pieces<T>(v, words.data(), refused, std::make_index_sequence<plan<T>::pieces.count>{});
  return words;
}

}  // namespace detail

// ---- the view: checked once, then accessors cannot fail ----------------------------------

template <class T>
class view {
 public:
  static constexpr std::size_t size = layout<T>::size;

  // The one length check, for the header that starts at b[offset]. A failure is placed from the
  // start of b; a b that ends before offset is a truncation like any other, never a read.
  SCALEUP_ALWAYS_INLINE static constexpr result<view> make(bytes b,
                                                           std::size_t offset = 0) noexcept {
    const std::size_t available = b.size() > offset ? b.size() - offset : 0;
    if (available < size) return truncated(layout<T>::name, offset, size, available);
    return view(b.data() + offset);
  }

  constexpr view() = default;

  // One field: loads only the word(s) it lies in.
  template <auto Member>
  SCALEUP_ALWAYS_INLINE constexpr auto get() const noexcept {
    using M = std::remove_cvref_t<decltype(std::declval<T>().*Member)>;
    if constexpr (detail::plannable<T>())
      return detail::get_field<T, index_of<T, Member>()>(p_);
    else
      return read_field<M>(p_, info_of<T, Member>());
  }

  // Decodes every field; no validation (see decode()).
  SCALEUP_ALWAYS_INLINE constexpr T value() const noexcept {
    T out{};
    read(out);
    return out;
  }
  // The same into an object of the caller's, such as a reader's result: built where it is kept,
  // not aside and copied (the copy's wide loads of what narrow stores just wrote stall).
  SCALEUP_ALWAYS_INLINE constexpr void read(T& out) const noexcept {
    if constexpr (detail::plannable<T>()) {
      detail::read_all(p_, out);
    } else {
      std::apply(
          [&](const auto&... f) {
            ((out.*(f.member) = read_field<std::remove_cvref_t<decltype(out.*(f.member))>>(p_, f)),
             ...);
          },
          layout<T>::fields);
    }
  }

  constexpr bytes raw() const noexcept { return bytes(p_, size); }

 private:
  constexpr explicit view(const std::uint8_t* p) : p_(p) {}
  const std::uint8_t* p_ = nullptr;
};

// Calls visit(field_info, value-as-u64, error-or-none) for each field; the dissector's walk.
template <class T, class Visit>
constexpr void for_each_field(const T& v, Visit&& visit) {
  std::apply(
      [&](const auto&... f) { (visit(static_cast<const field_info&>(f), v.*(f.member)), ...); },
      layout<T>::fields);
}

// Validation shared by decode and the dissector: every rule in the table. Warnings go to
// `warn` (a callable taking error); the first hard error is returned.
template <class T, class Warn>
constexpr error validate(const T& v, std::size_t base, Warn&& warn) {
  error first{};
  std::apply(
      [&](const auto&... f) {
        (([&] {
           const error e = check_rule(layout<T>::name, base, f, as_u64(v.*(f.member)));
           if (!e) return;
           if (e.level == severity::warning)
             warn(e);
           else if (!first)
             first = e;
         }()),
         ...);
      },
      layout<T>::fields);
  return first;
}

// Whether a value read through a view breaks no rule of error severity (what decode refuses),
// for a reader that needs the verdict and not the error.
template <class T>
SCALEUP_ALWAYS_INLINE constexpr bool holds_rules(const T& v) noexcept {
  if constexpr (detail::plannable<T>()) {
    // Only a fixed field can fail: one test.
    if constexpr (detail::plan<T>::has_fixed)
      return detail::fixed_misfits<T>(detail::values_of(v)) == 0;
    else
      return true;
  } else {
    return !validate(v, 0, [](const error&) {});
  }
}

// Decode with validation, of the header that starts at b[offset]; errors are placed from the
// start of b (offset + the field's byte). Reserved-but-nonzero values are kept in the value (so
// re-encoding gives the same bytes) and are not an error here; decode_reported says them.
template <class T>
SCALEUP_ALWAYS_INLINE constexpr result<T> decode(bytes b, std::size_t offset = 0) noexcept {
  const auto vw = view<T>::make(b, offset);
  if (!vw) return vw.err;
  T out = vw->value();
  if (holds_rules(out)) return out;
  // The error, field by field.
  return result<T>(out, validate(out, offset, [](const error&) {}));
}

// decode_reported's checks of a value decoded from the header at `offset`: every rule of its
// table, each warning and then the hard error (if any) handed to `report` in table order; the
// hard error is returned.
template <class T, class Report>
SCALEUP_ALWAYS_INLINE constexpr error report_rules(const T& v, std::size_t offset,
                                                   Report&& report) noexcept {
  // Nearly always nothing to report: one test, and the rules field by field only when it fails.
  if constexpr (detail::plannable<T>())
    if (detail::fixed_misfits<T, true>(detail::values_of(v)) == 0) return {};
  const error hard = validate(v, offset, report);
  if (hard) report(hard);
  return hard;
}

// Lax decode for a reader that keeps every problem: the header at b[offset] with every rule of
// its table checked, each warning and then the hard error (if any) handed to `report` in table
// order; a truncation is reported too. The value read comes back even with a hard error.
template <class T, class Report>
constexpr result<T> decode_reported(bytes b, std::size_t offset, Report&& report) noexcept {
  const auto vw = view<T>::make(b, offset);
  if (!vw) {
    report(vw.err);
    return vw.err;
  }
  const T v = vw->value();
  if (const error hard = report_rules(v, offset, report)) return result<T>(v, hard);
  return v;
}

namespace detail {

// The first value encode refuses, field by field in table order: too big for its field, or a
// fixed field off its value.
template <class T>
constexpr error encode_error(const T& v) noexcept {
  error bad{};
  std::apply(
      [&](const auto&... f) {
        (([&] {
           if (bad) return;
           using M = std::remove_cvref_t<decltype(v.*(f.member))>;
           if constexpr (!is_byte_array_v<M>) {
             const auto x = static_cast<std::uint64_t>(v.*(f.member));
             if (x > max_value(f.width)) {
               bad = error{errc::value_too_big,
                           layout<T>::name,
                           static_cast<std::uint32_t>(f.bit / 8),
                           0,
                           0,
                           "value does not fit its field",
                           f.filter,
                           x};
               return;
             }
             if (f.check == rule::fixed && x != f.expect)
               bad = check_rule(layout<T>::name, 0, f, x);
           }
         }()),
         ...);
      },
      layout<T>::fields);
  return bad;
}

// Why encode refused: the output too small, else encode_error. Out of the hot path.
template <class T>
SCALEUP_COLD constexpr error encode_failure(const T& v, std::size_t room) noexcept {
  constexpr std::size_t size = layout<T>::size;
  if (room < size)
    return error{errc::no_space,
                 layout<T>::name,
                 0,
                 static_cast<std::uint32_t>(size),
                 static_cast<std::uint32_t>(room),
                 "output buffer too small"};
  return encode_error(v);
}

}  // namespace detail

// Encode: every value must fit its field and satisfy the fixed rules; nothing is truncated.
// The common case is one test and one store per word; a refusal is explained out of line.
template <class T>
SCALEUP_ALWAYS_INLINE constexpr result<std::size_t> encode(const T& v, mutable_bytes out) noexcept {
  constexpr std::size_t size = layout<T>::size;
  if constexpr (detail::plannable<T>()) {
    bool refused = false;
    const auto words = detail::compose(v, refused);
    if (out.size() < size || refused) [[unlikely]]
      return detail::encode_failure(v, out.size());
    detail::write_all(v, words, out.data());
  } else {
    if (const error bad = detail::encode_failure(v, out.size())) return bad;
    for (std::size_t i = 0; i < size; ++i) out[i] = 0;
    std::apply([&](const auto&... f) { (write_field(out.data(), f, v.*(f.member)), ...); },
               layout<T>::fields);
  }
  return size;
}

// Encode into a fresh array: handy in constant expressions and tests.
template <class T>
constexpr result<std::array<std::uint8_t, layout<T>::size>> to_bytes(const T& v) noexcept {
  std::array<std::uint8_t, layout<T>::size> out{};
  const auto r = encode(v, out);
  if (!r) return r.err;
  return out;
}

// ---- batches: many headers of one type, back to back ------------------------------------

namespace detail {

// The first header from `from` on that encode refuses, and why: the error of encode, placed in
// the whole output (offset) and naming the header (item, 1-based). Out of the hot path.
template <class T>
SCALEUP_COLD constexpr result<std::size_t> batch_encode_failure(std::span<const T> in,
                                                                std::size_t from) noexcept {
  for (std::size_t i = from; i < in.size(); ++i) {
    error e = encode_error(in[i]);
    if (!e) continue;
    e.offset += static_cast<std::uint32_t>(i * layout<T>::size);
    e.item = static_cast<std::uint32_t>(i + 1);
    return result<std::size_t>(i, e);
  }
  return in.size();  // not reached: encode refused in[from]
}

}  // namespace detail

// Encodes in[i] into bytes [i * size, (i + 1) * size) of out, for every i; the value is how
// many headers were encoded. Each header is encode's (its checks and its code, one compare per
// field that can be refused, branching out only on a refusal). On a refusal the value is the
// index of the first refused header and the error is encode's for it, with `item` = index + 1
// and `offset` counted from the start of out; the headers before it are encoded, the bytes from
// it on are unspecified. Too small an output: no_space, nothing written.
template <class T>
constexpr result<std::size_t> encode_all(std::span<const T> in, mutable_bytes out) noexcept {
  constexpr std::size_t size = layout<T>::size;
  const std::size_t n = in.size();
  if (out.size() / size < n)
    return error{errc::no_space,
                 layout<T>::name,
                 0,
                 static_cast<std::uint32_t>(n * size),
                 static_cast<std::uint32_t>(out.size()),
                 "output buffer too small"};
  // Locals: the stores through out may alias anything, and must not make the loop reload these.
  const T* const src = in.data();
  std::uint8_t* const dst = out.data();
  for (std::size_t i = 0; i < n; ++i)
    if (!encode(src[i], mutable_bytes(dst + i * size, size))) [[unlikely]]
      return detail::batch_encode_failure(in, i);
  return n;
}

}  // namespace scaleup::wire

// What a Wireshark dissector registers for the library's fields: one field per filter name, from
// every table, every dissector's computed fields and each shipped profile's name field. The
// plugin (wireshark/registry.cpp) registers these, and the Lua dissector's generator writes the
// same list into the Lua (tools/lua_dissector.cpp), so that both register alike. Built at run
// time, on the heap: a registration's, once, not a frame's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scaleup/dissect/registry.hpp"
#include "scaleup/pack/profiles.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::dissect {

// A filter name as registered; several tables may share one (the first octet of both AFH Gen 2
// formats, sue.cmd.* across command shapes).
struct registered_field {
  std::string filter, name, blurb;  // named and described as the first entry
  wire::kind kind = wire::kind::uint;
  unsigned width = 0;                   // the widest entry's
  std::vector<wire::value_name> names;  // the first entry's that has any
  // Every entry a header's (not a command's, whose profile may come at run time, nor a computed
  // field's), all at one bit of their first byte and of one width: its bits may be registered.
  bool one_place = true;
  unsigned bit_in_byte = 0;

  // An unsigned field that does not fill its bytes, whose bytes are as wide as its type (8, 16,
  // 24 or 32 bits): its bits in them, which Wireshark then draws as the library does
  // (put_bit_pattern) and takes a value where it lies in them. 0: registered without. Not a
  // hex field's: with a bitmask, tshark writes as many hex digits as the bits need rather than
  // the type's, which would change what -T fields prints for it.
  constexpr std::uint32_t bitmask() const noexcept {
    if (kind != wire::kind::uint || !one_place || width == 0 || width > 32 ||
        (bit_in_byte == 0 && width % 8 == 0))
      return 0;
    if ((bit_in_byte + width + 7) / 8 != (width + 7) / 8) return 0;
    return ((std::uint32_t{1} << (width - 1) << 1) - 1) << shift();
  }
  // How far the value lies from the last bit of its type's bytes.
  constexpr unsigned shift() const noexcept { return (width + 7) / 8 * 8 - bit_in_byte - width; }
};

class registered_fields {
 public:
  // `header`: an entry of a header's table (a frame's, a link's, the XPU's, the engine's).
  void collect(const wire::field_info& f, bool header = false) {
    auto [it, fresh] = at_.try_emplace(std::string(f.filter), list_.size());
    if (fresh) {
      registered_field r;
      r.filter = std::string(f.filter);
      r.name = std::string(f.name);
      r.blurb = std::string(f.description.empty() ? f.seed : f.description);
      r.kind = f.type;
      r.one_place = header;
      r.bit_in_byte = f.bit % 8;
      r.width = f.width;
      list_.push_back(std::move(r));
    }
    registered_field& r = list_[it->second];
    if (!fresh)
      r.one_place = r.one_place && header && f.bit % 8 == r.bit_in_byte && f.width == r.width;
    r.width = std::max<unsigned>(r.width, f.width);
    if (r.names.empty()) r.names.assign(f.names.begin(), f.names.end());
  }
  // Every table's fields, every dissector's computed fields, each shipped profile's name field.
  void collect_shipped() {
    for (const auto& t : tables)
      for (const auto& f : t.fields) collect(f, t.group != table_group::command);
    for (const auto* f : computed) collect(*f);
    for (const auto* prof : pack::shipped_profiles) collect(prof->name_field());
  }
  // In the order of first appearance.
  const std::vector<registered_field>& list() const noexcept { return list_; }
  const registered_field* find(std::string_view filter) const {
    const auto it = at_.find(filter);
    return it == at_.end() ? nullptr : &list_[it->second];
  }

 private:
  std::vector<registered_field> list_;
  std::map<std::string, std::size_t, std::less<>> at_;
};

}  // namespace scaleup::dissect

// Registration from the library's tables (dissect/registry.hpp: every field table and every
// dissector's computed fields), each command profile's name field, and dissect/analysis.hpp's
// results.
#include "registry.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "scaleup/dissect/registry.hpp"
#include "scaleup/pack/profiles.hpp"

namespace scaleup::ws {

namespace {

// Layers come and go with formats; subtree indices must be registered up front.
constexpr std::size_t ett_pool_size = 96;

std::string_view prefix_of(std::string_view name) { return name.substr(0, name.find('.')); }

ftenum uint_type(unsigned width) {
  if (width <= 8) return FT_UINT8;
  if (width <= 16) return FT_UINT16;
  if (width <= 24) return FT_UINT24;
  if (width <= 32) return FT_UINT32;
  if (width <= 40) return FT_UINT40;
  if (width <= 48) return FT_UINT48;
  if (width <= 56) return FT_UINT56;
  return FT_UINT64;
}

// The value names Wireshark gets: each name (in any case, as Wireshark matches names) for the
// first value that has it only; sue.rh.op's "none" is 2 and 3, tofu.rh.pat's "reserved" 3 to 7.
// For a name of several values, Wireshark 4.4's display-filter compiler (semcheck.c,
// mk_fvalue_from_hfinfo) compares the field's value-name text instead of its number. In a set
// it checks the members in order: in `sue.rh.op in {NACK, none}` NACK stays the number 1 while
// the field becomes text, and tshark compares the text with that number as two strings
// (fvalue_eq on FT_STRING and FT_UINT64): SIGSEGV. With one value per name every version reads
// a name as its first value, as Wireshark 4.0 and `scaleup dump -Y` do. The items' text is the
// library's (render.hpp), so the tree still names the later values; where Wireshark names a
// value itself (a custom column) they show as numbers.
std::vector<wire::value_name> named_once(const std::vector<wire::value_name>& names) {
  std::vector<wire::value_name> once;
  for (const auto& n : names)
    if (std::none_of(once.begin(), once.end(), [&](const wire::value_name& o) {
          return o.name.size() == n.name.size() &&
                 g_ascii_strncasecmp(o.name.data(), n.name.data(), n.name.size()) == 0;
        }))
      once.push_back(n);
  return once;
}

int group_of(wire::errc code) {
  switch (code) {
    case wire::errc::not_captured:
      return PI_UNDECODED;  // not in the capture, so not decoded
    case wire::errc::truncated:
    case wire::errc::bad_length:
    case wire::errc::value_too_big:
      return PI_MALFORMED;
    case wire::errc::bad_checksum:
      return PI_CHECKSUM;
    case wire::errc::unsupported:
    case wire::errc::no_space:
      return PI_UNDECODED;
    default:
      return PI_PROTOCOL;
  }
}

}  // namespace

const char* registry::keep(std::string_view s) { return strings_.emplace_back(s).c_str(); }

int registry::protocol_for_prefix(std::string_view prefix, std::string_view title) {
  for (const auto& p : protocols_)
    if (p.prefix == prefix) return p.id;
  // A prefix Wireshark already has is Wireshark's: its own dissectors show those fields.
  if (proto_get_id_by_filter_name(std::string(prefix).c_str()) != -1) return -1;
  std::string full, short_name;
  for (const auto& k : dissect::protocol_names)
    if (k.prefix == prefix) full = std::string(k.full), short_name = std::string(k.short_name);
  if (full.empty()) {
    full = title.empty() ? "Scale-Up " + std::string(prefix) : std::string(title);
    for (const char c : prefix) short_name += static_cast<char>(std::toupper(c));
  }
  // Full and short names must be unique too; a clash costs a suffix, not the protocol.
  if (proto_name_already_registered(full.c_str())) full += " (scaleup)";
  if (proto_get_id_by_short_name(short_name.c_str()) != -1) short_name = "SUE-" + short_name;
  protocol& p = protocols_.emplace_back();
  p.prefix = std::string(prefix);
  p.id = proto_register_protocol(keep(full), keep(short_name), keep(prefix));
  return p.id;
}

int* registry::hf_into(std::map<int, std::vector<hf_register_info>>& by_protocol, int proto,
                       const char* name, const char* abbrev, ftenum type, int display,
                       const void* strings, const char* blurb, std::uint64_t bitmask) {
  int* id = &ids_.emplace_back(-1);
  hf_register_info h{};
  h.p_id = id;
  h.hfinfo = header_field_info{name, abbrev, type, display, strings, bitmask, blurb, HFILL};
  by_protocol[proto].push_back(h);
  return id;
}

// An hf for every collected filter not registered yet, into `by_protocol`; the ids by filter.
std::vector<std::pair<std::string, int*>> registry::field_hfs(
    std::map<int, std::vector<hf_register_info>>& by_protocol) {
  std::vector<std::pair<std::string, int*>> ids_by_filter;
  for (const auto& p : collected_.list()) {
    const std::string& filter = p.filter;
    const auto* proto = protocol_named(prefix_of(filter));
    if (!proto || proto_registrar_get_byname(filter.c_str())) continue;
    field_spec spec;
    spec.kind = p.kind;
    spec.width = p.width;
    spec.name = p.name;
    int display = BASE_NONE;
    const void* strings = nullptr;
    switch (p.kind) {
      case wire::kind::label:
        spec.type = FT_STRING;
        break;
      case wire::kind::mac:
        spec.type = FT_ETHER;
        break;
      case wire::kind::ipv4:
        spec.type = FT_IPv4;
        break;
      case wire::kind::ipv6:
        spec.type = FT_IPv6;
        break;
      case wire::kind::flag: {
        spec.type = FT_BOOLEAN;
        const auto n0 = std::find_if(p.names.begin(), p.names.end(),
                                     [](const wire::value_name& v) { return v.value == 0; });
        const auto n1 = std::find_if(p.names.begin(), p.names.end(),
                                     [](const wire::value_name& v) { return v.value == 1; });
        if (n0 != p.names.end() && n1 != p.names.end())
          strings = &tfs_.emplace_back(true_false_string{keep(n1->name), keep(n0->name)});
        break;
      }
      case wire::kind::uint:
      case wire::kind::hex:
        spec.type = uint_type(p.width);
        display = p.kind == wire::kind::hex ? BASE_HEX : BASE_DEC;
        spec.named = !p.names.empty();
        spec.bitmask = p.bitmask();
        if (spec.bitmask) spec.shift = p.shift(), spec.bit_in_byte = p.bit_in_byte;
        if (!p.names.empty() && p.width <= 32) {
          auto& v = vals_.emplace_back();
          for (const auto& n : named_once(p.names))
            v.push_back(value_string{static_cast<guint32>(n.value), keep(n.name)});
          v.push_back(value_string{0, nullptr});
          strings = v.data();
        } else if (!p.names.empty()) {
          auto& v = vals64_.emplace_back();
          for (const auto& n : named_once(p.names))
            v.push_back(val64_string{n.value, keep(n.name)});
          v.push_back(val64_string{0, nullptr});
          strings = v.data();
          display |= BASE_VAL64_STRING;
        }
        break;
    }
    ids_by_filter.emplace_back(
        filter, hf_into(by_protocol, proto->id, keep(p.name), keep(filter), spec.type, display,
                        strings, keep(p.blurb), spec.bitmask));
    fields_.emplace(filter, spec);
  }

  return ids_by_filter;
}

int registry::register_all() {
  collected_.collect_shipped();

  // Protocols in order of first appearance, each named after its first table.
  const auto title_of = [](std::string_view prefix) -> std::string_view {
    for (const auto& t : dissect::tables)
      if (prefix_of(t.name) == prefix) return t.title;
    return {};
  };
  const int sue = protocol_for_prefix("sue", title_of("sue"));
  for (const auto& f : collected_.list()) {
    const std::string_view prefix = prefix_of(f.filter);
    protocol_for_prefix(prefix, title_of(prefix));
  }

  std::map<int, std::vector<hf_register_info>> by_protocol;
  const auto add = [&](int proto, const char* name, const char* abbrev, ftenum type, int display,
                       const void* strings, const char* blurb) -> int* {
    return hf_into(by_protocol, proto, name, abbrev, type, display, strings, blurb);
  };
  const auto ids_by_filter = field_hfs(by_protocol);

  // The sequence analysis, under "sue".
  int* analysis_id = add(sue, "SUE sequence analysis", keep(dissect::analysis_filter), FT_NONE,
                         BASE_NONE, nullptr, "Go-back-N analysis of this PDU's connection");
  std::vector<int*> value_ids;
  for (const auto& v : dissect::analysis_values) {
    ftenum type = FT_UINT32;
    int display = BASE_DEC;
    const void* strings = nullptr;
    if (v.kind == dissect::unit::frame) {
      type = FT_FRAMENUM;
      display = BASE_NONE;
      strings = FRAMENUM_TYPE(FT_FRAMENUM_NONE);
    } else if (v.kind == dissect::unit::nanoseconds) {
      type = FT_RELATIVE_TIME;
      display = BASE_NONE;
    }
    value_ids.push_back(
        add(sue, keep(v.name), keep(v.filter), type, display, strings, keep(v.description)));
  }

  register_hfs(by_protocol, ids_by_filter);
  hf_analysis = *analysis_id;
  for (int* id : value_ids) hf_values.push_back(*id);

  // Subtrees: one per protocol, the analysis, and a pool for layers.
  for (auto& p : protocols_) etts_.push_back(&p.ett);
  etts_.push_back(&ett_analysis);
  for (std::size_t i = 0; i < ett_pool_size; ++i) etts_.push_back(&ett_pool_.emplace_back(-1));
  proto_register_subtree_array(etts_.data(), static_cast<int>(etts_.size()));

  // Expert infos: one per error code and severity, one per analysis flag, one per rule.
  const auto expert = [&](const char* name, int group, int severity, const char* summary) {
    expert_field* e = &experts_.emplace_back(expert_field EI_INIT);
    ei_register_info r{};
    r.ids = e;
    r.eiinfo.name = name;
    r.eiinfo.group = group;
    r.eiinfo.severity = severity;
    r.eiinfo.summary = summary;
    r.eiinfo.id = 0;
    r.eiinfo.hf_info.hfinfo =
        header_field_info{nullptr, nullptr, FT_NONE, BASE_NONE, nullptr, 0, nullptr, HFILL};
    ei_.push_back(r);
    return e;
  };
  for (int c = 1; c < 256; ++c) {
    const auto code = static_cast<wire::errc>(c);
    const std::string_view n = wire::to_string(code);
    if (n == "unknown") break;
    error_experts_[{c, 0}] = expert(keep("sue.error." + std::string(n)), group_of(code), PI_ERROR,
                                    keep("Error: " + std::string(n)));
    error_experts_[{c, 1}] = expert(keep("sue.warning." + std::string(n)), group_of(code), PI_WARN,
                                    keep("Warning: " + std::string(n)));
    error_experts_[{c, 2}] = expert(keep("sue.note." + std::string(n)), group_of(code), PI_NOTE,
                                    keep("Note: " + std::string(n)));
  }
  for (const auto& f : dissect::analysis_flags)
    flag_experts_[static_cast<std::uint16_t>(f.bit)] =
        expert(keep(f.filter), PI_SEQUENCE,
               f.level == dissect::concern::warning ? PI_WARN : PI_NOTE, keep(f.summary));
  // One per conformance rule (dissect/conformance.hpp), under the rule's stable id.
  for (const auto& r : dissect::rules)
    rule_experts_[static_cast<std::size_t>(r.which)] = expert(
        keep(std::string(dissect::check_filter) + "." + std::string(r.id)), PI_PROTOCOL, PI_WARN,
        keep("Not conformant (" + std::string(r.id) + "): " + std::string(r.sentence)));
  expert_module_t* m = expert_register_protocol(sue);
  expert_register_field_array(m, ei_.data(), static_cast<int>(ei_.size()));
  return sue;
}

void registry::register_profile(const pack::profile& prof) {
  collected_.collect(prof.name_field());
  for (const auto& t : prof.types())
    for (const auto& f : t.fields) collected_.collect(f);
  std::map<int, std::vector<hf_register_info>> by_protocol;
  const auto ids = field_hfs(by_protocol);
  // Wireshark takes fields after its start (as HTTP's custom header fields do).
  register_hfs(by_protocol, ids);
}

void registry::register_hfs(std::map<int, std::vector<hf_register_info>>& by_protocol,
                            const std::vector<std::pair<std::string, int*>>& ids) {
  for (auto& [proto, hfs] : by_protocol) {
    auto& kept = hf_arrays_.emplace_back(std::move(hfs));
    proto_register_field_array(proto, kept.data(), static_cast<int>(kept.size()));
  }
  for (const auto& [filter, id] : ids) fields_.at(filter).hf = *id;
}

const protocol* registry::protocol_named(std::string_view prefix) const {
  for (const auto& p : protocols_)
    if (p.prefix == prefix) return &p;
  return nullptr;
}

const protocol* registry::protocol_of(std::string_view layer_name) const {
  return protocol_named(prefix_of(layer_name));
}

const field_spec* registry::field(std::string_view filter) const {
  const auto it = fields_.find(filter);
  return it == fields_.end() ? nullptr : &it->second;
}

registry::known_field& registry::slot_for(const wire::field_info* info) {
  const std::size_t mask = by_info_.size() - 1;
  for (std::size_t i = dissect::entry_hash(info) >> 24;; ++i)
    if (by_info_[i & mask].info == info || !by_info_[i & mask].info) return by_info_[i & mask];
}

// Whether Wireshark's label of an item of the entry is put_field_text's: the name, the value as
// the library writes it (decimal; hex in as many digits as the field's bits need; a label's
// text), no value names (Wireshark writes them first), and the bits drawn by both or neither.
field_use registry::use_for(const wire::field_info& info) const {
  field_use u;
  u.spec = field(info.filter);
  if (!u.spec) return u;
  const field_spec& s = *u.spec;
  const bool own_bits = (info.bit % 8 != 0 || info.width % 8 != 0) && info.width <= 32;
  const bool same_bits = s.bitmask != 0 && info.bit % 8 == s.bit_in_byte && info.width == s.width;
  u.fits = s.bitmask == 0 || same_bits;
  if (info.name != s.name || info.type != s.kind) return u;
  bool plain = false;
  switch (s.kind) {
    case wire::kind::label:
      plain = true;  // the value's name, as the library writes it
      break;
    case wire::kind::uint:
      plain = !s.named;
      break;
    case wire::kind::hex:
      // Wireshark writes as many digits as the bitmask's bits, else as its type's (uint_type:
      // the width rounded up to whole bytes); the library as many as the width's.
      plain = !s.named && info.width == s.width && (s.bitmask != 0 || s.width % 8 == 0);
      break;
    default:
      break;
  }
  if (!plain) return u;
  u.wireshark_label = own_bits ? same_bits : s.bitmask == 0;
  u.wireshark_label_generated = s.bitmask == 0;
  return u;
}

const field_use& registry::use_of(const wire::field_info& info) {
  if (by_info_.empty()) by_info_.resize(1024);
  known_field* k = &slot_for(&info);
  const auto fill = [&] {
    *k = known_field{&info, info.filter, info.bit, info.width, use_for(info)};
  };
  if (!k->info) {
    if (2 * (known_ + 1) > by_info_.size()) {  // keep it at most half full
      std::vector<known_field> old(by_info_.size() * 2);
      old.swap(by_info_);
      for (const auto& e : old)
        if (e.info) slot_for(e.info) = e;
      k = &slot_for(&info);
    }
    ++known_;
    fill();
  } else if (k->filter.data() != info.filter.data() || k->filter.size() != info.filter.size() ||
             k->bit != info.bit || k->width != info.width) {
    fill();  // an entry at an address once used by another (a table built at run time)
  }
  return k->use;
}

int registry::ett_for(std::string_view layer_name) {
  if (const auto it = ett_by_layer_.find(layer_name); it != ett_by_layer_.end()) return it->second;
  // Past the pool, layers share its last index: only their expansion state is shared.
  const int ett = ett_pool_[std::min(ett_next_, ett_pool_.size() - 1)];
  ++ett_next_;
  ett_by_layer_.emplace(std::string(layer_name), ett);
  return ett;
}

expert_field* registry::expert_for(wire::errc code, wire::severity level) {
  const auto it = error_experts_.find({static_cast<int>(code), static_cast<int>(level)});
  return it == error_experts_.end() ? nullptr : it->second;
}

expert_field* registry::expert_for(dissect::flag f) {
  const auto it = flag_experts_.find(static_cast<std::uint16_t>(f));
  return it == flag_experts_.end() ? nullptr : it->second;
}

expert_field* registry::expert_for(dissect::rule r) {
  return rule_experts_[static_cast<std::size_t>(r)];
}

}  // namespace scaleup::ws

// Command profiles described at run time (a vendor's file, R2 1.2: "the set operations and
// structure of the commands are XPU-specific"): a plain description, checked entry by entry and
// turned into a pack::profile that owns what it points to; and the description of any profile
// written out as JSON, the form `scaleup` and the Wireshark plugin read (profiles/default.json is
// the default profile written so). Parsing a file is the caller's (tools/profile_file.hpp): the
// library reads no file format of its own. Uses the heap, like analysis.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scaleup/dissect/json_writer.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::dissect {

// The names a description uses for wire::kind and wire::rule (indexed by their values).
inline constexpr std::array<std::string_view, 7> kind_names{"uint", "hex",  "flag", "mac",
                                                            "ipv4", "ipv6", "label"};
inline constexpr std::array<std::string_view, 3> rule_names{"any", "reserved", "fixed"};

struct field_description {
  std::string name, filter;
  std::uint64_t bit = 0, width = 0;
  std::string type = "uint";  // one of kind_names
  std::vector<std::pair<std::uint64_t, std::string>> values;
  std::string description, seed;
  std::string check = "any";  // one of rule_names
  std::uint64_t expect = 0;
};

struct command_description {
  std::uint64_t code = 0;
  std::string name;
  std::uint64_t control_units = 1;  // 2-byte units
  bool data = false;
  std::uint64_t vc = 0;
  std::string description, seed;
  std::vector<field_description> fields;
};

struct profile_description {
  std::string name, description;
  std::vector<command_description> types;
};

// A profile built from a description: the pack::profile and everything its views point to.
class runtime_profile {
 public:
  struct built;

  runtime_profile(const runtime_profile&) = delete;
  runtime_profile& operator=(const runtime_profile&) = delete;

  const pack::profile& profile() const noexcept { return *profile_; }

  // The profile `d` describes, or (null and) the first rule it breaks, naming the entry:
  // "types[3] (code 8, WR_PART): fields[2] (sue.cmd.tag): ...". The rules are pack::profile's
  // check() (R2 4.2: codes 1..255 once each, control 1..9 units, fields tiling the control from
  // the 8-bit type, a data type's 8-bit length second) and each value fitting its field.
  static built build(const profile_description& d);

 private:
  runtime_profile() = default;

  // A copy kept for the run: the profile's views point into it.
  std::string_view text(const std::string& s) { return strings_.emplace_back(s); }

  std::deque<std::string> strings_;  // a deque: the views into it stay put
  std::deque<std::vector<wire::value_name>> names_;
  std::deque<std::vector<wire::field_info>> fields_;
  std::vector<pack::command_type> types_;
  std::unique_ptr<pack::profile> profile_;
};

struct runtime_profile::built {
  std::unique_ptr<runtime_profile> profile;
  std::string error;  // empty when built
};

inline runtime_profile::built runtime_profile::build(const profile_description& d) {
  const auto fail = [](std::string why) { return built{nullptr, std::move(why)}; };
  if (d.name.empty()) return fail("name: a profile needs a name");
  if (d.types.empty()) return fail("types: a profile needs at least one command type");
  if (d.types.size() > pack::max_types) return fail("types: more than 255 command types");
  std::unique_ptr<runtime_profile> p(new runtime_profile());
  p->types_.reserve(d.types.size());
  std::array<int, 256> seen{};
  seen.fill(-1);
  for (std::size_t i = 0; i < d.types.size(); ++i) {
    const auto& t = d.types[i];
    const std::string where = "types[" + std::to_string(i) + "] (code " + std::to_string(t.code) +
                              (t.name.empty() ? "" : ", " + t.name) + "): ";
    if (t.code == pack::padding_type || t.code > 255)
      return fail(where + "code: a code is 1 to 255 (type 0 is padding, R2 4.2)");
    if (seen[t.code] >= 0)
      return fail(where + "code: the same code as types[" + std::to_string(seen[t.code]) + "]");
    seen[t.code] = static_cast<int>(i);
    if (t.name.empty()) return fail(where + "name: a command type needs a name");
    if (t.control_units < 1 || t.control_units > pack::max_control_units)
      return fail(where + "control_units: the control is 1 to 9 units of 2 bytes (R2 Table 3)");
    if (t.vc > 3) return fail(where + "vc: a VC is 0 to 3");
    auto& fields = p->fields_.emplace_back();
    fields.reserve(t.fields.size());
    std::uint64_t next = 0;
    for (std::size_t k = 0; k < t.fields.size(); ++k) {
      const auto& f = t.fields[k];
      const std::string at = where + "fields[" + std::to_string(k) + "] (" +
                             (f.filter.empty() ? f.name : f.filter) + "): ";
      if (f.name.empty() || f.filter.empty()) return fail(at + "a field needs a name and a filter");
      if (f.width < 1 || f.width > 64) return fail(at + "width: 1 to 64 bits");
      if (f.bit != next)
        return fail(at + "bit: starts at " + std::to_string(f.bit) + ", the field before ends at " +
                    std::to_string(next) + ": control fields must tile the control");
      next = f.bit + f.width;
      std::size_t kind = kind_names.size(), rule = rule_names.size();
      for (std::size_t n = 0; n < kind_names.size(); ++n)
        if (kind_names[n] == f.type) kind = n;
      for (std::size_t n = 0; n < rule_names.size(); ++n)
        if (rule_names[n] == f.check) rule = n;
      if (kind == kind_names.size() || kind == 5)  // an IPv6 value is not a control's
        return fail(at + "type: one of uint, hex, flag, mac, ipv4, label");
      if (rule == rule_names.size()) return fail(at + "check: one of any, reserved, fixed");
      const auto fits = [&](std::uint64_t v) { return f.width >= 64 || v < (1ull << f.width); };
      if (!fits(f.expect)) return fail(at + "expect: does not fit the field");
      auto& names = p->names_.emplace_back();
      for (const auto& [value, name] : f.values) {
        if (!fits(value))
          return fail(at + "values: " + std::to_string(value) + " does not fit the field");
        names.push_back({value, p->text(name)});
      }
      fields.push_back(wire::field_info{.name = p->text(f.name),
                                        .filter = p->text(f.filter),
                                        .bit = static_cast<std::uint16_t>(f.bit),
                                        .width = static_cast<std::uint16_t>(f.width),
                                        .type = static_cast<wire::kind>(kind),
                                        .names = names,
                                        .description = p->text(f.description),
                                        .seed = p->text(f.seed),
                                        .check = static_cast<wire::rule>(rule),
                                        .expect = f.expect});
    }
    p->types_.push_back(
        pack::command_type{.code = static_cast<std::uint8_t>(t.code),
                           .name = p->text(t.name),
                           .control_units = static_cast<std::uint8_t>(t.control_units),
                           .has_data = t.data,
                           .fields = fields,
                           .description = p->text(t.description),
                           .seed = p->text(t.seed),
                           .vc = static_cast<std::uint8_t>(t.vc)});
    // The rules pack::profile checks, on this type alone: its message names the entry.
    const pack::profile one("", std::span<const pack::command_type>(&p->types_.back(), 1));
    if (const auto why = one.check(); !why.empty()) return fail(where + std::string(why));
  }
  p->profile_ = std::make_unique<pack::profile>(p->text(d.name), p->types_, p->text(d.description));
  if (const auto why = p->profile_->check(); !why.empty()) return fail(std::string(why));
  return built{std::move(p), {}};
}

// `prof` as a description in JSON, the form runtime_profile reads back (one type an object; a
// field's values as [value, name] pairs).
template <class Out>
void put_profile_json(Out& out, const pack::profile& prof) {
  json_writer<Out> j(out);
  j.object().member("name", prof.name()).member("description", prof.description());
  j.array("types");
  for (const auto& t : prof.types()) {
    j.line("  ")
        .object()
        .member("code", t.code)
        .member("name", t.name)
        .member("control_units", t.control_units)
        .member_bool("data", t.has_data)
        .member("vc", t.vc)
        .member("description", t.description)
        .member("seed", t.seed);
    j.array("fields");
    for (const auto& f : t.fields) {
      j.line("    ")
          .object()
          .member("name", f.name)
          .member("filter", f.filter)
          .member("bit", f.bit)
          .member("width", f.width)
          .member("type", kind_names[static_cast<std::size_t>(f.type)]);
      if (!f.names.empty()) {
        j.array("values");
        for (const auto& n : f.names) j.array().member({}, n.value).member({}, n.name).end();
        j.end();
      }
      if (!f.description.empty()) j.member("description", f.description);
      if (!f.seed.empty()) j.member("seed", f.seed);
      if (f.check != wire::rule::any)
        j.member("check", rule_names[static_cast<std::size_t>(f.check)]);
      if (f.check == wire::rule::fixed) j.member("expect", f.expect);
      j.end();
    }
    j.end().end();
  }
  j.raw("\n").end().end().raw("\n");
}

}  // namespace scaleup::dissect

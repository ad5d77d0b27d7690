// A command profile from a JSON file (`--profile FILE`): parsed here with nlohmann::json (the
// library reads no file format), checked and built by dissect::runtime_profile. The file's form
// is the one dissect::put_profile_json writes; profiles/default.json is the default profile.
#pragma once

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "scaleup/dissect/profile_loader.hpp"
#include "scaleup/pack/profiles.hpp"

namespace scaleup::cli {

namespace detail {

using nlohmann::json;

// Reads member `key` of `o` into `out` when present; false with `error` naming it otherwise.
template <class T>
bool take(const json& o, const char* key, T& out, const std::string& where, std::string& error,
          bool required) {
  const auto it = o.find(key);
  if (it == o.end()) {
    if (required) error = where + key + ": missing";
    return !required;
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return error = where + key + ": true or false", false;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return error = where + key + ": a string", false;
  } else {
    if (!it->is_number_unsigned())
      return error = where + key + ": a whole number, 0 or more", false;
  }
  out = it->get<T>();
  return true;
}

inline bool read_field(const json& f, dissect::field_description& d, const std::string& where,
                       std::string& error) {
  if (!f.is_object()) return error = where + "an object", false;
  if (!take(f, "name", d.name, where, error, true) ||
      !take(f, "filter", d.filter, where, error, true) ||
      !take(f, "bit", d.bit, where, error, true) ||
      !take(f, "width", d.width, where, error, true) ||
      !take(f, "type", d.type, where, error, false) ||
      !take(f, "description", d.description, where, error, false) ||
      !take(f, "seed", d.seed, where, error, false) ||
      !take(f, "check", d.check, where, error, false) ||
      !take(f, "expect", d.expect, where, error, false))
    return false;
  if (const auto v = f.find("values"); v != f.end()) {
    if (!v->is_array()) return error = where + "values: a list of [value, name]", false;
    for (const auto& pair : *v) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() ||
          !pair[1].is_string())
        return error = where + "values: each a [value, name] pair", false;
      d.values.emplace_back(pair[0].get<std::uint64_t>(), pair[1].get<std::string>());
    }
  }
  return true;
}

inline bool read_type(const json& t, dissect::command_description& d, const std::string& where,
                      std::string& error) {
  if (!t.is_object()) return error = where + "an object", false;
  if (!take(t, "code", d.code, where, error, true) ||
      !take(t, "name", d.name, where, error, true) ||
      !take(t, "control_units", d.control_units, where, error, true) ||
      !take(t, "data", d.data, where, error, true) || !take(t, "vc", d.vc, where, error, false) ||
      !take(t, "description", d.description, where, error, false) ||
      !take(t, "seed", d.seed, where, error, false))
    return false;
  if (const auto f = t.find("fields"); f != t.end()) {
    if (!f->is_array()) return error = where + "fields: a list", false;
    for (std::size_t k = 0; k < f->size(); ++k)
      if (!read_field((*f)[k], d.fields.emplace_back(),
                      where + "fields[" + std::to_string(k) + "]: ", error))
        return false;
  }
  return true;
}

}  // namespace detail

// The profile in the JSON file `path`, or null with `error` saying which entry breaks which
// rule ("FILE: types[2] (code 6, WR_PART_P): control_units: ...").
inline std::unique_ptr<dissect::runtime_profile> load_profile_file(const std::string& path,
                                                                   std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open the file";
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) {
    error = path + ": not JSON";
    return nullptr;
  }
  dissect::profile_description d;
  std::string why;
  const auto types = doc.is_object() ? doc.find("types") : doc.end();
  if (!doc.is_object()) {
    why = "a profile is a JSON object";
  } else if (types == doc.end() || !types->is_array()) {
    why = "types: a list of command types";
  } else if (detail::take(doc, "name", d.name, "", why, true) &&
             detail::take(doc, "description", d.description, "", why, false)) {
    for (std::size_t i = 0; i < types->size() && why.empty(); ++i)
      detail::read_type((*types)[i], d.types.emplace_back(),
                        "types[" + std::to_string(i) + "]: ", why);
  }
  if (!why.empty()) {
    error = path + ": " + why;
    return nullptr;
  }
  auto built = dissect::runtime_profile::build(d);
  if (!built.profile) error = path + ": " + built.error;
  return std::move(built.profile);
}

// --profile's value: a shipped profile's name, "none" (null: payloads opaque, when `none_ok`),
// or a profile file, loaded once and kept for the run. Null with `error` set when it is none of
// them.
inline const pack::profile* resolve_profile(const std::string& value, bool none_ok,
                                            std::string& error) {
  if (none_ok && value == "none") return nullptr;
  if (const auto* p = pack::find_profile(value)) return p;
  static std::unique_ptr<dissect::runtime_profile> loaded;
  std::ifstream probe(value);
  if (!probe) {
    std::string names;
    for (const auto* p : pack::shipped_profiles)
      names += (names.empty() ? "" : ", ") + std::string(p->name());
    error =
        "'" + value + "' is " + (none_ok ? "not none, " : "not ") + names + " or a profile file";
    return nullptr;
  }
  loaded = load_profile_file(value, error);
  return loaded ? &loaded->profile() : nullptr;
}

}  // namespace scaleup::cli

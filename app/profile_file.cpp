// Command profile files, read with nlohmann::json (profile_file.hpp says why here).
#include "app/profile_file.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>

namespace scaleup::app {

namespace {

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

bool read_field(const json& f, dissect::field_description& d, const std::string& where,
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

bool read_type(const json& t, dissect::command_description& d, const std::string& where,
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

}  // namespace

std::unique_ptr<dissect::runtime_profile> load_profile_file(const std::string& path,
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
  } else if (take(doc, "name", d.name, "", why, true) &&
             take(doc, "description", d.description, "", why, false)) {
    for (std::size_t i = 0; i < types->size() && why.empty(); ++i)
      read_type((*types)[i], d.types.emplace_back(), "types[" + std::to_string(i) + "]: ", why);
  }
  if (!why.empty()) {
    error = path + ": " + why;
    return nullptr;
  }
  auto built = dissect::runtime_profile::build(d);
  if (!built.profile) error = path + ": " + built.error;
  return std::move(built.profile);
}

std::string profile_names() {
  std::string s;
  for (const auto* p : pack::shipped_profiles)
    s += (s.empty() ? "" : ", ") + std::string(p->name());
  return s;
}

std::optional<std::string> profile_choice::resolve(const std::string& value, bool none_ok) {
  profile_ = nullptr;
  loaded_.reset();
  if (none_ok && value == "none") return std::nullopt;
  if ((profile_ = pack::find_profile(value))) return std::nullopt;
  std::ifstream probe(value);
  if (!probe)
    return "'" + value + "' is " + (none_ok ? "not none, " : "not ") + profile_names() +
           " or a profile file";
  std::string error;
  loaded_ = load_profile_file(value, error);
  if (!loaded_) return error;
  profile_ = &loaded_->profile();
  return std::nullopt;
}

}  // namespace scaleup::app

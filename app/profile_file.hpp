// Command profiles from files (`--profile FILE`, the Wireshark plugin's profile file
// preference): JSON parsed with nlohmann::json here, in the application layer (the library reads
// no file format), checked and built by dissect::runtime_profile. The file's form is the one
// dissect::put_profile_json writes; profiles/default.json is the default profile.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "scaleup/dissect/profile_loader.hpp"
#include "scaleup/pack/profiles.hpp"

namespace scaleup::app {

// The profile in the JSON file `path`, or null with `error` saying which entry breaks which
// rule ("FILE: types[2] (code 6, WR_PART_P): control_units: ...").
std::unique_ptr<dissect::runtime_profile> load_profile_file(const std::string& path,
                                                            std::string& error);

// The shipped profiles' names, comma-separated ("default, ...").
std::string profile_names();

// A `--profile` value resolved: a shipped profile's name, "none" (no profile: payloads opaque,
// when allowed), or a profile file, which this keeps loaded for as long as it lives.
class profile_choice {
 public:
  // The usage error when `value` is none of them (or the file breaks a rule).
  std::optional<std::string> resolve(const std::string& value, bool none_ok);
  const pack::profile* profile() const noexcept { return profile_; }

 private:
  const pack::profile* profile_ = nullptr;
  std::unique_ptr<dissect::runtime_profile> loaded_;
};

}  // namespace scaleup::app

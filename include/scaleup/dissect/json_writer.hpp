// A general JSON writer, on the frames' writer (chunked.hpp) and its escaping.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "scaleup/dissect/chunked.hpp"

namespace scaleup::dissect {

// The JSON writer of everything the tools print besides the frames (statistics, manifests):
// the frames' own buffer and escaping (control characters as \u00XX), members written in order,
// objects and arrays nested up to 16 deep. Keys and strings are escaped; numbers are written as
// they are, or as the caller formatted them (number_text: a decimal such as "12.345").
template <class Out>
class json_writer {
 public:
  explicit json_writer(Out& out) : w_(out) {}

  // `{` or `[`, as a member named `key`, or as the next element when the key is empty.
  json_writer& object(std::string_view key = {}) { return open(key, '{', '}'); }
  json_writer& array(std::string_view key = {}) { return open(key, '[', ']'); }
  json_writer& end() {
    if (depth_ > 0) w_.put(close_[--depth_]);
    return *this;
  }

  template <class T>
  requires std::is_integral_v<T> json_writer& member(std::string_view key, T v) {
    name(key);
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) {
        w_.put('-');
        w_.number(std::uint64_t{0} - static_cast<std::uint64_t>(v));
        return *this;
      }
    }
    w_.number(static_cast<std::uint64_t>(v));
    return *this;
  }
  json_writer& member(std::string_view key, std::string_view v) {
    name(key);
    w_.quoted(v);
    return *this;
  }
  json_writer& member(std::string_view key, const char* v) {
    return member(key, std::string_view(v));
  }
  json_writer& member_bool(std::string_view key, bool v) {
    name(key);
    w_(v ? "true" : "false");
    return *this;
  }
  // A number the caller formatted (JSON number syntax).
  json_writer& number_text(std::string_view key, std::string_view v) {
    name(key);
    w_(v);
    return *this;
  }
  // Text straight to the output, between values (a newline after an object).
  json_writer& raw(std::string_view s) {
    w_(s);
    return *this;
  }
  // Starts the next member or element on a new line indented so (after its comma): a file a
  // person edits.
  json_writer& line(std::string_view indent) {
    indent_ = indent;
    return *this;
  }
  void flush() { w_.flush(); }

 private:
  json_writer& open(std::string_view key, char open, char close) {
    name(key);
    w_.put(open);
    if (depth_ < close_.size()) {
      close_[depth_] = close;
      first_[depth_++] = true;
    }
    return *this;
  }
  // The comma before a member or element, and its key.
  void name(std::string_view key) {
    const bool first = depth_ == 0 || first_[depth_ - 1];
    if (depth_ > 0) first_[depth_ - 1] = false;
    if (!indent_.empty()) {
      if (!first) w_.put(',');
      w_.put('\n');
      w_(indent_);
      indent_ = {};
      if (!key.empty()) w_.key(key, true);
    } else if (!key.empty()) {
      w_.key(key, first);
    } else if (!first) {
      w_.put(',');
    }
  }

  detail::chunked<Out> w_;
  std::array<char, 16> close_{};
  std::array<bool, 16> first_{};
  std::size_t depth_ = 0;
  std::string_view indent_{};
};

}  // namespace scaleup::dissect

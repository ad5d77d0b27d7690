// A connection's PSNs over time, for `scaleup stats --svg` (the tcptrace-style graph): every
// transmission, ACK and NACK as it was, up to a fixed number of points; beyond it, folded into
// at most a fixed number of time columns, each keeping per kind how many events fell in it and
// their lowest and highest PSN. A column is narrower than a pixel of the graph, so the plot looks
// the same, and a connection costs the same memory and SVG whatever the capture's length
// (every point kept, 254 000 frames made 22 MB of SVG).
//
// Columns are 2^k ns wide, counted from the connection's first event; when an event falls past
// the last column, the width doubles and neighbouring columns merge, so a trace never needs to
// know the capture's length in advance. Uses the heap (with the analysis, opt-in state).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace scaleup::dissect {

struct psn_event {
  enum class kind : std::uint8_t { first, retransmission, ack, nack };
  std::int64_t time_ns = 0;
  std::uint64_t frame = 0;
  std::int64_t psn = 0;  // unwrapped: keeps counting past 65535 (see connection::unwrap)
  kind what = kind::first;
};

inline constexpr std::size_t psn_event_kinds = 4;

// The events of one kind within a column.
struct psn_span {
  std::uint64_t count = 0;
  std::int64_t lowest = 0, highest = 0;

  constexpr void add(std::int64_t psn) noexcept {
    lowest = count == 0 ? psn : std::min(lowest, psn);
    highest = count == 0 ? psn : std::max(highest, psn);
    ++count;
  }
  constexpr void merge(const psn_span& o) noexcept {
    if (o.count == 0) return;
    lowest = count == 0 ? o.lowest : std::min(lowest, o.lowest);
    highest = count == 0 ? o.highest : std::max(highest, o.highest);
    count += o.count;
  }
};

struct psn_column {
  std::int64_t start_ns = 0;  // the column holds [start_ns, start_ns + width)
  std::array<psn_span, psn_event_kinds> spans{};
  constexpr const psn_span& of(psn_event::kind k) const noexcept {
    return spans[static_cast<std::size_t>(k)];
  }
};

class psn_trace {
 public:
  // 1024 events as they are, then 512 columns: under 2 pixels each on the 870-pixel-wide plot
  // of `stats --svg` (its dots are 4 wide), at most 3 SVG elements and a step of the ACK
  // staircase each. About 50 KiB of SVG and 32 KiB (events) or 52 KiB (columns) of memory a
  // connection, however long the capture.
  static constexpr std::size_t default_points = 1024;

  explicit psn_trace(std::size_t points = default_points)
      : points_(std::max<std::size_t>(points, 4)) {}

  void add(const psn_event& e) {
    if (!folded_ && events_.size() < points_) {
      events_.push_back(e);
      return;
    }
    if (!folded_) fold();
    put(e.time_ns, e.what, e.psn);
  }

  std::uint64_t size() const noexcept { return added_ + events_.size(); }
  bool folded() const noexcept { return folded_; }
  // Every event as it was, while not folded.
  std::span<const psn_event> events() const noexcept { return events_; }
  // Once folded: the columns in time order (some may be empty), each width_ns() wide.
  std::span<const psn_column> columns() const noexcept { return columns_; }
  std::int64_t width_ns() const noexcept { return std::int64_t{1} << shift_; }
  std::size_t max_columns() const noexcept { return points_ / 2; }

 private:
  // From events to columns: the origin is the earliest event, the width the narrowest that fits.
  void fold() {
    folded_ = true;
    origin_ = events_.front().time_ns;
    for (const auto& e : events_) origin_ = std::min(origin_, e.time_ns);
    for (const auto& e : events_) put(e.time_ns, e.what, e.psn);
    std::vector<psn_event>().swap(events_);
  }

  void put(std::int64_t t, psn_event::kind k, std::int64_t psn) {
    const std::uint64_t off = t > origin_ ? static_cast<std::uint64_t>(t - origin_) : 0;
    while ((off >> shift_) >= max_columns()) widen();
    const std::size_t i = static_cast<std::size_t>(off >> shift_);
    if (i >= columns_.size()) {
      const std::size_t from = columns_.size();
      columns_.resize(i + 1);
      for (std::size_t j = from; j <= i; ++j)
        columns_[j].start_ns = origin_ + static_cast<std::int64_t>(std::uint64_t{j} << shift_);
    }
    columns_[i].spans[static_cast<std::size_t>(k)].add(psn);
    ++added_;
  }

  // Twice as wide: columns 2j and 2j + 1 become column j.
  void widen() {
    ++shift_;
    const std::size_t n = (columns_.size() + 1) / 2;
    for (std::size_t j = 0; j < n; ++j) {
      psn_column c;
      c.start_ns = origin_ + static_cast<std::int64_t>(std::uint64_t{j} << shift_);
      for (const std::size_t from : {2 * j, 2 * j + 1})
        if (from < columns_.size())
          for (std::size_t k = 0; k < psn_event_kinds; ++k)
            c.spans[k].merge(columns_[from].spans[k]);
      columns_[j] = c;
    }
    columns_.resize(n);
  }

  std::size_t points_;
  bool folded_ = false;
  std::vector<psn_event> events_;
  std::vector<psn_column> columns_;
  std::int64_t origin_ = 0;
  unsigned shift_ = 0;
  std::uint64_t added_ = 0;  // events put in columns
};

}  // namespace scaleup::dissect

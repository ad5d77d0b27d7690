// A binary min-heap's two moves over any indexable table (a pack::table, an array): the packer's
// queues ordered by their oldest command and the SUE instance's timers are the same code. `key(e)`
// orders the entries; `placed(i)` hears where each entry it moved landed (the instance keeps each
// timer owner's position; the packer needs none).
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstddef>

namespace scaleup::pack {

struct no_placement {
  constexpr void operator()(std::size_t) const noexcept {}
};

// x, to be stored at i or above, goes up past every parent with a later key.
template <class Table, class Entry, class Key, class Placed = no_placement>
constexpr void heap_sift_up(Table& h, std::size_t i, const Entry& x, Key key,
                            Placed placed = {}) noexcept {
  while (i > 0) {
    const std::size_t up = (i - 1) / 2;
    if (key(h[up]) <= key(x)) break;
    h[i] = h[up];
    placed(i);
    i = up;
  }
  h[i] = x;
  placed(i);
}

// x, to be stored at i or below in a heap of n entries, goes down past every child with an
// earlier key (the earlier of the two).
template <class Table, class Entry, class Key, class Placed = no_placement>
constexpr void heap_sift_down(Table& h, std::size_t n, std::size_t i, const Entry& x, Key key,
                              Placed placed = {}) noexcept {
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && key(h[c + 1]) < key(h[c])) ++c;
    if (key(x) <= key(h[c])) break;
    h[i] = h[c];
    placed(i);
    i = c;
  }
  h[i] = x;
  placed(i);
}

}  // namespace scaleup::pack

// The custom mutator and cross-over of the targets whose input is a selector byte (link type and
// options, each target's own) and then a frame: the frame goes through sue_mutator as a frame of
// the link type the selector names, read with the options it names, so that it stays a SUE frame
// with a good R-CRC; now and then the selector itself changes. Included by exactly one
// translation unit of a target, which defines selected_frame_config: this header then defines
// the target's LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver. Those three are outside the
// include guard: where several targets are compiled as one translation unit (the replay program,
// fuzz/CMakeLists.txt), each includes this header under names of its own for them.
#ifndef SCALEUP_FUZZ_SELECTED_FRAME_HPP
#define SCALEUP_FUZZ_SELECTED_FRAME_HPP

#include <cstddef>
#include <cstdint>

#include "scaleup/fuzz/sue_mutator.hpp"

namespace scaleup::fuzz {

inline sue_mutator& selected_frame_mutator() {
  static sue_mutator m;
  return m;
}

// `cfg`: the link type and reading options the selector data[0] names (the target's decoding).
inline std::size_t mutate_selected_frame(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                         unsigned seed, const mutator_config& cfg) {
  if (max_size < 2) return size;
  if (size == 0) data[size++] = 0;
  mutation_rng r(seed);
  if (r.one_in(32)) {
    data[0] = static_cast<std::uint8_t>(r());
    return size;
  }
  sue_mutator& m = selected_frame_mutator();
  m.config() = cfg;
  return 1 + m.mutate_frame(data + 1, size - 1, max_size - 1, seed);
}

// a's selector, then a's frame crossed with b's (sue_mutator::cross_over_frame).
inline std::size_t cross_over_selected_frame(const std::uint8_t* a, std::size_t a_size,
                                             const std::uint8_t* b, std::size_t b_size,
                                             std::uint8_t* out, std::size_t max_out, unsigned seed,
                                             const mutator_config& cfg) {
  if (a_size == 0 || b_size == 0 || max_out < 2) return 0;
  sue_mutator& m = selected_frame_mutator();
  m.config() = cfg;
  out[0] = a[0];
  return 1 +
         m.cross_over_frame({a + 1, a_size - 1}, {b + 1, b_size - 1}, out + 1, max_out - 1, seed);
}

}  // namespace scaleup::fuzz

#endif

namespace scaleup::fuzz {
// The link type and reading options the selector byte names (the target's decoding).
mutator_config selected_frame_config(std::uint8_t selector);
}  // namespace scaleup::fuzz

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned seed) {
  return scaleup::fuzz::mutate_selected_frame(
      data, size, max_size, seed, scaleup::fuzz::selected_frame_config(size ? data[0] : 0));
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* a, std::size_t a_size,
                                                 const std::uint8_t* b, std::size_t b_size,
                                                 std::uint8_t* out, std::size_t max_out,
                                                 unsigned seed) {
  return scaleup::fuzz::cross_over_selected_frame(
      a, a_size, b, b_size, out, max_out, seed,
      scaleup::fuzz::selected_frame_config(a_size ? a[0] : 0));
}

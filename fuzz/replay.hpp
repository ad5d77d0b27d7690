// The replay driver's view of the fuzz targets it is built with: each target's libFuzzer entry
// points under a name of its own (fuzz/CMakeLists.txt renames them when it compiles the targets
// together), so that one program replays them all.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scaleup::fuzz {

struct replay_target {
  const char* name;
  int (*test_one_input)(const std::uint8_t* data, std::size_t size);
  // Null where the target has none.
  std::size_t (*custom_mutator)(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                unsigned int seed);
  std::size_t (*custom_cross_over)(const std::uint8_t* data1, std::size_t size1,
                                   const std::uint8_t* data2, std::size_t size2, std::uint8_t* out,
                                   std::size_t max_out_size, unsigned int seed);
};

// Defined by the generated list of the targets, or by replay.cpp itself around the one target
// of a program built without that list.
extern const replay_target replay_targets[];
extern const std::size_t replay_target_count;

}  // namespace scaleup::fuzz

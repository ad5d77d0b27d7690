// A libFuzzer target around a SUE receiver of your own (receiver.cpp stands in for it), with the
// structure-aware mutator: the code the README shows, line for line. Built with clang
// (-fsanitize=fuzzer) it is a fuzzer; built with any compiler against fuzz/replay.cpp it runs the
// mutator over the seeds without libFuzzer (the test suite does both).
// README: begin
#include <cstddef>
#include <cstdint>
#include <scaleup/fuzz/sue_mutator.hpp>
#include <span>

bool my_receiver(std::span<const std::uint8_t> frame);  // yours: one Ethernet frame

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  my_receiver({data, size});
  return 0;
}

// Each mutation keeps the RH, the lengths and the R-CRC right (one in 16 breaks one on purpose).
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  static scaleup::fuzz::sue_mutator mutator;  // its buffers: no heap
  return mutator.mutate_frame(data, size, max_size, seed);
}
// README: end

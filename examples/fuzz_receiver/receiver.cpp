// Stands in for your SUE receiver in the fuzzing example (fuzz_target.cpp): it drops a frame
// unless the frame holds a SUE PDU whose R-CRC is good, then walks its commands, the code behind
// that check that a fuzzer should reach. It counts how many frames got that far and prints the
// counts when the program ends, so that the test sees what the mutator does.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/receive.hpp>
#include <span>

namespace {

struct tally {
  std::uint64_t frames = 0, past_rcrc = 0, commands = 0;
  ~tally() {
    std::printf("receiver: %" PRIu64 " frames, %" PRIu64 " past the R-CRC check, %" PRIu64
                " commands\n",
                frames, past_rcrc, commands);
  }
} counts;

}  // namespace

bool my_receiver(std::span<const std::uint8_t> frame) {
  using namespace scaleup;
  ++counts.frames;
  const wire::received_frame f =
      pack::read_frame(frame, wire::link_ethernet, &pack::default_profile);
  if (!f.accepted()) return false;
  ++counts.past_rcrc;
  pack::unpacker u(pack::default_profile, f.payload);
  for (pack::command_view c; u.next(c);) ++counts.commands;
  return !u.error_found();
}

// The command unpacker over the default profile: every command it yields lies within the
// payload, in order, and the counts add up.
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scaleup;
  const wire::bytes payload(data, size);
  pack::unpacker u(pack::default_profile, payload);
  pack::command_view c{};
  std::size_t n = 0;
  std::size_t total = 0;
  const std::uint8_t* last = data;
  while (u.next(c)) {
    ++n;
    fuzz::check(n <= size, "unpacker: more commands than bytes");
    fuzz::check(c.size() <= size, "unpacker: command larger than the payload");
    if (!c.control.empty()) {
      fuzz::check(c.control.data() >= last, "unpacker: commands out of order");
      fuzz::check(c.control.data() + c.control.size() <= data + size,
                  "unpacker: control past the payload");
      last = c.control.data();
    }
    if (!c.data.empty())
      fuzz::check(c.data.data() + c.data.size() <= data + size, "unpacker: data past the payload");
    fuzz::check(c.offset == total, "unpacker: a gap between commands");
    total += c.size();
    (void)c.code();
  }
  fuzz::check(!u.next(c), "unpacker: a command after the end");
  fuzz::check(u.consumed() == total, "unpacker: consumed differs from the commands' sizes");
  if (!u.error_found())
    fuzz::check(total + u.padding() == size, "unpacker: bytes left over without an error");
  else
    fuzz::check(total < size, "unpacker: an error with nothing left to read");
  fuzz::check(u.count() == n, "unpacker: count differs from the commands yielded");
  fuzz::check(u.consumed() <= size, "unpacker: consumed more than the payload");
  return 0;
}

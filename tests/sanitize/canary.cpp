// The sanitizer build's own check (SCALEUP_SANITIZE, tests sanitize.canary.*): each mode makes
// the mistake the sanitizers are there to catch, and the test passes only on their report, so a
// build that lost its flags or its runtime options fails instead of passing everything.
//   canary heap   reads one byte past a heap allocation (AddressSanitizer)
//   canary ub     overflows a signed int (UndefinedBehaviorSanitizer)
#include <climits>
#include <cstring>
#include <memory>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  volatile int n = 8;
  if (std::strcmp(argv[1], "heap") == 0) {
    const auto p = std::make_unique<unsigned char[]>(static_cast<std::size_t>(n));
    const volatile unsigned char past = p[static_cast<std::size_t>(n)];
    return past == 0 ? 0 : 1;
  }
  if (std::strcmp(argv[1], "ub") == 0) {
    volatile int big = INT_MAX;
    const volatile int sum = big + n;
    return sum < 0 ? 0 : 1;
  }
  return 2;
}

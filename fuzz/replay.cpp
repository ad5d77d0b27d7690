// Runs a fuzz target's LLVMFuzzerTestOneInput over every file in the directories (or files)
// given on the command line, so the targets build and run without libFuzzer (any compiler).
// Built with one target, as a user builds theirs: `PROGRAM [--mutate N] DIR|FILE...`. Built with
// SCALEUP_FUZZ_REPLAY_TARGETS, as fuzz_replay_all, the program holds the generated list of the
// library's targets (replay.hpp) and the first argument names the one to run.
// With `--mutate N`, a target that has a custom mutator (LLVMFuzzerCustomMutator) also gets
// N inputs made from each file by one to five mutations, each one run, as libFuzzer makes them (its
// LLVMFuzzerMutate is absent here: the mutator uses its own byte mutator), and a cross-over of
// each file with the next where the target has LLVMFuzzerCustomCrossOver.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "replay.hpp"

#ifndef SCALEUP_FUZZ_REPLAY_TARGETS
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Declared weak: a target without them leaves them null.
extern "C" [[gnu::weak]] std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                                             std::size_t max_size,
                                                             unsigned int seed);
extern "C" [[gnu::weak]] std::size_t LLVMFuzzerCustomCrossOver(
    const std::uint8_t* data1, std::size_t size1, const std::uint8_t* data2, std::size_t size2,
    std::uint8_t* out, std::size_t max_out_size, unsigned int seed);

namespace scaleup::fuzz {
const replay_target replay_targets[] = {
    {"", LLVMFuzzerTestOneInput, LLVMFuzzerCustomMutator, LLVMFuzzerCustomCrossOver}};
const std::size_t replay_target_count = 1;
}  // namespace scaleup::fuzz
#endif

namespace {

#ifdef SCALEUP_FUZZ_REPLAY_TARGETS
constexpr bool named_targets = true;
#else
constexpr bool named_targets = false;
#endif

using scaleup::fuzz::replay_target;

using byte_vector = std::vector<std::uint8_t>;

bool read_file(const std::filesystem::path& p, byte_vector& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.string().c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  out.assign(bytes.begin(), bytes.end());
  return true;
}

// A copy of exactly the input's size, so that reads past the end are caught by sanitizers.
void run(const replay_target& t, const std::uint8_t* data, std::size_t size) {
  const byte_vector copy(data, data + size);
  t.test_one_input(copy.empty() ? nullptr : copy.data(), copy.size());
}

// libFuzzer's limit on an input: 4096 bytes, or the largest seed's size.
std::size_t max_len(std::size_t size) { return std::max<std::size_t>(4096, size); }

// As libFuzzer mutates: each input from a seed, one to five mutations stacked.
std::size_t mutate_all(const replay_target& t, const std::vector<byte_vector>& inputs,
                       unsigned rounds) {
  std::size_t mutated = 0;
  auto seed = 0u;
  for (std::size_t f = 0; f < inputs.size(); ++f) {
    const std::size_t limit = max_len(inputs[f].size());
    byte_vector buf(limit);
    for (unsigned r = 0; r < rounds; ++r) {
      std::copy(inputs[f].begin(), inputs[f].end(), buf.begin());
      std::size_t size = inputs[f].size();
      for (unsigned depth = 0; depth <= r % 5; ++depth) {
        size = t.custom_mutator(buf.data(), size, limit, seed++);
        if (size > limit) {
          std::fprintf(stderr, "replay: the custom mutator wrote %zu bytes of %zu\n", size, limit);
          std::abort();
        }
      }
      run(t, buf.data(), size);
      ++mutated;
    }
    if (t.custom_cross_over && f + 1 < inputs.size()) {
      const byte_vector& b = inputs[f + 1];
      byte_vector out(limit);
      const std::size_t n =
          t.custom_cross_over(inputs[f].data(), inputs[f].size(), b.data(), b.size(), out.data(),
                              out.size(), static_cast<unsigned>(f));
      if (n > out.size()) {
        std::fprintf(stderr, "replay: the cross-over wrote %zu bytes of %zu\n", n, out.size());
        std::abort();
      }
      run(t, out.data(), n);
      ++mutated;
    }
  }
  return mutated;
}

const replay_target* find_target(const char* name) {
  for (std::size_t i = 0; i < scaleup::fuzz::replay_target_count; ++i)
    if (std::strcmp(scaleup::fuzz::replay_targets[i].name, name) == 0)
      return &scaleup::fuzz::replay_targets[i];
  return nullptr;
}

int usage(const char* program) {
  if (!named_targets) {
    std::fprintf(stderr, "usage: %s [--mutate N] DIR|FILE...\n", program);
    return 2;
  }
  std::fprintf(stderr, "usage: %s TARGET [--mutate N] DIR|FILE...\ntargets:", program);
  for (std::size_t i = 0; i < scaleup::fuzz::replay_target_count; ++i)
    std::fprintf(stderr, " %s", scaleup::fuzz::replay_targets[i].name);
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const replay_target* target = &scaleup::fuzz::replay_targets[0];
  int first = 1;
  if (named_targets) {
    if (argc < 2) return usage(argv[0]);
    target = find_target(argv[1]);
    if (!target) {
      std::fprintf(stderr, "replay: no target named %s\n", argv[1]);
      return usage(argv[0]);
    }
    first = 2;
  }
  const replay_target& t = *target;
  unsigned rounds = 0;
  if (argc > first + 1 && std::strcmp(argv[first], "--mutate") == 0) {
    rounds = static_cast<unsigned>(std::strtoul(argv[first + 1], nullptr, 10));
    first += 2;
    if (!t.custom_mutator || rounds == 0) {
      std::fprintf(stderr,
                   "replay: --mutate needs a count above 0 and a target with a custom "
                   "mutator\n");
      return 2;
    }
  }
  if (argc <= first) return usage(argv[0]);
  std::vector<std::filesystem::path> files;
  bool ok = true;
  for (int i = first; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg, ec))
        if (e.is_regular_file()) found.push_back(e.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      ok = false;
    }
  }
  std::vector<byte_vector> inputs;
  for (const auto& f : files) {
    byte_vector data;
    if (!read_file(f, data)) {
      ok = false;
      continue;
    }
    run(t, data.data(), data.size());
    inputs.push_back(std::move(data));
  }
  // The empty input too: every target must cope with it.
  t.test_one_input(nullptr, 0);
  std::printf("replayed %zu inputs\n", inputs.size());
  if (rounds) std::printf("mutated %zu inputs\n", mutate_all(t, inputs, rounds));
  return ok && !inputs.empty() ? 0 : 1;
}

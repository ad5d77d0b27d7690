// What the micro-benchmarks share (micro.cpp, baselines.cpp): how a figure is timed, and the
// table of rows that main() prints. Inline definitions: one instance in the program.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace scaleup::bench {

// Keeps a value (and what it points to) alive as far as the optimizer can tell.
template <class T>
inline void keep(const T& v) {
  __asm__ __volatile__("" : : "r"(&v) : "memory");
}
inline void clobber() { __asm__ __volatile__("" : : : "memory"); }

inline int g_runs = 7;
inline bool g_quick = false;
inline std::string g_only;  // comma-separated groups to run (for profiling one of them); empty: all

inline bool wanted(std::string_view group) {
  if (g_only.empty()) return true;
  std::string_view rest = g_only;
  while (!rest.empty()) {
    const std::size_t c = rest.find(',');
    if (rest.substr(0, c) == group) return true;
    rest = c == std::string_view::npos ? std::string_view{} : rest.substr(c + 1);
  }
  return false;
}

inline double wall_seconds(const std::function<void()>& f) {
  const auto a = std::chrono::steady_clock::now();
  f();
  const auto b = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(b - a).count();
}

inline double thread_cpu_seconds(const std::function<void()>& f) {
  const auto cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  const double a = cpu();
  f();
  return cpu() - a;
}

inline double median(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// Median wall time of `f` (seconds) over g_runs runs, after one warm-up run.
inline double median_seconds(const std::function<void()>& f) {
  f();
  std::vector<double> s;
  for (int i = 0; i < g_runs; ++i) s.push_back(wall_seconds(f));
  return median(s);
}

// Median wall times of f and of its baseline, run in turn g_runs times each after a warm-up run
// of each: on a shared machine a spell of load then falls on both, and their ratio holds where
// each figure alone swings.
struct pair_seconds {
  double value = 0;
  double baseline = 0;
};
inline pair_seconds paired_median_seconds(const std::function<void()>& f,
                                          const std::function<void()>& baseline) {
  f();
  baseline();
  std::vector<double> a, b;
  for (int i = 0; i < g_runs; ++i) {
    a.push_back(thread_cpu_seconds(f));
    b.push_back(thread_cpu_seconds(baseline));
  }
  return {median(a), median(b)};
}

// The same over CPU time (the process's): for figures per second of CPU.
inline double median_cpu_seconds(const std::function<void()>& f) {
  const auto cpu = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  f();
  std::vector<double> s;
  for (int i = 0; i < g_runs; ++i) {
    const double a = cpu();
    f();
    s.push_back(cpu() - a);
  }
  return median(s);
}

struct row {
  std::string figure;
  double value = 0;
  std::string unit;
  double baseline = 0;  // same unit
  std::string baseline_name;
  double goal = NAN;  // minimum ratio, NAN: none
  std::string goal_text;
  double ratio() const { return baseline > 0 ? value / baseline : NAN; }
  std::string met() const {
    if (std::isnan(goal)) return "-";
    return ratio() >= goal ? "yes" : "NO";
  }
};

inline std::vector<row> g_rows;

inline void add(std::string figure, double value, std::string unit, double baseline,
                std::string baseline_name, double goal = NAN, std::string goal_text = "-") {
  g_rows.push_back(row{std::move(figure), value, std::move(unit), baseline,
                       std::move(baseline_name), goal, std::move(goal_text)});
  const row& r = g_rows.back();
  std::fprintf(stderr, "  %-40s %12.2f %s (ratio %.3f)\n", r.figure.c_str(), r.value,
               r.unit.c_str(), r.ratio());
}

// memcpy of `total` bytes, in pieces of `piece` bytes, from src into dst (wrapping in dst).
inline double memcpy_seconds(const std::uint8_t* src, std::size_t total, std::uint8_t* dst,
                             std::size_t dst_size, std::size_t piece) {
  return median_seconds([&] {
    std::size_t at = 0;
    for (std::size_t i = 0; i < total; i += piece) {
      const std::size_t n = std::min(piece, total - i);
      if (at + n > dst_size) at = 0;
      std::memcpy(dst + at, src + i, n);
      at += n;
      clobber();
    }
    keep(dst[0]);
  });
}

inline constexpr double MB = 1e6;

// The groups in baselines.cpp.
void bench_frames();
void bench_packer();

}  // namespace scaleup::bench

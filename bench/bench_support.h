// What the benchmarks share: a Google Benchmark reporter that keeps every result for the summary
// a benchmark prints after its run, the allocator settings that make page faults repeatable, and
// the durable write by hand that saves are held against.
//
// Thread rules: the reporter is called by Google Benchmark on the main thread only.

#ifndef ROLLY_BENCH_BENCH_SUPPORT_H_
#define ROLLY_BENCH_BENCH_SUPPORT_H_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace rolly::bench {

// Shows the console what a person reads (each run, or the median of repetitions) and keeps
// every result for the summary, in seconds per iteration.
class CapturingReporter : public benchmark::ConsoleReporter {
 public:
  // Which time the results keep: CPU time of the benchmark's thread, or wall time (for work done
  // on other threads or waiting on a disk).
  enum class Time { kCpu, kReal };
  explicit CapturingReporter(Time time) : time_(time) {}

  void ReportRuns(const std::vector<Run>& runs) override;

  bool errors() const { return errors_; }
  // Seconds per iteration (the best repetition), or 0 when the benchmark did not run.
  double Seconds(const std::string& name) const;
  // Seconds per iteration in the worst repetition, or 0.
  double Worst(const std::string& name) const;
  // Spread across repetitions: worst over best, 1 when there was one run.
  double Spread(const std::string& name) const;

 private:
  struct Result {
    double best = 0;
    double worst = 0;
    int count = 0;
  };
  const Time time_;
  std::map<std::string, Result> results_;
  std::map<std::string, double> median_;
  bool errors_ = false;
};

// Initializes Google Benchmark with `defaults` (such as "--benchmark_min_time=0.1") placed before
// the command line's own flags, which therefore win. False when a flag is not recognized (the
// message is printed).
bool InitializeWithDefaults(int argc, char** argv, const std::vector<std::string>& defaults);

// splitmix64: a small, fast generator that gives the same numbers on every platform, for seeded
// benchmark data.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // A number below `n`, true one time in `n`, a float in [lo, hi).
  std::uint32_t Below(std::uint32_t n) { return static_cast<std::uint32_t>(Next() % n); }
  bool OneIn(std::uint32_t n) { return Below(n) == 0; }
  float Float(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(Next() >> 40) / static_cast<float>(1 << 24);
  }

 private:
  std::uint64_t state_;
};

// A number for a summary table printed with `format`, or "-" when it was not measured (<= 0).
std::string Cell(double value, const char* format);
// "PASS" or "MISS" for a measured `value` against `target` (at least it, or at most it); empty
// when it was not measured.
const char* Mark(double value, double target, bool at_least);

// Makes `pieces`, one after another, durable by hand as the file `target` of the folder `dir`, as a
// careful writer does: open a temporary file beside it, write every piece, fsync, close, rename it
// over `target`, then open the folder, fsync it and close it. False when any step failed.
bool WriteDurablyByHand(const std::string& dir, const std::string& target,
                        std::span<const std::vector<std::uint8_t>> pieces);

// Keeps glibc from returning large blocks to the system between iterations, so whether an
// iteration pays page faults does not depend on what happened to sit at the top of the heap.
void TuneAllocator();

// When this machine is a virtual machine that hands free memory back to its host in blocks under
// 4 MiB (the Linux virtio-balloon driver's free page reporting), a paragraph saying so, for a
// summary to print; empty otherwise. Such a host takes back blocks of free pages about two seconds
// after they were freed, and the guest pays a fault for each page when it uses them again. On the
// development VM a 16 MiB write() took 25-35 ms instead of 5 ms after 3 s of waiting, and 5 ms
// again with reporting raised to 4 MiB blocks; large-file timings swing with it.
std::string FreePageReportingNote();

}  // namespace rolly::bench

#endif  // ROLLY_BENCH_BENCH_SUPPORT_H_

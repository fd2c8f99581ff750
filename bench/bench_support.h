// What the benchmarks share: a Google Benchmark reporter that keeps every result for the summary
// a benchmark prints after its run, and the allocator settings that make page faults repeatable.
//
// Thread rules: the reporter is called by Google Benchmark on the main thread only.

#ifndef ROLLY_BENCH_BENCH_SUPPORT_H_
#define ROLLY_BENCH_BENCH_SUPPORT_H_

#include <benchmark/benchmark.h>

#include <map>
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

// Keeps glibc from returning large blocks to the system between iterations, so whether an
// iteration pays page faults does not depend on what happened to sit at the top of the heap.
void TuneAllocator();

}  // namespace rolly::bench

#endif  // ROLLY_BENCH_BENCH_SUPPORT_H_

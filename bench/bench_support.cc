// The benchmarks' shared reporter and allocator settings.

#include "bench_support.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace rolly::bench {

void CapturingReporter::ReportRuns(const std::vector<Run>& runs) {
  std::vector<Run> shown;
  for (const Run& r : runs) {
    if (r.error_occurred) {
      errors_ = true;
      shown.push_back(r);
      continue;
    }
    const double time = time_ == Time::kCpu ? r.GetAdjustedCPUTime() : r.GetAdjustedRealTime();
    const double seconds = time / benchmark::GetTimeUnitMultiplier(r.time_unit);
    const std::string& name = r.run_name.function_name;
    if (r.run_type == Run::RT_Iteration) {
      Result& res = results_[name];
      res.best = res.best == 0 ? seconds : std::min(res.best, seconds);
      res.worst = std::max(res.worst, seconds);
      ++res.count;
      if (r.repetitions <= 1) shown.push_back(r);
    } else if (r.aggregate_name == "median") {
      median_[name] = seconds;
      shown.push_back(r);
    }
  }
  if (!shown.empty()) ConsoleReporter::ReportRuns(shown);
}

double CapturingReporter::Seconds(const std::string& name) const {
  if (auto it = results_.find(name); it != results_.end()) return it->second.best;
  if (auto it = median_.find(name); it != median_.end()) return it->second;
  return 0;
}

double CapturingReporter::Worst(const std::string& name) const {
  auto it = results_.find(name);
  return it == results_.end() ? 0 : it->second.worst;
}

double CapturingReporter::Spread(const std::string& name) const {
  auto it = results_.find(name);
  return it == results_.end() || it->second.best == 0 ? 1 : it->second.worst / it->second.best;
}

bool InitializeWithDefaults(int argc, char** argv, const std::vector<std::string>& defaults) {
  std::vector<std::string> owned(defaults);
  std::vector<char*> args;
  args.push_back(argv[0]);
  for (std::string& d : owned) args.push_back(d.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  return !benchmark::ReportUnrecognizedArguments(n, args.data());
}

std::string Cell(double value, const char* format) {
  if (value <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

const char* Mark(double value, double target, bool at_least) {
  if (value <= 0) return "";
  return (at_least ? value >= target : value <= target) ? "PASS" : "MISS";
}

void TuneAllocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

std::string FreePageReportingNote() {
  // The driver is bound to a device, and the kernel reports free blocks of 2^order pages.
  const std::filesystem::path driver = "/sys/bus/virtio/drivers/virtio_balloon";
  const std::filesystem::path order_file = "/sys/module/page_reporting/parameters/page_reporting_order";
  std::error_code ec;
  bool bound = false;
  for (std::filesystem::directory_iterator it(driver, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().filename().string().rfind("virtio", 0) == 0) bound = true;
  }
  std::ifstream in(order_file);
  int order = -1;
  // At 4 MiB blocks (order 10, the largest) the effect no longer showed in these benchmarks.
  if (!bound || !(in >> order) || order < 0 || order >= 10) return "";
  const double block_mib = static_cast<double>(std::size_t{4096} << order) / (1024.0 * 1024.0);
  char text[768];
  std::snprintf(text, sizeof text,
                "Note: this machine hands free memory back to its host (virtio-balloon free page\n"
                "reporting, blocks of %g MiB): a large buffered write that lands on pages the host\n"
                "took back copies 3-5x slower. Either side of a pair can land on them (here the\n"
                "store's, which writes from its I/O thread, did more often than the peer's, which\n"
                "writes from the calling thread). To measure without it, as root:\n"
                "  echo 10 > %s\n"
                "(4 MiB blocks; put back %d after).\n",
                block_mib, order_file.c_str(), order);
  return text;
}

}  // namespace rolly::bench

// The benchmarks' shared reporter and allocator settings.

#include "bench_support.h"

#include <fcntl.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

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

namespace {

bool WriteAll(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool WriteDurablyByHand(const std::string& dir, const std::string& target,
                        std::span<const std::vector<std::uint8_t>> pieces) {
  const std::string temp = target + ".tmp";
  const int fd = ::open(temp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (const std::vector<std::uint8_t>& piece : pieces) ok = ok && WriteAll(fd, piece);
  ok = ok && ::fsync(fd) == 0;
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(temp.c_str(), target.c_str()) == 0;
  const int dfd = ok ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  ok = ok && dfd >= 0 && ::fsync(dfd) == 0;
  if (dfd >= 0) ok = ::close(dfd) == 0 && ok;
  return ok;
}

void TuneAllocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

std::string FreePageReportingNote() {
  // A balloon device bound to the driver offers free page reporting (feature bit 5,
  // VIRTIO_BALLOON_F_REPORTING: "features" lists the bits as '0'/'1' from bit 0), and the kernel
  // reports free blocks of 2^order pages.
  constexpr const char* kOrderFile = "/sys/module/page_reporting/parameters/page_reporting_order";
  std::error_code ec;
  bool reporting = false;
  for (std::filesystem::directory_iterator it("/sys/bus/virtio/drivers/virtio_balloon", ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("virtio", 0) != 0) continue;
    std::ifstream features(it->path() / "features");
    std::string bits;
    if (features >> bits && bits.size() > 5 && bits[5] == '1') reporting = true;
  }
  std::ifstream in(kOrderFile);
  int order = -1;
  // Blocks of 4 MiB and more (order 10 with 4 KiB pages, the largest x86-64 has) no longer showed
  // the effect in these benchmarks.
  const long page = ::sysconf(_SC_PAGESIZE);
  if (!reporting || !(in >> order) || order < 0 || order > 20 || page <= 0) return "";
  const double block_mib = static_cast<double>(page) * static_cast<double>(1u << order) / 1048576.0;
  if (block_mib >= 4) return "";
  char text[512];
  std::snprintf(text, sizeof text,
                "Note: this machine hands free memory back to its host (virtio-balloon free\n"
                "page reporting, blocks of %g MiB): a large buffered write that lands on pages\n"
                "the host took back copies several times slower into the page cache. To measure\n"
                "without it, as root:\n  echo 10 > %s\n(4 MiB blocks; put back %d after).\n",
                block_mib, kOrderFile, order);
  return text;
}

}  // namespace rolly::bench

// The conformance suite (backend_conformance.h) against the backends of the library: memory,
// folder on the disk, folder on the simulated file system, and the fault backend with no faults.
// Database backends run it from their own test binaries (postgres/).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rolly/store/backend.h"
#include "rolly/store/backend_conformance.h"
#include "rolly/store/fault_backend.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/simulated_file_system.h"
#include "rolly/store/store_test_util.h"

namespace rolly::store::conformance {
namespace {

class Memory : public BackendUnderTest {
 public:
  Backend& backend() override { return backend_; }

 private:
  MemoryBackend backend_;
};

class FolderOnDisk : public BackendUnderTest {
 public:
  FolderOnDisk() : backend_(dir_.path() + "/saves") {}
  Backend& backend() override { return backend_; }

 private:
  TempDir dir_;
  FolderBackend backend_;  // after dir_: destroyed before the directory is removed
};

class FolderOnSimulated : public BackendUnderTest {
 public:
  FolderOnSimulated()
      : fs_(std::make_shared<SimulatedFileSystem>()),
        backend_("/games/rolly/saves", FolderBackendOptions{fs_}) {}
  Backend& backend() override { return backend_; }

 private:
  std::shared_ptr<SimulatedFileSystem> fs_;
  FolderBackend backend_;
};

class FaultOverMemory : public BackendUnderTest {
 public:
  FaultOverMemory() : fault_(&memory_) {}
  Backend& backend() override { return fault_; }

 private:
  MemoryBackend memory_;
  FaultBackend fault_;  // after memory_: destroyed first
};

template <typename T>
BackendFactory Factory(std::string name) {
  return {std::move(name), [] { return std::unique_ptr<BackendUnderTest>(std::make_unique<T>()); }};
}

// Every backend of the library. A database backend instantiates the suite in its own binary.
std::vector<BackendFactory> LibraryBackends() {
  return {
      Factory<Memory>("Memory"),
      Factory<FolderOnDisk>("FolderOnPosix"),
      Factory<FolderOnSimulated>("FolderOnSimulated"),
      Factory<FaultOverMemory>("FaultWithoutFaultsOverMemory"),
  };
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendConformanceTest,
                         ::testing::ValuesIn(LibraryBackends()), BackendFactoryName);

}  // namespace
}  // namespace rolly::store::conformance

// Fuzz target for applying records (rolly::record::Applier): bytes that DecodePayload accepts
// (its structure check ran on every record) are applied record by record to fresh objects of a
// registered test class that holds every value type (record_fixture_scene.h's Thing: owned
// objects, references, property bags, instanced structs, save-extra hooks...), then OnLoaded runs.
// Apply must never fail part way: each record applies (Ok) or is refused whole (InvalidInput, a
// record of another class). The same payload is then applied again onto the loaded objects, so
// owned objects already there are applied into.
//
// Seeds: the golden record payloads (tests/fixtures/records/) and small edge cases.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/record/record_codec.h"
#include "rolly/record/record_fixture_scene.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

const rolly::record::fixture::SceneTypes& Types() {
  static const auto* types = [] {
    auto* t = new rolly::record::fixture::SceneTypes();
    if (!t->status().ok()) Fail("test classes did not register: " + t->status().ToString());
    return t;
  }();
  return *types;
}

void CheckApplied(const rolly::Status& s) {
  if (!s.ok() && s.code() != rolly::StatusCode::kInvalidInput) {
    Fail("Apply of a checked record failed: " + s.ToString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rolly::record;
  const rolly::Result<Payload> p = DecodePayload(rolly::ByteView(data, size));
  if (!p.ok()) return 0;
  fixture::World world;
  for (const Record& r : p->records) {
    if (!IsKnownObjectKind(r.kind)) continue;
    world.entries.push_back(
        {r.subject, static_cast<RecordKind>(r.kind), std::make_unique<fixture::Thing>()});
  }
  std::vector<std::string> messages;
  CheckApplied(fixture::ApplyPayload(Types(), *p, &world, &messages));
  CheckApplied(fixture::ApplyPayload(Types(), *p, &world, &messages));
  return 0;
}

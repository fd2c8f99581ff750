// Fuzz target for rolly::record::DecodePayload (docs/records.md): any bytes must be refused as
// Damaged or NewerVersion, leaving the file budget as it was, or decode; a payload that decodes
// must encode back to exactly the same bytes ("One form"), and each of its records must give a
// value tree (DecodeProp, which runs the structure check again on its own) that encodes back to
// the record's PROP and INLN bytes; a record of a kind this version does not know is InvalidInput.
// DecodePayload passes most records by their layouts' check programs while DecodeProp walks every
// value, so a record a program passes and the walk refuses stops the fuzzer here too.
//
// Seeds: the golden record payloads (tests/fixtures/records/) and small edge cases.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/record_codec.h"
#include "rolly/record/value_tree.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

void CheckRecord(const rolly::record::Payload& p, std::size_t i) {
  using namespace rolly::record;
  const Record& r = p.records[i];
  const rolly::Result<Value> tree = DecodeProp(p.tables, r, &p.records);
  if (!IsKnownObjectKind(r.kind)) {
    if (tree.status().code() != rolly::StatusCode::kInvalidInput) {
      Fail("DecodeProp of a record of unknown kind " + std::to_string(r.kind) + " gave " +
           tree.status().ToString());
    }
    return;
  }
  if (!tree.ok()) {
    Fail("record " + std::to_string(i + 1) + " decoded in its payload but DecodeProp says " +
         tree.status().ToString());
  }
  ChunkTables tables = p.tables;
  const rolly::Result<EncodedValues> values = EncodeProp(&tables, r.layout, *tree);
  if (!values.ok()) {
    Fail("EncodeProp refused record " + std::to_string(i + 1) +
         "'s own tree: " + values.status().ToString());
  }
  if (values->prop != r.Find(kPropSection)->bytes) {
    Fail("record " + std::to_string(i + 1) + ": the value tree encodes to other PROP bytes");
  }
  const Section* owned = r.Find(kOwnedSection);
  if (values->owned.has_value() != (owned != nullptr) ||
      (owned != nullptr && *values->owned != owned->bytes)) {
    Fail("record " + std::to_string(i + 1) + ": the value tree encodes to other INLN bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rolly::record;
  const rolly::ByteView bytes(data, size);
  FileBudget budget;
  const rolly::Result<Payload> p = DecodePayload(bytes, &budget);
  if (!p.ok()) {
    if (p.status().code() != rolly::StatusCode::kDamaged &&
        p.status().code() != rolly::StatusCode::kNewerVersion) {
      Fail("DecodePayload returned " + p.status().ToString());
    }
    if (!(budget == FileBudget())) Fail("a refused payload changed the budget");
    return 0;
  }
  const rolly::Result<rolly::Bytes> again = EncodePayload(*p);
  if (!again.ok())
    Fail("EncodePayload refused what DecodePayload accepted: " + again.status().ToString());
  if (again->size() != size || (size != 0 && std::memcmp(again->data(), data, size) != 0)) {
    Fail("DecodePayload accepted " + std::to_string(size) +
         " bytes that EncodePayload gives back as " + std::to_string(again->size()) +
         " other bytes");
  }
  for (std::size_t i = 0; i < p->records.size(); ++i) CheckRecord(*p, i);
  return 0;
}

// Test support for the record tests (not installed): object links told by hand (locating at once,
// or in two steps), a check of two table marks, and a check of what an apply reads of a payload.

#ifndef ROLLY_RECORD_INTERNAL_TESTING_H_
#define ROLLY_RECORD_INTERNAL_TESTING_H_

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "rolly/core/guid.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/links.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

// Object links held in two lists, told by hand where each live object is saved and which live
// object each subject is.
class TestLinks : public ObjectLinks {
 public:
  void Save(const void* object, LinkTarget target) { saved_.emplace_back(object, target); }
  void Live(Guid id, void* object) { live_.emplace_back(id, object); }

  std::optional<LinkTarget> Locate(const reflect::ClassInfo&, const void* object) override {
    return Find(object);
  }
  void* Resolve(Guid id, const reflect::ClassInfo&) override {
    for (const auto& [g, o] : live_) {
      if (g == id) return o;
    }
    return nullptr;
  }

 protected:
  std::optional<LinkTarget> Find(const void* object) const {
    for (const auto& [o, t] : saved_) {
      if (o == object) return t;
    }
    return std::nullopt;
  }

 private:
  std::vector<std::pair<const void*, LinkTarget>> saved_;
  std::vector<std::pair<Guid, void*>> live_;
};

// The same links, locating in two steps: Identify names an object by its address plus one (so a
// test sees the name travel, not the pointer), LocateIdentified finds it; objects in `at_once`
// are not named, so copies locate them at once. Each call is counted.
class TwoStepLinks : public TestLinks {
 public:
  std::optional<LinkTarget> Locate(const reflect::ClassInfo& cls, const void* object) override {
    ++located;
    return TestLinks::Locate(cls, object);
  }
  const void* Identify(const reflect::ClassInfo&, const void* object) override {
    for (const void* o : at_once) {
      if (o == object) return nullptr;
    }
    ++identified;
    return static_cast<const char*>(object) + 1;
  }
  std::optional<LinkTarget> LocateIdentified(const void* identity) override {
    ++located_identified;
    return Find(static_cast<const char*>(identity) - 1);
  }

  // Objects Identify names none of: the copy locates them at once.
  std::vector<const void*> at_once;
  int located = 0;
  int identified = 0;
  int located_identified = 0;
};

// Expects the two marks of a chunk's tables to be the same (nothing was added between them).
inline void ExpectSameMark(const ChunkTables::Mark& a, const ChunkTables::Mark& b) {
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.types, b.types);
  EXPECT_EQ(a.layouts, b.layouts);
  EXPECT_EQ(a.bag_layouts, b.bag_layouts);
  EXPECT_EQ(a.refs, b.refs);
}

// PartsToApply of payload `bytes` checked in order and in two halves, against its decoded
// records: PROP, INLN and XTRA exactly as each record has them; nothing for an unknown kind.
inline void ExpectPartsToApplyAsDecoded(const Bytes& bytes) {
  Result<Payload> decoded = DecodePayload(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const CheckedPayload::Post at_once = [](std::function<void()> task) { task(); };
  Result<CheckedPayload> in_order = CheckedPayload::Check(bytes);
  Result<CheckedPayload> halves = CheckedPayload::Check(bytes, nullptr, {}, at_once, 0);
  ASSERT_TRUE(in_order.ok() && halves.ok());
  for (const CheckedPayload* checked : {&*in_order, &*halves}) {
    ASSERT_EQ(checked->size(), decoded->records.size());
    for (std::size_t i = 0; i < checked->size(); ++i) {
      const Record& want = decoded->records[i];
      const CheckedPayload::AppliedParts parts = checked->PartsToApply(i);
      if (!IsKnownObjectKind(want.kind)) {
        EXPECT_EQ(parts.has, 0u) << i;
        continue;
      }
      const SectionId ids[] = {kPropSection, kOwnedSection, kExtraSection};
      const ByteView views[] = {parts.prop, parts.owned, parts.extra};
      for (std::size_t k = 0; k < 3; ++k) {
        const Section* s = want.Find(ids[k]);
        EXPECT_EQ((parts.has >> k & 1) != 0, s != nullptr) << i << " " << k;
        const Bytes got(views[k].begin(), views[k].end());
        EXPECT_EQ(got, s != nullptr ? s->bytes : Bytes()) << i << " " << k;
      }
    }
  }
}

}  // namespace rolly::record

#endif  // ROLLY_RECORD_INTERNAL_TESTING_H_

// Mutation test of the record payload decoder: 3,000 seeded edits (1-3 changed bytes,
// truncations, insertions) of the richest golden scene (record_fixture_scene.h). Each edited
// payload is either refused by DecodePayload as Damaged or NewerVersion, leaving the budget and
// every live object as they were, or it decodes, encodes back to exactly its bytes, its records
// give value trees, and every record applies without failing part way (the sanitizer build runs
// this too: make sanitize).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status_matchers.h"
#include "rolly/record/record_codec.h"
#include "rolly/record/record_fixture_scene.h"
#include "rolly/record/value_tree.h"

namespace rolly::record {
namespace {

using fixture::SceneTypes;
using fixture::World;

// A load: decode, then apply to `live` only when the whole payload decoded.
Status Load(const SceneTypes& types, ByteView bytes, World* live) {
  ROLLY_ASSIGN_OR_RETURN(const Payload p, DecodePayload(bytes));
  return fixture::ApplyPayload(types, p, live, nullptr);
}

enum class Edit { kBytes, kTruncate, kInsert };

Bytes Mutate(const Bytes& original, std::mt19937& rng, Edit* kind) {
  Bytes b = original;
  const std::uint32_t pick = rng() % 10;
  if (pick < 7) {
    *kind = Edit::kBytes;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      std::uint8_t& at = b[rng() % b.size()];
      // Half the edits flip one bit, the others write any byte.
      if (rng() % 2 == 0) {
        at ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      } else {
        at = static_cast<std::uint8_t>(rng());
      }
    }
  } else if (pick < 8) {
    *kind = Edit::kTruncate;
    b.resize(rng() % b.size());
  } else {
    *kind = Edit::kInsert;
    const std::size_t at = rng() % (b.size() + 1);
    const std::size_t n = 1 + rng() % 4;
    Bytes extra(n);
    for (auto& x : extra) x = static_cast<std::uint8_t>(rng());
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
  }
  return b;
}

TEST(RecordMutationTest, SeededEditsAreRefusedOrApplyWhole) {
  SceneTypes types;
  ASSERT_THAT(types.status(), IsOk());
  ASSERT_OK_AND_ASSIGN(World scene, fixture::BuildScene(types, "scene"));
  ASSERT_OK_AND_ASSIGN(const Bytes original, fixture::CaptureScene(types, "scene", &scene));
  ASSERT_OK_AND_ASSIGN(const World expected, fixture::BuildScene(types, "scene"));

  std::mt19937 rng(20261130);
  int refused = 0, applied = 0, unchanged = 0, apply_refused = 0;
  int by_kind[3] = {0, 0, 0};
  for (int i = 0; i < 3000; ++i) {
    Edit kind = Edit::kBytes;
    const Bytes edited = Mutate(original, rng, &kind);
    if (edited == original) {
      ++unchanged;
      continue;
    }
    FileBudget budget;
    Result<Payload> p = DecodePayload(edited, &budget);
    // A checked payload (what a loaded save keeps) refuses and accepts exactly the same, with the
    // same budget, and reads the same records.
    FileBudget checked_budget;
    Result<CheckedPayload> checked = CheckedPayload::Check(edited, &checked_budget);
    EXPECT_EQ(checked.status().code(), p.status().code()) << i;
    EXPECT_EQ(checked_budget, budget) << i;
    if (p.ok() && checked.ok()) {
      ASSERT_EQ(checked->size(), p->records.size()) << i;
      for (std::size_t r = 0; r < p->records.size(); ++r) {
        EXPECT_EQ(checked->Get(r), p->records[r]) << i << " record " << r;
      }
    }
    // Checked in two halves on two threads, it says exactly what the check in order says (the
    // same status and message), and keeps the same records.
    std::vector<std::thread> helpers;
    const CheckedPayload::Post post = [&helpers](std::function<void()> task) {
      helpers.emplace_back(std::move(task));
    };
    FileBudget split_budget;
    Result<CheckedPayload> split = CheckedPayload::Check(edited, &split_budget, {}, post, 0);
    for (std::thread& t : helpers) t.join();
    EXPECT_EQ(split.status(), checked.status()) << i;
    EXPECT_EQ(split_budget, checked_budget) << i;
    if (split.ok() && checked.ok()) {
      ASSERT_EQ(split->size(), checked->size()) << i;
      for (std::size_t r = 0; r < checked->size(); ++r) {
        EXPECT_EQ(split->Get(r), checked->Get(r)) << i << " record " << r;
        EXPECT_EQ(split->subject(r), checked->subject(r)) << i << " record " << r;
      }
    }
    if (!p.ok()) {
      ++refused;
      ++by_kind[static_cast<int>(kind)];
      EXPECT_TRUE(p.status().code() == StatusCode::kDamaged ||
                  p.status().code() == StatusCode::kNewerVersion)
          << i << ": " << p.status().ToString();
      EXPECT_EQ(budget, FileBudget()) << i << ": a refused payload changed the budget";
      // A load stops at the refused decode: live objects keep their values.
      ASSERT_OK_AND_ASSIGN(World live, fixture::BuildScene(types, "scene"));
      EXPECT_EQ(Load(types, edited, &live).code(), p.status().code()) << i;
      std::string why;
      EXPECT_TRUE(fixture::SameWorld(types, expected, live, &why)) << i << ": " << why;
      continue;
    }
    ++applied;
    ASSERT_OK_AND_ASSIGN(const Bytes again, EncodePayload(*p));
    EXPECT_EQ(again, edited) << i << ": decoded but did not encode back to the same bytes";
    for (const Record& r : p->records) {
      if (IsKnownObjectKind(r.kind)) {
        EXPECT_THAT(DecodeProp(p->tables, r, &p->records), IsOk()) << i;
      }
    }
    // Onto fresh objects, and onto objects that hold the scene (owned objects applied into).
    World fresh = fixture::FreshWorld(expected);
    std::vector<std::string> messages;
    Status s = fixture::ApplyPayload(types, *p, &fresh, &messages);
    if (!s.ok()) {
      // Only a record of another class or of no object kind is refused, applying nothing.
      EXPECT_THAT(s, StatusIs(StatusCode::kInvalidInput)) << i;
      ++apply_refused;
    }
    ASSERT_OK_AND_ASSIGN(World live, fixture::BuildScene(types, "scene"));
    Status s2 = fixture::ApplyPayload(types, *p, &live, &messages);
    EXPECT_EQ(s.code(), s2.code()) << i;
  }
  std::printf(
      "record mutations: %d refused, %d decoded and applied (%d with a record refused by "
      "Apply), %d unchanged; refused by edit: bytes %d, truncation %d, insertion %d\n",
      refused, applied, apply_refused, unchanged, by_kind[0], by_kind[1], by_kind[2]);
  RecordProperty("refused", refused);
  RecordProperty("applied", applied);
  EXPECT_EQ(refused + applied + unchanged, 3000);
  EXPECT_GT(refused, 1000);
  EXPECT_GT(applied, 50);
}

// The unedited payload applies: the mutation test's baseline.
TEST(RecordMutationTest, UneditedSceneApplies) {
  SceneTypes types;
  ASSERT_THAT(types.status(), IsOk());
  ASSERT_OK_AND_ASSIGN(World scene, fixture::BuildScene(types, "scene"));
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, fixture::CaptureScene(types, "scene", &scene));
  ASSERT_OK_AND_ASSIGN(const Payload p, DecodePayload(bytes));
  World fresh = fixture::FreshWorld(scene);
  ASSERT_THAT(fixture::ApplyPayload(types, p, &fresh, nullptr), IsOk());
  std::string why;
  EXPECT_TRUE(fixture::SameWorld(types, scene, fresh, &why)) << why;
}

}  // namespace
}  // namespace rolly::record

// `rolly demo`: the main job. Builds the sample map, plays a seeded stretch of it, saves into a
// slot, starts a fresh game, loads the slot, and compares the loaded world with the saved one
// field by field (docs/cli.md, "demo").

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "rolly/core/mailbox.h"
#include "rolly/core/worker_pool.h"
#include "rolly/game/save_system.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/scene/objects.h"
#include "rolly/scene/sample_game.h"
#include "rolly/scene/scene.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/store.h"
#include "rolly/world/sections.h"
#include "rolly/world/world_diff.h"
#include "text.h"
#include "verbs.h"

namespace rolly::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kDemoMap = "maps/demo.json";
constexpr const char* kDemoSlot = "demo";

double Ms(std::chrono::nanoseconds d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Drives the mailbox until `done` or a minute passes.
bool Wait(game::SaveSystem& saves, const bool& done) {
  const auto deadline = Clock::now() + std::chrono::minutes(1);
  while (!done && Clock::now() < deadline) {
    saves.Flush(Clock::now() + std::chrono::milliseconds(50)).IgnoreError();
  }
  return done;
}

// The number of actor records (tombstones too) in a saved world.
std::size_t CountActors(const std::vector<world::WorldChunk>& chunks) {
  std::size_t n = 0;
  for (const world::WorldChunk& c : chunks) {
    if (c.id != world::kWorldChunk) continue;
    Result<record::Payload> p = record::DecodePayload(c.payload);
    if (!p.ok()) continue;
    for (const record::Record& r : p->records) {
      if (r.Find(world::kActorSection) != nullptr) ++n;
    }
  }
  return n;
}

}  // namespace

int RunDemo(const DemoOptions& options, std::FILE* out, std::FILE* err) {
  if (options.actors < 1 || options.actors > 1'000'000 || options.saves < 1 ||
      options.saves > 1000) {
    std::fprintf(err, "rolly demo: --actors is 1 to 1,000,000 and --saves 1 to 1,000\n");
    return 2;
  }
  reflect::TypeRegistry registry;
  scene::RegisterSceneTypes(registry);
  scene::RegisterSampleGame(registry);
  if (Status s = registry.Finish(); !s.ok()) {
    std::fprintf(err, "rolly demo: registering the sample game: %s\n", s.ToString().c_str());
    return 1;
  }
  const std::string map = scene::BuildSampleMap(options.actors, options.seed);
  WorkerPool workers(2);
  Mailbox mailbox;
  store::FolderBackend backend(options.dir);
  store::Store store(backend, workers, mailbox);

  // The game that saves.
  scene::Scene played(registry);
  played.AddMap(kDemoMap, map);
  if (Status s = played.Start(kDemoMap); !s.ok()) {
    std::fprintf(err, "rolly demo: starting the sample map: %s\n", s.ToString().c_str());
    return 1;
  }
  game::SaveSystem saves(store, played, registry, mailbox, workers);
  const int steps = std::max(100, options.actors / 4);
  std::fprintf(out, "Rolly Save demo: %d actors, seed %" PRIu64 ", %d save%s into %s\n",
               options.actors, options.seed, options.saves, options.saves == 1 ? "" : "s",
               options.dir.c_str());
  game::SaveOutcome last;
  for (int k = 0; k < options.saves; ++k) {
    if (Status s = scene::PlaySample(played, steps / options.saves, options.seed + k); !s.ok()) {
      std::fprintf(err, "rolly demo: playing: %s\n", s.ToString().c_str());
      return 1;
    }
    bool done = false;
    Status result;
    saves.Save(kDemoSlot, {.title = "Demo, save " + std::to_string(k + 1)},
               [&](Result<game::SaveOutcome> r) {
                 done = true;
                 if (r.ok()) {
                   last = *r;
                 } else {
                   result = r.status();
                 }
               });
    if (!Wait(saves, done) || !result.ok()) {
      std::fprintf(err, "rolly demo: saving: %s\n",
                   done ? result.ToString().c_str() : "no answer within a minute");
      return 1;
    }
  }
  Result<std::vector<world::WorldChunk>> expected = world::CaptureForCompare(saves.world());
  if (!expected.ok()) {
    std::fprintf(err, "rolly demo: %s\n", expected.status().ToString().c_str());
    return 1;
  }

  // A fresh game loads the slot.
  scene::Scene loaded(registry);
  loaded.AddMap(kDemoMap, map);
  if (Status s = loaded.Start(kDemoMap); !s.ok()) {
    std::fprintf(err, "rolly demo: starting the fresh game: %s\n", s.ToString().c_str());
    return 1;
  }
  game::SaveSystem fresh(store, loaded, registry, mailbox, workers);
  bool done = false;
  Result<game::LoadOutcome> outcome = Status(CancelledError("no answer"));
  fresh.Load(kDemoSlot, {}, [&](Result<game::LoadOutcome> r) {
    done = true;
    outcome = std::move(r);
  });
  if (!Wait(fresh, done) || !outcome.ok()) {
    std::fprintf(err, "rolly demo: loading: %s\n", outcome.status().ToString().c_str());
    return 1;
  }
  Result<std::vector<world::WorldChunk>> got = world::CaptureForCompare(fresh.world());
  if (!got.ok()) {
    std::fprintf(err, "rolly demo: %s\n", got.status().ToString().c_str());
    return 1;
  }
  Result<std::vector<std::string>> diff = world::DiffWorlds(*expected, *got, 20);
  if (!diff.ok()) {
    std::fprintf(err, "rolly demo: comparing: %s\n", diff.status().ToString().c_str());
    return 1;
  }
  const std::size_t actors = CountActors(*expected);
  const double write_ms = Ms(last.total_time - last.capture_time);
  std::fprintf(out, "  actors saved           %zu (%zu records)\n", actors, last.records);
  std::fprintf(out, "  differences found      %zu\n", diff->size());
  for (const std::string& line : *diff) std::fprintf(out, "    %s\n", line.c_str());
  std::fprintf(out, "  capture (game thread)  %.1f ms\n", Ms(last.capture_time));
  std::fprintf(out, "  write (workers, disk)  %.1f ms\n", write_ms);
  std::fprintf(out, "  load                   %.1f ms (read and check %.1f ms, set values %.1f ms)\n",
               Ms(outcome->read_time + outcome->apply_time), Ms(outcome->read_time),
               Ms(outcome->apply_time));
  std::fprintf(out, "  file size              %" PRIu64 " bytes, %.1f bytes per actor\n",
               last.info.size, actors ? static_cast<double>(last.info.size) / actors : 0.0);
  std::fprintf(out, "  load report            %zu applied, %zu spawned, %zu removed, %zu kept, %zu waiting\n",
               outcome->report.applied, outcome->report.spawned, outcome->report.removed,
               outcome->report.kept, outcome->report.waiting);
  for (std::size_t i = 0; i < outcome->report.messages.size() && i < 5; ++i) {
    std::fprintf(out, "    %s\n", outcome->report.messages[i].c_str());
  }
  if (outcome->report.messages.size() > 5) {
    std::fprintf(out, "    %zu more messages\n", outcome->report.messages.size() - 5);
  }
  std::fprintf(out, "\n");
  std::fflush(out);
  SlotsOptions slots;
  slots.folder = options.dir;
  const int listed = RunSlots(slots, out, err);
  if (!diff->empty()) {
    std::fprintf(err, "rolly demo: the loaded world differs from the saved one\n");
    return 1;
  }
  return listed;
}

}  // namespace rolly::cli

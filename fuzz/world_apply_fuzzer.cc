// Fuzz target for loading a world (rolly::world): world chunks (scene/internal/chunk_input.h:
// GLOB, WRLD of the sample map, PLYR of player 0, without the file around them) are checked by
// LoadedGame::Check against the sample game's registry; what it accepts is applied to the
// reference scene on the shipped sample map both ways a load applies: keeping the current map
// (World::Apply), and opening the saved map with values set when its actors are initialized.
// The world is then captured as a save would capture it; after the load that keeps the map, also
// once the map's streamed level (the Cellar) came in (and got the save's records of it), went out
// (remembered by level memory) and came back (and got what was remembered).
//
// What must hold, besides no crash, leak or undefined behaviour:
//   - Check accepts, or refuses with Damaged or NewerVersion (the inputs hold only world chunks);
//   - a world Check accepted applies whole: Apply returns Ok, and so does the load opening the map
//     (a record it cannot apply is reported in the ApplyReport, never a failure part way);
//   - the world loaded can be captured again, or the capture refuses it with InvalidData (a value
//     the save held that a save does not write, such as an enum number without a name); and
//     the chunks captured pass LoadedGame::Check: a save the library writes loads.
//
// Each scene gives its actors IDs from a counter (Scene::SetIdSource), not at random, so an input
// runs the same every time.
//
// Seeds: the golden world fixture's chunks (tests/fixtures/world/sample.rsav), written by
// save_load_test's WorldFixtures.WriteFuzzSeeds, and small edge cases.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/scene/internal/chunk_input.h"
#include "rolly/scene/sample_game.h"
#include "rolly/scene/scene.h"
#include "rolly/world/world.h"
#include "rolly/world/world_diff.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

void Must(const rolly::Status& s, const char* what) {
  if (!s.ok()) Fail(std::string(what) + ": " + s.ToString());
}

const rolly::reflect::TypeRegistry& Registry() {
  static const auto* registry = [] {
    auto* r = new rolly::reflect::TypeRegistry();
    rolly::scene::RegisterSceneTypes(*r);
    rolly::scene::RegisterSampleGame(*r);
    Must(r->Finish(), "the sample game did not register");
    return r;
  }();
  return *registry;
}

const std::string& SampleMap() {
  static const auto* map = new std::string(rolly::scene::BuildSampleMap(
      rolly::scene::kSampleMapActors, rolly::scene::kSampleMapSeed));
  return *map;
}

// A scene on the sample map, watched by a World made before the map opened (as a game makes it).
struct Game {
  rolly::scene::Scene scene{Registry()};
  rolly::world::World world{scene, Registry()};
  std::uint64_t next_id = 1;
  Game() {
    scene.SetIdSource([this] { return rolly::Guid(0x5EED, next_id++); });
    scene.AddMap(rolly::scene::kSampleMapPath, SampleMap());
    Must(scene.Start(rolly::scene::kSampleMapPath), "the sample map did not start");
  }
};

void CaptureAgain(rolly::world::World& world, const char* how) {
  rolly::Result<std::vector<rolly::world::WorldChunk>> captured =
      rolly::world::CaptureForCompare(world);
  if (!captured.ok()) {
    if (captured.status().code() == rolly::StatusCode::kInvalidData) return;
    Fail(std::string("the world a load ") + how + " gave cannot be captured: " +
         captured.status().ToString());
  }
  const rolly::Status checked =
      rolly::world::LoadedGame::Check(*std::move(captured), Registry()).status();
  if (!checked.ok()) {
    Fail(std::string("the capture of the world a load ") + how + " gave does not load: " +
         checked.ToString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using rolly::StatusCode;
  std::vector<rolly::world::WorldChunk> chunks = rolly::scene_internal::DecodeChunkInput(
      rolly::ByteView(data, size), rolly::scene::kSampleMapPath);
  rolly::Result<std::shared_ptr<const rolly::world::LoadedGame>> game =
      rolly::world::LoadedGame::Check(std::move(chunks), Registry());
  if (!game.ok()) {
    const StatusCode code = game.status().code();
    if (code != StatusCode::kDamaged && code != StatusCode::kNewerVersion) {
      Fail("Check refused world chunks with " + game.status().ToString());
    }
    return 0;
  }

  {
    Game keeping;
    rolly::world::ApplyReport report;
    Must(keeping.world.Apply(*game, &report), "a checked save failed to apply");
    CaptureAgain(keeping.world, "keeping the map");
    const rolly::Name cellar("Cellar");
    Must(keeping.scene.AddLevel(cellar), "the Cellar did not come in");
    Must(keeping.scene.RemoveLevel(cellar), "the Cellar did not go out");
    CaptureAgain(keeping.world, "keeping the map, with the Cellar remembered,");
    Must(keeping.scene.AddLevel(cellar), "the Cellar did not come back");
    CaptureAgain(keeping.world, "keeping the map, with the Cellar back,");
  }
  {
    Game opening;
    std::optional<rolly::Status> applied;
    opening.world.ApplyAtActorsInitialized(
        *game, nullptr,
        [&](rolly::Status s, const rolly::world::ApplyReport&) { applied = std::move(s); });
    const std::string map = (*game)->map().empty() ? rolly::scene::kSampleMapPath : (*game)->map();
    const rolly::Status opened = opening.scene.OpenMap(map);
    opening.world.CancelPendingApply();
    Must(opened, "the sample map did not open again");
    if (!applied) Fail("the map opened without applying the save");
    Must(*applied, "a checked save failed to apply at a map's opening");
    CaptureAgain(opening.world, "opening the map");
  }
  return 0;
}

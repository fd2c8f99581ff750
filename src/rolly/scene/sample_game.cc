#include "rolly/scene/sample_game.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/guid.h"

namespace rolly::scene {
namespace {

using nlohmann::json;
using reflect::kSaveGame;

// splitmix64: the same numbers on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // In [0, n).
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }
  // In [lo, hi), rounded to hundredths so the map's text stays short.
  double Real(double lo, double hi) {
    const double u = static_cast<double>(Next() >> 11) / 9007199254740992.0;
    return std::round((lo + (hi - lo) * u) * 100) / 100;
  }
  // A version-4 GUID.
  Guid NextGuid() {
    const std::uint64_t hi = (Next() & ~0xF000ull) | 0x4000ull;
    const std::uint64_t lo = (Next() & ~(0xC000000000000000ull)) | 0x8000000000000000ull;
    return Guid(hi, lo);
  }

 private:
  std::uint64_t state_;
};

const char* const kItems[] = {"Apple", "Sword", "Coin", "Potion", "Arrow", "Key", "Bread"};
const char* const kDoorStates[] = {"Closed", "Open", "Locked"};
const char* const kPickupKinds[] = {"Gem", "Coin", "Herb"};

json Transform(Rng& rng, int i) {
  const double yaw = rng.Real(0, 6.28);
  return {
      {"translation", {(i % 100) * 4.0 + rng.Real(-1, 1), (i / 100) * 4.0 + rng.Real(-1, 1), 0}},
      {"rotation",
       {0, 0, std::round(std::sin(yaw / 2) * 1e4) / 1e4,
        std::round(std::cos(yaw / 2) * 1e4) / 1e4}}};
}

json Items(Rng& rng, int max) {
  json items = json::array();
  const int n = static_cast<int>(rng.Below(max + 1));
  for (int k = 0; k < n; ++k) {
    items.push_back({{"Item", kItems[rng.Below(std::size(kItems))]},
                     {"Count", 1 + static_cast<int>(rng.Below(20))},
                     {"Durability", rng.Real(0, 1)}});
  }
  return items;
}

}  // namespace

Lamp::Lamp() { AddDefaultComponent<LampComponent>("Bulb"); }

Character::Character() { AddDefaultComponent<InventoryComponent>("Inventory"); }

Quest* QuestLog::Find(Name id) const {
  for (const auto& q : quests)
    if (q->id == id) return q.get();
  return nullptr;
}

void RegisterSampleGame(reflect::TypeRegistry& registry) {
  registry.Enum<DoorState>("DoorState")
      .Value("Closed", DoorState::kClosed)
      .Value("Open", DoorState::kOpen)
      .Value("Locked", DoorState::kLocked);
  registry.Struct<ItemStack>("ItemStack")
      .Field("Item", &ItemStack::item, kSaveGame)
      .Field("Count", &ItemStack::count, kSaveGame)
      .Field("Durability", &ItemStack::durability, kSaveGame);
  registry.Class<Door>("Door")
      .Base<Actor>()
      .Field("Open", &Door::open, kSaveGame)
      .Field("State", &Door::state, kSaveGame)
      .Field("LockCode", &Door::lock_code, kSaveGame);
  registry.Class<Chest>("Chest").Base<Actor>().Field("Inventory", &Chest::inventory, kSaveGame);
  registry.Class<LampComponent>("LampComponent")
      .Base<Component>()
      .Field("Flicker", &LampComponent::flicker, kSaveGame)
      .Field("Broken", &LampComponent::broken, kSaveGame);
  registry.Class<Lamp>("Lamp")
      .Base<Actor>()
      .Field("On", &Lamp::on, kSaveGame)
      .Field("Color", &Lamp::color, kSaveGame)
      .Field("Intensity", &Lamp::intensity, kSaveGame);
  registry.Class<InventoryComponent>("InventoryComponent")
      .Base<Component>()
      .Field("Items", &InventoryComponent::items, kSaveGame)
      .Field("Capacity", &InventoryComponent::capacity, kSaveGame);
  registry.Class<Character>("Character")
      .Base<Actor>()
      .Field("Health", &Character::health, kSaveGame)
      .Field("Name", &Character::name, kSaveGame)
      .Field("Friend", &Character::friend_character, kSaveGame)
      .Field("Target", &Character::target, kSaveGame)
      .Field("Level", &Character::experience_level, kSaveGame);
  registry.Class<Crate>("Crate").Base<Actor>().Field("Hits", &Crate::hits, kSaveGame);
  registry.Class<Pickup>("Pickup")
      .Base<Actor>()
      .Field("Value", &Pickup::value, kSaveGame)
      .Field("Kind", &Pickup::kind, kSaveGame);
  registry.Class<QuestReward>("QuestReward")
      .Field("Item", &QuestReward::item, kSaveGame)
      .Field("Gold", &QuestReward::gold, kSaveGame);
  registry.Class<Quest>("Quest")
      .Field("Id", &Quest::id, kSaveGame)
      .Field("Step", &Quest::step, kSaveGame)
      .Field("Done", &Quest::done, kSaveGame)
      .Field("Reward", &Quest::reward, kSaveGame);
  registry.Class<QuestLog>("QuestLog")
      .Base<Subsystem>()
      .Field("Quests", &QuestLog::quests, kSaveGame);
  registry.Class<SampleGameMode>("SampleGameMode")
      .Base<GameMode>()
      .Field("Difficulty", &SampleGameMode::difficulty, kSaveGame);
  registry.Class<SampleGameState>("SampleGameState")
      .Base<GameState>()
      .Field("TimeOfDay", &SampleGameState::time_of_day, kSaveGame)
      .Field("Day", &SampleGameState::day, kSaveGame);
  registry.Class<SamplePlayerController>("SamplePlayerController")
      .Base<PlayerController>()
      .Field("ControlRotation", &SamplePlayerController::control_rotation, kSaveGame);
  registry.Class<SamplePawn>("SamplePawn")
      .Base<Pawn>()
      .Field("Stamina", &SamplePawn::stamina, kSaveGame);
  registry.Class<SamplePlayerState>("SamplePlayerState")
      .Base<PlayerState>()
      .Field("Score", &SamplePlayerState::score, kSaveGame)
      .Field("Gold", &SamplePlayerState::gold, kSaveGame);
}

std::string BuildSampleMap(int actors, std::uint64_t seed) {
  Rng rng(seed);
  json map;
  map["name"] = "sample";
  map["levels"] = {{{"name", "Persistent"}}, {{"name", "Cellar"}, {"loaded", false}}};
  map["game_instance"] = {{"class", "GameInstance"}, {"subsystems", {"QuestLog"}}};
  map["game_mode"] = {{"class", "SampleGameMode"}, {"values", {{"Difficulty", 2}}}};
  map["game_state"] = {{"class", "SampleGameState"}, {"values", {{"TimeOfDay", 8.5}, {"Day", 1}}}};
  map["world_subsystems"] = json::array();
  map["level_script"] = "LevelScript";
  map["players"] = {{{"controller", "SamplePlayerController"},
                     {"pawn", "SamplePawn"},
                     {"player_state", {{"class", "SamplePlayerState"}, {"values", {{"Gold", 10}}}}},
                     {"transform", {{"translation", {0, -10, 0}}}}}};
  json list = json::array();
  // The last door and character of each level, for attachments and owners.
  std::string last_door[2], last_character[2];
  for (int i = 0; i < actors; ++i) {
    const int kind = i < 5 ? i : static_cast<int>(rng.Below(5));
    const int level = (i >= 5 && rng.Below(12) == 0) ? 1 : 0;
    const std::string id = rng.NextGuid().ToString();
    json a = {{"id", id}, {"transform", Transform(rng, i)}};
    if (level == 1) a["level"] = "Cellar";
    json values = json::object();
    switch (kind) {
      case 0: {
        a["class"] = "Door";
        const std::uint64_t state = rng.Below(3);
        values = {{"Open", state == 1},
                  {"State", kDoorStates[state]},
                  {"LockCode", state == 2 ? static_cast<int>(rng.Below(10000)) : 0}};
        if (rng.Below(4) == 0) a["tags"] = {"Front"};
        last_door[level] = id;
        break;
      }
      case 1:
        a["class"] = "Chest";
        values = {{"Inventory", Items(rng, 3)}};
        if (!last_character[level].empty() && rng.Below(3) == 0) a["owner"] = last_character[level];
        break;
      case 2:
        a["class"] = "Lamp";
        values = {{"On", rng.Below(2) == 0},
                  {"Color", {rng.Real(0, 1), rng.Real(0, 1), rng.Real(0, 1), 1}},
                  {"Intensity", rng.Real(0.5, 3)}};
        a["components"] = {{{"name", "Bulb"}, {"values", {{"Flicker", rng.Real(0, 0.3)}}}}};
        if (!last_door[level].empty() && rng.Below(4) == 0)
          a["attach"] = {{"parent", last_door[level]}, {"socket", "Top"}};
        break;
      case 3:
        a["class"] = "Character";
        values = {{"Health", rng.Real(50, 100)},
                  {"Name", "npc_" + std::to_string(i)},
                  {"Level", 1 + static_cast<int>(rng.Below(10))}};
        a["components"] = {{{"name", "Inventory"}, {"values", {{"Items", Items(rng, 2)}}}}};
        last_character[level] = id;
        break;
      default:
        a["class"] = "Crate";
        a["tags"] = {"Breakable"};
        a["saving"] = "Always";
        break;
    }
    if (!values.empty()) a["values"] = std::move(values);
    list.push_back(std::move(a));
  }
  map["actors"] = std::move(list);
  return map.dump(1) + "\n";
}

namespace {

// The sample game's live actors, gathered once per PlaySample call and kept up to date by it.
struct SampleActors {
  std::vector<Door*> doors;
  std::vector<Chest*> chests;
  std::vector<Lamp*> lamps;
  std::vector<Character*> characters;
  std::vector<Crate*> crates;
};

template <typename T>
T* Pick(std::vector<T*>& list, Rng& rng) {
  return list.empty() ? nullptr : list[rng.Below(list.size())];
}

}  // namespace

Status PlaySample(Scene& scene, int steps, std::uint64_t seed) {
  if (!scene.HasWorld()) return InvalidInputError("PlaySample: no world");
  auto* log = scene.GetSubsystem<QuestLog>();
  auto* game_state = dynamic_cast<SampleGameState*>(scene.game_state());
  if (log == nullptr || game_state == nullptr || scene.players().empty())
    return InvalidInputError("PlaySample: the scene does not run a sample map");
  SampleActors live;
  scene.ForEachActor([&](Actor& a) {
    if (auto* d = dynamic_cast<Door*>(&a))
      live.doors.push_back(d);
    else if (auto* c = dynamic_cast<Chest*>(&a))
      live.chests.push_back(c);
    else if (auto* l = dynamic_cast<Lamp*>(&a))
      live.lamps.push_back(l);
    else if (auto* ch = dynamic_cast<Character*>(&a))
      live.characters.push_back(ch);
    else if (auto* cr = dynamic_cast<Crate*>(&a))
      live.crates.push_back(cr);
  });
  Rng rng(seed);
  for (int i = 0; i < steps; ++i) {
    switch (i % 10) {
      case 0:
        if (Door* d = Pick(live.doors, rng)) {
          d->state = static_cast<DoorState>((static_cast<int>(d->state) + 1) % 3);
          d->open = d->state == DoorState::kOpen;
          d->lock_code = d->state == DoorState::kLocked ? static_cast<int>(rng.Below(10000)) : 0;
        }
        break;
      case 1: {
        Chest* from = Pick(live.chests, rng);
        Chest* to = Pick(live.chests, rng);
        if (from == nullptr) break;
        if (from->inventory.empty()) {
          from->inventory.push_back(
              {Name(kItems[rng.Below(std::size(kItems))]), 1 + static_cast<int>(rng.Below(5)), 1});
        } else if (to != from) {
          to->inventory.push_back(from->inventory.back());
          from->inventory.pop_back();
        } else {
          from->inventory.back().count += 1;
        }
        break;
      }
      case 2:
        if (Lamp* l = Pick(live.lamps, rng)) {
          l->on = !l->on;
          l->color = {static_cast<float>(rng.Real(0, 1)), static_cast<float>(rng.Real(0, 1)),
                      static_cast<float>(rng.Real(0, 1)), 1};
          l->intensity = static_cast<float>(rng.Real(0.5, 3));
          if (auto* bulb = dynamic_cast<LampComponent*>(l->FindComponent(Name("Bulb")))) {
            bulb->flicker = static_cast<float>(rng.Real(0, 1));
            bulb->broken = rng.Below(8) == 0;
          }
        }
        break;
      case 3:
        if (Character* c = Pick(live.characters, rng)) {
          c->health = std::max(0.0f, c->health - static_cast<float>(1 + rng.Below(20)));
          c->friend_character = Pick(live.characters, rng);
          c->target = Pick(live.characters, rng);
          if (c->target == c) c->target = nullptr;
          if (rng.Below(3) == 0) c->experience_level += 1;
          c->transform.translation.x += rng.Real(-2, 2);
        }
        break;
      case 4:
        if (!live.crates.empty()) {
          Crate* crate = live.crates.front();
          if (++crate->hits >= 2) {
            live.crates.erase(live.crates.begin());
            scene.DestroyActor(crate->id);
          }
        }
        break;
      case 5: {
        Character* owner = Pick(live.characters, rng);
        if (owner == nullptr || owner->level != scene.PersistentLevel()) break;
        reflect::Transformd t = owner->transform;
        t.translation.z += 1;
        Result<Pickup*> p = scene.SpawnActor<Pickup>(owner->level, t);
        if (!p.ok()) return p.status();
        (*p)->value = 1 + static_cast<int>(rng.Below(100));
        (*p)->kind = Name(kPickupKinds[rng.Below(std::size(kPickupKinds))]);
        ROLLY_RETURN_IF_ERROR(scene.Attach((*p)->id, owner->id, Name("Hand")));
        ROLLY_RETURN_IF_ERROR(scene.SetOwner((*p)->id, owner->id));
        break;
      }
      case 6:
        if (log->quests.size() < 3 || rng.Below(3) == 0) {
          auto q = std::make_unique<Quest>();
          q->id = Name("quest_" + std::to_string(log->quests.size()));
          q->reward = std::make_unique<QuestReward>();
          q->reward->item = Name(kItems[rng.Below(std::size(kItems))]);
          q->reward->gold = 5 + static_cast<int>(rng.Below(50));
          log->quests.push_back(std::move(q));
        } else {
          Quest& q = *log->quests[rng.Below(log->quests.size())];
          if (!q.done && ++q.step >= 3) q.done = true;
          if (q.reward) q.reward->gold += 1;
        }
        break;
      case 7:
        game_state->time_of_day += 1.5f;
        if (game_state->time_of_day >= 24) {
          game_state->time_of_day -= 24;
          game_state->day += 1;
        }
        break;
      case 8: {
        const LocalPlayer& player = scene.players().front();
        if (auto* ps = dynamic_cast<SamplePlayerState*>(player.player_state)) {
          ps->score += 1 + static_cast<int>(rng.Below(10));
          ps->gold += static_cast<int>(rng.Below(5));
        }
        if (auto* pawn = dynamic_cast<SamplePawn*>(player.pawn)) {
          pawn->stamina = std::max(0.0f, pawn->stamina - 1);
          pawn->transform.translation.y += 1;
        }
        if (auto* pc = dynamic_cast<SamplePlayerController*>(player.controller))
          pc->control_rotation.yaw = rng.Real(-180, 180);
        break;
      }
      case 9:
        if (Character* c = Pick(live.characters, rng)) {
          Component* bag = c->FindComponent(Name("Backpack"));
          if (bag == nullptr) {
            Result<Component*> made =
                scene.AddComponent(c->id, Name("Backpack"), Name("InventoryComponent"));
            if (!made.ok()) return made.status();
            bag = *made;
          }
          auto* inv = static_cast<InventoryComponent*>(bag);
          inv->items.push_back(
              {Name(kItems[rng.Below(std::size(kItems))]), 1, static_cast<float>(rng.Real(0, 1))});
        }
        break;
    }
  }
  return OkStatus();
}

}  // namespace rolly::scene

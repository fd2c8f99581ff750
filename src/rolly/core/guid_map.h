// GuidMap: a map from GUIDs to small values in one table (open addressing, linear probing), for
// look-ups among 100,000 objects by ID (the world layer's tables for a save and a load, the
// reference scene's actors; a host may use it for its own): no allocation per entry, and a
// look-up touches one or two neighbouring slots. Any GUID is a key, the none GUID included.
// Pointers from Find stay valid until the next Put, Insert, Erase or Reserve. GuidSet: the same,
// without values.
//
// Thread rules: a value type; one thread at a time.

#ifndef ROLLY_CORE_GUID_MAP_H_
#define ROLLY_CORE_GUID_MAP_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "rolly/core/guid.h"

namespace rolly {

template <typename V>
class GuidMap {
 public:
  // Room for `n` entries without growing.
  void Reserve(std::size_t n) {
    std::size_t want = 16;
    while (want * 7 < n * 10) want *= 2;
    if (want > slots_.size()) Rehash(want);
  }

  // Sets the value of `id` (adding it when absent). The none GUID is a key like any other.
  void Put(Guid id, V value) {
    if (id.is_none()) {
      none_ = std::move(value);
      return;
    }
    if ((used_ + 1) * 10 > slots_.size() * 7) Rehash(std::max<std::size_t>(16, slots_.size() * 2));
    Slot& slot = slots_[Probe(id)];
    if (slot.id.is_none()) {
      slot.id = id;
      ++used_;
    }
    slot.value = std::move(value);
  }
  // Adds `id` with `value` when absent; false (and nothing changed) when it was there.
  bool Insert(Guid id, V value) {
    if (Find(id) != nullptr) return false;
    Put(id, std::move(value));
    return true;
  }

  // Removes `id`; false when it was not there. The entries after it in its run move back, so no
  // look-up ever probes past a hole.
  bool Erase(Guid id) {
    if (id.is_none()) return std::exchange(none_, std::nullopt).has_value();
    if (slots_.empty()) return false;
    std::size_t hole = Probe(id);
    if (slots_[hole].id.is_none()) return false;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t j = (hole + 1) & mask; !slots_[j].id.is_none(); j = (j + 1) & mask) {
      // The entry at j may fill the hole unless its home slot lies in the cyclic range (hole, j].
      const std::size_t home = static_cast<std::size_t>(Mix(slots_[j].id)) & mask;
      const bool stays = hole < j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = std::move(slots_[j]);
      hole = j;
    }
    slots_[hole] = Slot{};
    --used_;
    return true;
  }

  // Asks the processor to bring `id`'s slot into cache ahead of a Put or Find. Always inlined:
  // GCC 12 takes a function whose only effect is a prefetch for one with none, and drops calls to
  // it that it has not inlined yet.
  [[gnu::always_inline]] void Prefetch(Guid id) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Mix(id) & (slots_.size() - 1)]);
  }

  V* Find(Guid id) { return const_cast<V*>(static_cast<const GuidMap&>(*this).Find(id)); }
  const V* Find(Guid id) const {
    if (id.is_none()) return none_ ? &*none_ : nullptr;
    if (slots_.empty()) return nullptr;
    const Slot& slot = slots_[Probe(id)];
    return slot.id.is_none() ? nullptr : &slot.value;
  }
  bool Contains(Guid id) const { return Find(id) != nullptr; }
  std::size_t size() const { return used_ + (none_ ? 1 : 0); }

 private:
  // An empty slot holds the none GUID (that key lives in none_).
  struct Slot {
    Guid id;
    [[no_unique_address]] V value{};
  };
  // The slot holding `id`, or the empty slot where it would go. The table is never full.
  std::size_t Probe(Guid id) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(Mix(id)) & mask;; i = (i + 1) & mask) {
      if (slots_[i].id.is_none() || slots_[i].id == id) return i;
    }
  }
  // Every bit of the GUID reaches the low bits the table uses (a plain multiply carries only low
  // bits upward, and IDs that differ only high up would share a slot).
  static std::uint64_t Mix(Guid id) {
    std::uint64_t h = id.high() ^ (id.low() * 0x9E3779B97F4A7C15ull);
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
  }
  void Rehash(std::size_t size) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(size));
    used_ = 0;
    for (Slot& slot : old) {
      if (slot.id.is_none()) continue;
      slots_[Probe(slot.id)] = std::move(slot);
      ++used_;
    }
  }

  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  std::optional<V> none_;
};

// A set of GUIDs: a GuidMap of no values.
class GuidSet {
 public:
  void Reserve(std::size_t n) { map_.Reserve(n); }
  // False when `id` was there already.
  bool Insert(Guid id) { return map_.Insert(id, Empty{}); }
  bool Contains(Guid id) const { return map_.Contains(id); }
  bool Erase(Guid id) { return map_.Erase(id); }
  std::size_t size() const { return map_.size(); }
  bool empty() const { return size() == 0; }

 private:
  struct Empty {};
  GuidMap<Empty> map_;
};

}  // namespace rolly

#endif  // ROLLY_CORE_GUID_MAP_H_

// How references between saved objects are saved and resolved (docs/records.md, "References").
//
// A reference field (a C* of a registered class) saves the identity of the object it points to,
// never the pointer. The game (the world layer, later) knows which objects are saved and under
// which subject ID, so capture and apply ask it through ObjectLinks:
//   - Locate, at capture: where the object a reference points to is saved. A target saved in the
//     same chunk gives its record index there (a small number in the file), one saved elsewhere
//     its subject ID (kept once per chunk in the refs table), one not saved nothing (the reference
//     saves as null).
//   - Resolve, at apply: the live object saved under a subject ID, as the reference's class.
//     ResolveRecord is asked instead for a reference saved by record index, so a game that keeps
//     the objects of the chunk being applied by record index finds them without a look-up by ID
//     (by default it is Resolve).
//   - Identify and LocateIdentified, for a capture in two halves (Capturer::Copy on the thread
//     that owns the objects, Capturer::CaptureCopy later, maybe on another thread): Locate in two
//     steps, so the owning thread does not search. Identify, at the copy, names the object a
//     reference points to by an address that stands for it (it may read the object, to find its
//     dynamic class); LocateIdentified, when the record is written, says where the object of that
//     address is saved, as Locate would have, reading no live object. An ObjectLinks that does
//     not locate in two steps returns null from Identify (the default): the copy calls Locate.
//     One that does overrides both, and the capturer writing a copy's record must be given the
//     links that identified its references (other links cannot find those names).
//
// Thread rules: called on the thread that captures or applies, during the call only;
// LocateIdentified on the thread writing the copies' records.

#ifndef ROLLY_RECORD_LINKS_H_
#define ROLLY_RECORD_LINKS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "rolly/core/guid.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

// Where a referenced object is saved.
struct LinkTarget {
  // Its subject ID.
  Guid id;
  // Its record's index in the chunk being written (1 or more), or 0 when it is saved elsewhere.
  std::uint32_t record = 0;
};

class ObjectLinks {
 public:
  virtual ~ObjectLinks() = default;
  // Where `object` is saved; `cls` is the reference field's class and `object` is seen as it.
  // nullopt when the object is not saved: the reference saves as null.
  virtual std::optional<LinkTarget> Locate(const reflect::ClassInfo& cls, const void* object) = 0;
  // The address `object` (seen as `cls`, not null) is known by until its record is written, for
  // LocateIdentified; null (the default) when this ObjectLinks locates only at once. Override
  // both or neither.
  virtual const void* Identify(const reflect::ClassInfo& cls, const void* object) {
    (void)cls;
    (void)object;
    return nullptr;
  }
  // Where the object Identify named `identity` is saved, as Locate said; nullopt when it is not
  // saved. Reads no live object.
  virtual std::optional<LinkTarget> LocateIdentified(const void* identity) {
    (void)identity;
    return std::nullopt;
  }
  // The live object saved as `id`, as class `cls` (upcast), or null when there is none or it is
  // not a `cls` (the reference is then left as it was and a message names it).
  virtual void* Resolve(Guid id, const reflect::ClassInfo& cls) = 0;
  // The same for a reference saved as record `record` (1 or more) of the chunk being applied,
  // whose subject is `id`.
  virtual void* ResolveRecord(std::size_t record, Guid id, const reflect::ClassInfo& cls) {
    (void)record;
    return Resolve(id, cls);
  }
};

}  // namespace rolly::record

#endif  // ROLLY_RECORD_LINKS_H_

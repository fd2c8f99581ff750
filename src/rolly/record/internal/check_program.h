// Check programs: the structure check of a record's saved values, compiled once per layout of a
// chunk into a flat list of steps (not installed; used by record_codec.cc and its tests).
//
// The check of a payload walks every saved value by its saved type (record_codec.cc's Walker):
// a call, a switch on the kind and a Status for each value, struct and element. Most layouts a
// game saves hold only plain kinds (numbers, booleans, the math types, names, enums, strings,
// references, structs of them, and vectors and arrays of those), and every record of one layout
// is checked the same way. A CheckPrograms compiles such a layout once into steps (fixed-size
// values next to each other merged into one skip, but never into the last step of a container's
// elements; structs inlined; each container followed by its element's steps) and runs them over
// each record's PROP bytes with no call per value.
//
// A program only answers "these bytes pass" or "ask the Walker": it refuses exactly what the
// Walker refuses, but says nothing of why, so a record it does not pass is checked again by the
// Walker, whose status names the value. Layouts holding anything else (texts, sets, maps,
// optionals, owned objects, instanced structs, property bags, values nested past 64 levels, or
// past the caps below) get no program and are always walked. No plain kind charges
// the file's budget (only values inside bags and texts with arguments do), so a record a program
// passes leaves the budget as the Walker would.
//
// Thread rules: one CheckPrograms per thread; the tables must outlive it.

#ifndef ROLLY_RECORD_INTERNAL_CHECK_PROGRAM_H_
#define ROLLY_RECORD_INTERNAL_CHECK_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/record/chunk_tables.h"

namespace rolly::record {

class CheckPrograms {
 public:
  // The most steps one layout's program may take (structs inlined), and the most values its
  // compiling may visit (values joined into one skip count each); a layout needing more is
  // walked. Once the programs of one CheckPrograms hold kMaxTotalSteps steps (24 bytes each),
  // the layouts met after are walked.
  static constexpr std::size_t kMaxSteps = 512;
  static constexpr std::size_t kMaxVisits = 4096;
  static constexpr std::size_t kMaxTotalSteps = std::size_t{1} << 16;

  // For the records of a payload of `record_count` records (the tables record included) whose
  // tables are `tables`.
  CheckPrograms(const ChunkTables& tables, std::uint64_t record_count)
      : tables_(tables), record_count_(record_count), programs_(tables.layouts().size()) {}

  // True when `prop` holds exactly the values of `layout` (an index into the tables' layouts), in
  // the one form the Walker accepts, with no owned object among them. False when it does not, or
  // when `layout` has no program: the Walker decides. Compiles the layout's program when first
  // asked.
  bool Passes(std::uint32_t layout, ByteView prop);

  // The steps of `layout`'s program, compiling it; 0 when it has none. For tests.
  std::size_t StepsOf(std::uint32_t layout);

 private:
  enum class Op : std::uint8_t {
    kSkip,       // `size` bytes of fixed-size values
    kBool,       // one byte, 0 or 1
    kSigned,     // a zigzag varint within `bits` bits
    kUnsigned,   // a varint of at most `max`
    kString,     // a length of at most kMaxStringBytes, then UTF-8 without NUL
    kReference,  // 0, a record of the payload (odd), or an entry of the refs table (even)
    kArray,      // `size` elements, each the `body` steps after this one
    kVector,     // a varint count, then that many elements, each the `body` steps after this one
  };
  struct Step {
    Op op = Op::kSkip;
    std::uint8_t bits = 0;
    std::uint32_t size = 0;
    std::uint32_t body = 0;
    std::uint64_t max = 0;
  };
  struct Program {
    enum class State : std::uint8_t { kUnknown, kNone, kMade };
    State state = State::kUnknown;
    std::uint32_t begin = 0;  // its steps in steps_
    std::uint32_t size = 0;
  };

  // The bytes not read yet, read as a ByteReader reads them.
  struct Cursor {
    const std::uint8_t* p;
    const std::uint8_t* end;
    std::size_t left() const { return static_cast<std::size_t>(end - p); }
    bool Skip(std::size_t n) {
      if (n > left()) return false;
      p += n;
      return true;
    }
    // A varint in its shortest form (one byte inline, longer ones by ByteReader's rules).
    bool Varint(std::uint64_t* v) {
      if (p != end && *p < 0x80) {
        *v = *p++;
        return true;
      }
      ByteReader r(ByteView(p, left()));
      if (!r.Varint(v)) return false;
      p += r.position();
      return true;
    }
  };

  const Program& ProgramOf(std::uint32_t layout);
  // Appends the steps of a value of saved type `type` at nesting `depth` (as the Walker counts
  // it); false when the type has no program.
  bool CompileValue(std::uint32_t type, int depth, std::size_t body_begin);
  bool CompileFields(std::uint32_t layout, int depth, std::size_t body_begin);
  bool Run(Cursor& in, const Step* at, const Step* end, std::uint64_t* elements) const;

  const ChunkTables& tables_;
  std::uint64_t record_count_;
  std::vector<Program> programs_;  // by layout
  std::vector<Step> steps_;
  // While a program is compiled: where it begins in steps_; the first step a fixed-size value
  // may be joined to (none before the end of the last container's elements); values visited.
  std::size_t compiling_from_ = 0;
  std::size_t joinable_from_ = 0;
  std::size_t visits_ = 0;
};

}  // namespace rolly::record

#endif  // ROLLY_RECORD_INTERNAL_CHECK_PROGRAM_H_

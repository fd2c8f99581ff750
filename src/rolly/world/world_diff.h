// Comparing and printing saved worlds, value by value: what the demo and the tests use to say a
// loaded world equals the one saved, and what golden fixtures keep as their expected world.
//
// Both work on chunks as WorldCapture::Finish makes them (or as a save file holds them): records
// are matched by chunk and subject, never by position, and values are compared by their saved
// names and types through the value tree (docs/records.md), so two captures of equal worlds compare
// equal even when their chunks' tables were built in another order. A reference compares by the
// subject it points to; floats by their bits.
//
// Thread rules: pure functions.

#ifndef ROLLY_WORLD_WORLD_DIFF_H_
#define ROLLY_WORLD_WORLD_DIFF_H_

#include <cstddef>
#include <string>
#include <vector>

#include "rolly/core/status.h"
#include "rolly/world/world.h"

namespace rolly::world {

// The differences between two saved worlds, one line each ("WRLD maps/a.json actor <id> Door:
// field Open: true != false"), at most `max_lines` (a last line counts the rest). Damaged when a
// chunk does not decode.
Result<std::vector<std::string>> DiffWorlds(const std::vector<WorldChunk>& a,
                                            const std::vector<WorldChunk>& b,
                                            std::size_t max_lines = 100);

// A text with every record of a saved world, one value per line, sorted by chunk, subject and
// field path: a stable form for golden fixtures and for people.
Result<std::string> DumpWorld(const std::vector<WorldChunk>& chunks);

// Captures `world` as a save would (its pre-save hooks run), without writing anything.
Result<std::vector<WorldChunk>> CaptureForCompare(World& world);

}  // namespace rolly::world

#endif  // ROLLY_WORLD_WORLD_DIFF_H_

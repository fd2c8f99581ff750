// A small JSON writer for the `rolly` command line's --json output: objects, arrays, strings,
// numbers, booleans and null, indented two spaces, appended to a string.
//
// Strings are escaped as RFC 8259 asks (quote, backslash, control characters); bytes that are not
// well-formed UTF-8 become U+FFFD, so the output is always valid UTF-8 JSON whatever a damaged
// file holds. Calls must nest properly (a Key before each value inside an object, none inside an
// array); the writer asserts this.
//
// Thread rules: one writer per thread; it owns nothing but its nesting state.

#ifndef ROLLY_TOOLS_ROLLY_JSON_WRITER_H_
#define ROLLY_TOOLS_ROLLY_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rolly::cli {

class JsonWriter {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // The name of the next value; only inside an object.
  void Key(std::string_view name);

  void String(std::string_view value);
  void Uint(std::uint64_t value);
  void Int(std::int64_t value);
  void Bool(bool value);
  void Null();

  // Shorthands for a key and its value.
  void Field(std::string_view name, std::string_view value);
  void Field(std::string_view name, const char* value);
  void Field(std::string_view name, std::uint64_t value);
  void Field(std::string_view name, std::uint32_t value);
  void Field(std::string_view name, std::uint16_t value);
  void Field(std::string_view name, std::int64_t value);
  void Field(std::string_view name, bool value);

 private:
  struct Level {
    bool is_object;
    std::size_t count;
  };
  // Writes the comma and indentation a new value or key needs.
  void BeforeValue();
  void Begin(bool is_object, char open);
  void End(bool is_object, char close);
  void Newline(std::size_t depth);

  std::string* out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

// `value` as a JSON string, quotes included.
std::string JsonQuote(std::string_view value);

}  // namespace rolly::cli

#endif  // ROLLY_TOOLS_ROLLY_JSON_WRITER_H_

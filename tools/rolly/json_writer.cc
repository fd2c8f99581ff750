// The JSON writer of the `rolly` command line.

#include "json_writer.h"

#include <fmt/format.h>

#include <cassert>

#include "text.h"

namespace rolly::cli {

std::string JsonQuote(std::string_view value) {
  std::string out = "\"";
  out.reserve(value.size() + 2);
  for (std::size_t i = 0; i < value.size();) {
    const std::size_t n = Utf8SequenceAt(value, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(value.substr(i, n));
      i += n;
      continue;
    }
    const char c = value[i++];
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::Newline(std::size_t depth) {
  *out_ += '\n';
  out_->append(2 * depth, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  // Inside an object every value follows its Key.
  assert(!levels_.back().is_object);
  if (levels_.back().count++ > 0) *out_ += ',';
  Newline(levels_.size());
}

void JsonWriter::Begin(bool is_object, char open) {
  BeforeValue();
  *out_ += open;
  levels_.push_back({is_object, 0});
}

void JsonWriter::End(bool is_object, char close) {
  assert(!levels_.empty() && levels_.back().is_object == is_object && !after_key_);
  (void)is_object;
  const bool empty = levels_.back().count == 0;
  levels_.pop_back();
  if (!empty) Newline(levels_.size());
  *out_ += close;
  if (levels_.empty()) *out_ += '\n';
}

void JsonWriter::BeginObject() { Begin(true, '{'); }
void JsonWriter::EndObject() { End(true, '}'); }
void JsonWriter::BeginArray() { Begin(false, '['); }
void JsonWriter::EndArray() { End(false, ']'); }

void JsonWriter::Key(std::string_view name) {
  assert(!levels_.empty() && levels_.back().is_object && !after_key_);
  if (levels_.back().count++ > 0) *out_ += ',';
  Newline(levels_.size());
  *out_ += JsonQuote(name);
  *out_ += ": ";
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  *out_ += JsonQuote(value);
}

void JsonWriter::Uint(std::uint64_t value) {
  BeforeValue();
  *out_ += fmt::format("{}", value);
}

void JsonWriter::Int(std::int64_t value) {
  BeforeValue();
  *out_ += fmt::format("{}", value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  *out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  *out_ += "null";
}

void JsonWriter::Field(std::string_view name, std::string_view value) {
  Key(name);
  String(value);
}

void JsonWriter::Field(std::string_view name, const char* value) {
  Key(name);
  String(value);
}

void JsonWriter::Field(std::string_view name, std::uint64_t value) {
  Key(name);
  Uint(value);
}

void JsonWriter::Field(std::string_view name, std::uint32_t value) {
  Key(name);
  Uint(value);
}

void JsonWriter::Field(std::string_view name, std::uint16_t value) {
  Key(name);
  Uint(value);
}

void JsonWriter::Field(std::string_view name, std::int64_t value) {
  Key(name);
  Int(value);
}

void JsonWriter::Field(std::string_view name, bool value) {
  Key(name);
  Bool(value);
}

}  // namespace rolly::cli

#include "rolly/record/internal/check_program.h"

#include <algorithm>
#include <string_view>

#include "rolly/core/utf8.h"
#include "rolly/record/record_codec.h"

namespace rolly::record {

bool CheckPrograms::Passes(std::uint32_t layout, ByteView prop) {
  if (layout >= programs_.size()) return false;
  const Program& p = ProgramOf(layout);
  if (p.state != Program::State::kMade) return false;
  Cursor in{prop.data(), prop.data() + prop.size()};
  std::uint64_t elements = 0;
  const Step* begin = steps_.data() + p.begin;
  return Run(in, begin, begin + p.size, &elements) && in.p == in.end;
}

std::size_t CheckPrograms::StepsOf(std::uint32_t layout) {
  if (layout >= programs_.size()) return 0;
  const Program& p = ProgramOf(layout);
  return p.state == Program::State::kMade ? p.size : 0;
}

const CheckPrograms::Program& CheckPrograms::ProgramOf(std::uint32_t layout) {
  Program& p = programs_[layout];
  if (p.state != Program::State::kUnknown) return p;
  const std::size_t begin = steps_.size();
  compiling_from_ = begin;
  joinable_from_ = begin;
  visits_ = 0;
  if (begin < kMaxTotalSteps && CompileFields(layout, 1, begin) &&
      steps_.size() - begin <= kMaxSteps) {
    p.state = Program::State::kMade;
    p.begin = static_cast<std::uint32_t>(begin);
    p.size = static_cast<std::uint32_t>(steps_.size() - begin);
  } else {
    steps_.resize(begin);
    p.state = Program::State::kNone;
  }
  return p;
}

bool CheckPrograms::CompileFields(std::uint32_t layout, int depth, std::size_t body_begin) {
  for (const LayoutField& f : tables_.layouts()[layout].fields) {
    if (!CompileValue(f.type, depth, body_begin)) return false;
  }
  return true;
}

bool CheckPrograms::CompileValue(std::uint32_t type, int depth, std::size_t body_begin) {
  // (The Walker refuses a value nested deeper; such a layout is left to it. Values joined into
  // one skip, and empty structs, take no step: the visits are bounded too.)
  if (depth > kMaxValueDepth || steps_.size() - compiling_from_ > kMaxSteps ||
      ++visits_ > kMaxVisits) {
    return false;
  }
  const SavedType& t = tables_.types()[type];
  auto add = [this](Op op, std::uint8_t bits = 0, std::uint64_t max = 0) {
    Step s;
    s.op = op;
    s.bits = bits;
    s.max = max;
    steps_.push_back(s);
  };
  if (const std::size_t fixed = FixedValueSize(t.kind)) {
    // Joined to a skip just before it in the same body: not to the last step of a container's
    // elements, which runs once per element.
    if (steps_.size() > std::max(body_begin, joinable_from_) && steps_.back().op == Op::kSkip &&
        steps_.back().size <= (1u << 30)) {
      steps_.back().size += static_cast<std::uint32_t>(fixed);
    } else {
      add(Op::kSkip);
      steps_.back().size = static_cast<std::uint32_t>(fixed);
    }
    return true;
  }
  switch (t.kind) {
    case SavedKind::kBool:
      add(Op::kBool);
      return true;
    case SavedKind::kInt8:
      add(Op::kSigned, 8);
      return true;
    case SavedKind::kInt16:
      add(Op::kSigned, 16);
      return true;
    case SavedKind::kInt32:
      add(Op::kSigned, 32);
      return true;
    case SavedKind::kInt64:
      add(Op::kSigned, 64);
      return true;
    case SavedKind::kUInt8:
      add(Op::kUnsigned, 0, 0xFF);
      return true;
    case SavedKind::kUInt16:
      add(Op::kUnsigned, 0, 0xFFFF);
      return true;
    case SavedKind::kUInt32:
      add(Op::kUnsigned, 0, 0xFFFFFFFFu);
      return true;
    case SavedKind::kUInt64:
      add(Op::kUnsigned, 0, ~std::uint64_t{0});
      return true;
    case SavedKind::kString:
    case SavedKind::kSoftPath:
      add(Op::kString);
      return true;
    case SavedKind::kName:  // 0 (none) or an entry of the names table
      add(Op::kUnsigned, 0, tables_.names().size());
      return true;
    case SavedKind::kEnum:  // an entry of the names table
      if (tables_.names().empty()) return false;
      add(Op::kUnsigned, 0, tables_.names().size() - 1);
      return true;
    case SavedKind::kReference:
      add(Op::kReference);
      return true;
    case SavedKind::kStruct:
      return CompileFields(t.a, depth + 1, body_begin);
    case SavedKind::kArray:
    case SavedKind::kVector: {
      const std::size_t header = steps_.size();
      add(t.kind == SavedKind::kArray ? Op::kArray : Op::kVector);
      steps_[header].size = t.count;
      if (!CompileValue(t.a, depth + 1, header + 1)) return false;
      steps_[header].body = static_cast<std::uint32_t>(steps_.size() - header - 1);
      joinable_from_ = steps_.size();
      return true;
    }
    default:  // texts, sets, maps, optionals, owned objects, bags, instanced structs
      return false;
  }
}

bool CheckPrograms::Run(Cursor& in, const Step* at, const Step* end,
                        std::uint64_t* elements) const {
  std::uint64_t u = 0;
  for (; at < end; ++at) {
    switch (at->op) {
      case Op::kSkip:
        if (!in.Skip(at->size)) return false;
        break;
      case Op::kBool:
        if (in.p == in.end || *in.p > 1) return false;
        ++in.p;
        break;
      case Op::kSigned: {
        if (!in.Varint(&u)) return false;
        if (at->bits < 64) {
          const std::int64_t s = ZigZagDecode(u);
          const std::int64_t half = std::int64_t{1} << (at->bits - 1);
          if (s < -half || s >= half) return false;
        }
        break;
      }
      case Op::kUnsigned:
        if (!in.Varint(&u) || u > at->max) return false;
        break;
      case Op::kString: {
        if (!in.Varint(&u) || u > kMaxStringBytes || u > in.left()) return false;
        const std::string_view text(reinterpret_cast<const char*>(in.p),
                                    static_cast<std::size_t>(u));
        in.p += u;
        if (!IsValidUtf8(text) || text.find('\0') != std::string_view::npos) return false;
        break;
      }
      case Op::kReference:
        if (!in.Varint(&u)) return false;
        if (u == 0) break;
        if (u % 2 == 1) {
          const std::uint64_t record = (u - 1) / 2;
          if (record == 0 || record >= record_count_) return false;
        } else if ((u - 2) / 2 >= tables_.refs().size()) {
          return false;
        }
        break;
      case Op::kArray:
      case Op::kVector: {
        std::uint64_t n = at->size;
        if (at->op == Op::kVector && !in.Varint(&n)) return false;
        if (n > kMaxElementsPerRecord - *elements) return false;
        *elements += n;
        const Step* body = at + 1;
        const Step* body_end = body + at->body;
        if (body_end - body == 1 && body->op == Op::kSkip) {
          // Elements of fixed size: skipped together.
          if (n > in.left() / body->size) return false;
          in.p += n * body->size;
        } else if (body != body_end) {
          for (std::uint64_t i = 0; i < n; ++i) {
            if (!Run(in, body, body_end, elements)) return false;
          }
        }
        at = body_end - 1;  // the loop's step goes past the elements' steps
        break;
      }
    }
  }
  return true;
}

}  // namespace rolly::record

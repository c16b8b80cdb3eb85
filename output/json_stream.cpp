#include "output/json_stream.h"

namespace atrace::analysis {

namespace {
using json = nlohmann::ordered_json;
constexpr size_t kFlushBytes = 1 << 20;  // hand the sink large pieces, not one per row
}  // namespace

void JsonStream::key(const std::string& k) {
  buf_ += first_member_ ? "{\n  " : ",\n  ";
  first_member_ = false;
  // Keys are ours (ASCII): dumping them cannot fail.
  buf_ += json(k).dump();
  buf_ += ": ";
}

void JsonStream::nested(const json& value, size_t indent) {
  // Names and command lines are bytes from the target: never fail on them.
  std::string text = value.dump(2, ' ', false, json::error_handler_t::replace);
  // A dumped string never holds a raw newline (it is escaped), so every
  // newline is the layout's.
  size_t from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    buf_.append(text, from, nl + 1 - from);
    buf_.append(indent, ' ');
  }
  buf_.append(text, from, std::string::npos);
}

void JsonStream::member(const std::string& k, const json& value) {
  key(k);
  nested(value, 2);
  flush_if_big();
}

void JsonStream::begin_array(const std::string& k) {
  key(k);
  buf_ += '[';
  first_element_ = true;
}

void JsonStream::element(const json& value) {
  buf_ += first_element_ ? "\n    " : ",\n    ";
  first_element_ = false;
  nested(value, 4);
  flush_if_big();
}

void JsonStream::end_array() { buf_ += first_element_ ? "]" : "\n  ]"; }

void JsonStream::end() {
  buf_ += first_member_ ? "{}\n" : "\n}\n";
  sink_(buf_);
  buf_.clear();
}

void JsonStream::flush_if_big() {
  if (buf_.size() < kFlushBytes) return;
  sink_(buf_);
  buf_.clear();
}

}  // namespace atrace::analysis

// JsonStream: writes one JSON object member by member, arrays element by
// element, to a sink, in exactly the text nlohmann's dump(2) gives for the
// whole document. A report of millions of rows (`report --threads
// --format=json`) then never holds its document nor its text whole: only
// the element being written.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace atrace::analysis {

class JsonStream {
 public:
  using Sink = std::function<void(std::string_view)>;
  explicit JsonStream(Sink sink) : sink_(std::move(sink)) {}

  // A member of the top-level object.
  void member(const std::string& key, const nlohmann::ordered_json& value);
  // A member of the top-level object that is an array, given element by
  // element between begin_array() and end_array().
  void begin_array(const std::string& key);
  void element(const nlohmann::ordered_json& value);
  void end_array();
  // Closes the top-level object (and its line).
  void end();

 private:
  void key(const std::string& k);
  // `value` dumped with 2-space indentation, its lines after the first
  // indented by `indent` more spaces: its place inside the document.
  void nested(const nlohmann::ordered_json& value, size_t indent);
  void flush_if_big();

  Sink sink_;
  std::string buf_;
  bool first_member_ = true;
  bool first_element_ = true;
};

}  // namespace atrace::analysis

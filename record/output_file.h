// The trace file of `record -o PATH` (and OUTPUT.exclude beside it): the
// rule of base/new_file.h (never remove, truncate or write through what
// atrace did not create; 0600, the sudo caller's; named PATH on commit(),
// an existing PATH becoming PATH.old), with errors as RecordErrors.
#pragma once

#include <string>
#include <string_view>

#include "base/new_file.h"
#include "record/record_error.h"

namespace atrace {

class OutputError : public RecordError {
 public:
  using RecordError::RecordError;
};

class OutputFile {
 public:
  // Throws OutputError, one line naming PATH and why.
  explicit OutputFile(const std::string& path);

  // A descriptor of its own for the writer (closed by it).
  int dup_fd() const { return file_.dup_fd(); }
  bool is_stdout() const { return file_.is_stdout(); }
  const std::string& path() const { return file_.path(); }
  // "stdout" or the path, for messages.
  std::string display() const { return file_.display(); }
  // Writes all of `text` (small files: the trace has its own writer).
  // Throws OutputError.
  void write(std::string_view text);
  // Names the file PATH (a no-op for stdout and when done before).
  // Throws OutputError.
  void commit();

 private:
  NewFile file_;
};

// Throws OutputError when PATH is something `-o` must not write to
// (base/new_file.h); "-" is fine. Called by OutputFile, and early by the
// recorder so that a bad -o fails before the target is touched.
void check_output_path(const std::string& path);

}  // namespace atrace

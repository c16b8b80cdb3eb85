// The trace file of `record -o PATH`, created so that atrace never removes
// or truncates anything it did not create itself:
//
//   - PATH must be "-" (stdout), a new name, or an existing regular file;
//     a symbolic link, directory, device, FIFO or socket is refused before
//     anything is touched;
//   - the new file is created unnamed (O_TMPFILE; on file systems without
//     it, under a private temporary name next to PATH), mode 0600, owned by
//     the sudo caller under sudo (invoking_user.h);
//   - commit() gives it the name PATH once its header is written: an
//     existing PATH becomes PATH.old (perf's habit);
//   - a run that fails before commit() leaves PATH as it was and no file of
//     its own (a SIGKILL leaves at most the temporary name where O_TMPFILE
//     is missing).
#pragma once

#include <string>
#include <string_view>

#include "base/unique_fd.h"
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
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // A descriptor of its own for the writer (closed by it).
  int dup_fd() const;
  bool is_stdout() const { return path_ == "-"; }
  const std::string& path() const { return path_; }
  // "stdout" or the path, for messages.
  std::string display() const { return is_stdout() ? "stdout" : path_; }
  // Writes all of `text` (small files: the trace has its own writer).
  // Throws OutputError.
  void write(std::string_view text);
  // Names the file PATH (a no-op for stdout and when done before).
  // Throws OutputError.
  void commit();

 private:
  std::string path_;
  UniqueFd fd_;
  std::string temp_name_;  // "" when created with O_TMPFILE
  bool committed_ = false;
};

// Throws OutputError when PATH is something `-o` must not write to (see
// above); "-" is fine. Called by OutputFile, and early by the recorder so
// that a bad -o fails before the target is touched.
void check_output_path(const std::string& path);

}  // namespace atrace

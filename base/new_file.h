// The one rule for every file atrace creates from a trace (the trace of
// `record -o`, OUTPUT.exclude, `report --html=FILE`, `convert -o FILE`):
// atrace never removes, truncates or writes through anything it did not
// create itself.
//
//   - PATH must be "-" (stdout), a new name, or an existing regular file;
//     a symbolic link, directory, device, FIFO or socket is refused with one
//     line before anything is touched, and left as it was;
//   - the new file is created unnamed (O_TMPFILE; on file systems without
//     it, under a private name `.NAME.atrace-XXXXXX` next to PATH, made with
//     O_EXCL), mode 0600 whatever the umask, and under sudo owned by the
//     sudo caller (invoking_user.h), so that nothing derived from a trace is
//     readable by other users or left to root;
//   - commit() gives it the name PATH once complete: an existing PATH
//     becomes PATH.old (IfExists::KeepAsOld, the trace: perf's habit) or is
//     replaced in one rename (IfExists::Replace, the files derived from it);
//   - a run that fails before commit() leaves PATH as it was and no file of
//     its own (a SIGKILL leaves at most the temporary name where O_TMPFILE
//     is missing).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "base/unique_fd.h"

namespace atrace {

// One line: "PATH: why".
class NewFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class IfExists { KeepAsOld, Replace };

// Throws NewFileError when PATH is something atrace must not create a file
// at (see above); "-" is fine.
void check_new_file_path(const std::string& path);

class NewFile {
 public:
  // Throws NewFileError.
  NewFile(const std::string& path, IfExists existing);
  ~NewFile();
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;

  bool is_stdout() const { return path_ == "-"; }
  const std::string& path() const { return path_; }
  // "stdout" or the path, for messages.
  std::string display() const { return is_stdout() ? "stdout" : path_; }
  // The descriptor to write to (STDOUT_FILENO for "-"); stays NewFile's.
  int fd() const;
  // A descriptor of its own for a writer that closes it.
  int dup_fd() const;
  // Writes all of `text`. Throws NewFileError.
  void write(std::string_view text);
  // Names the file PATH (a no-op for stdout and when done before).
  // Throws NewFileError.
  void commit();

 private:
  std::string path_;
  IfExists existing_;
  UniqueFd fd_;
  std::string temp_name_;  // "" when created with O_TMPFILE and not yet linked
  bool committed_ = false;
};

}  // namespace atrace

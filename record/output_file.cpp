#include "record/output_file.h"

namespace atrace {

namespace {

NewFile open_output(const std::string& path) {
  check_output_path(path);
  try {
    return NewFile(path, IfExists::KeepAsOld);
  } catch (const NewFileError& e) {
    throw OutputError(e.what());
  }
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path.empty()) throw OutputError("-o needs a file name ('-' for stdout)");
  try {
    check_new_file_path(path);
  } catch (const NewFileError& e) {
    throw OutputError(e.what());
  }
}

OutputFile::OutputFile(const std::string& path) : file_(open_output(path)) {}

void OutputFile::write(std::string_view text) {
  try {
    file_.write(text);
  } catch (const NewFileError& e) {
    throw OutputError(e.what());
  }
}

void OutputFile::commit() {
  try {
    file_.commit();
  } catch (const NewFileError& e) {
    throw OutputError(e.what());
  }
}

}  // namespace atrace

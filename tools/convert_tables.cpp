// `convert --to=tables` and `--to=clickhouse` (convert_tables.h).
#include "tools/convert_tables.h"

#include <sys/stat.h>

#include <cerrno>
#include <map>
#include <memory>
#include <string>

#include "base/diagnostics.h"
#include "base/new_file.h"
#include "base/plural.h"
#include "formats/trace_reader.h"
#include "output/output.h"

namespace atrace::tools {
namespace {

// One file per table, named only once every table is complete
// (base/new_file.h): a failed conversion leaves DIR's files as they were.
class TableFiles : public analysis::TableSink {
 public:
  explicit TableFiles(const std::string& dir) {
    for (const auto& t : analysis::table_defs())
      files_[t.name] = std::make_unique<NewFile>(dir + "/" + t.name + ".tsv", IfExists::Replace);
    schema_ = std::make_unique<NewFile>(dir + "/schema.sql", IfExists::Replace);
  }
  void rows(const analysis::TableBatch& batch) override {
    text_.clear();
    analysis::append_tsv(batch, text_);
    files_.at(batch.def().name)->write(text_);
  }
  void commit() {
    schema_->write(analysis::tables_schema_sql("atrace"));
    for (auto& [name, f] : files_) f->commit();
    schema_->commit();
  }

 private:
  std::map<std::string, std::unique_ptr<NewFile>> files_;
  std::unique_ptr<NewFile> schema_;
  std::string text_;  // a batch's lines, its memory kept for the next
};

// DIR exists as a directory, or is made (0700: the tables hold what the
// trace holds).
bool make_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return true;
    base::error("%s: not a directory (--to=tables writes a directory of files)", dir.c_str());
    return false;
  }
  if (::mkdir(dir.c_str(), 0700) != 0) {
    base::error("%s: cannot create the directory: %s", dir.c_str(),
                base::errno_text(errno).c_str());
    return false;
  }
  return true;
}

int write_files(formats::TraceReader& reader, const std::string& dir, const std::string& filters) {
  if (dir == "-") {
    base::error("--to=tables writes a directory of files: give -o DIR");
    return 2;
  }
  if (!make_dir(dir)) return 1;
  try {
    TableFiles files(dir);
    analysis::export_tables(reader, analysis::trace_id(reader, filters), files);
    files.commit();
  } catch (const std::exception& e) {  // the trace, a write, no memory
    base::error("%s (no table written to %s)", e.what(), dir.c_str());
    return 1;
  }
  return 0;
}

int load(formats::TraceReader& reader, const std::string& url, const std::string& filters,
         const std::string& cluster) {
  if (url == "-") {
    base::error("--to=clickhouse loads into a server: give -o http://HOST:PORT/DATABASE");
    return 2;
  }
  try {
    const analysis::ClickHouseUrl where = analysis::parse_clickhouse_url(url);
    const analysis::LoadResult r = analysis::load_clickhouse(reader, url, filters, 100000, cluster);
    if (r.already_loaded) {
      base::note("trace %llu is already loaded in %s (%s): nothing inserted",
                 static_cast<unsigned long long>(r.trace_id), where.db.c_str(),
                 where.server.c_str());
      return 0;
    }
    uint64_t rows = 0;
    for (uint64_t n : r.counts.rows) rows += n;
    base::note("loaded trace %llu into %s (%s): %s, %s",
               static_cast<unsigned long long>(r.trace_id), where.db.c_str(), where.server.c_str(),
               base::plural(r.counts.of("calls"), "call").c_str(),
               base::plural(rows, "row").c_str());
  } catch (const analysis::LoadError& e) {
    base::error("%s", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int convert_tables(formats::TraceReader& reader, const std::string& format,
                   const std::string& output, const std::string& filters,
                   const std::string& cluster) {
  for (const auto& w : reader.warnings()) base::warning("%s", w.c_str());
  const int status = format == "tables" ? write_files(reader, output, filters)
                                        : load(reader, output, filters, cluster);
  return status == 0 && reader.damaged() ? 3 : status;
}

}  // namespace atrace::tools

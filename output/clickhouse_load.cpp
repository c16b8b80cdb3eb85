// The ClickHouse loader (clickhouse_load.h): libcurl POSTs to the HTTP
// interface, one statement each (a query in the URL, the TSV rows as the
// body of an INSERT).
#include "output/clickhouse_load.h"

#include <curl/curl.h>
#include <unistd.h>

#include <future>
#include <map>
#include <memory>

#include "formats/trace_reader.h"

namespace atrace::analysis {
namespace {

// Tries a connection this many times (a server still starting, a restart).
constexpr int kConnectTries = 4;

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// The first line of a server's error ("Code: 60, e.displayText() = ...",
// without 18.16's ", e.what() = DB::Exception" tail, which says nothing).
std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  const std::string tail = ", e.what() = DB::Exception";
  if (line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0)
    line.resize(line.size() - tail.size());
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

class Server {
 public:
  explicit Server(std::string url) : url_(std::move(url)) {
    static const bool inited = curl_global_init(CURL_GLOBAL_DEFAULT) == 0;
    (void)inited;
    curl_.reset(curl_easy_init());
    if (!curl_) throw LoadError("ClickHouse at " + url_ + ": libcurl could not start");
    headers_ = curl_slist_append(nullptr, "Expect:");  // no 100-continue round trip
  }
  ~Server() { curl_slist_free_all(headers_); }

  // Runs `sql` with `body` (an INSERT's rows) and returns the answer.
  std::string run(const std::string& sql, const std::string& body = "") {
    char* q = curl_easy_escape(curl_.get(), sql.data(), static_cast<int>(sql.size()));
    const std::string url = url_ + "/?query=" + q;
    curl_free(q);
    for (int attempt = 1;; ++attempt) {
      std::string answer;
      CURL* c = curl_.get();
      curl_easy_setopt(c, CURLOPT_URL, url.c_str());
      curl_easy_setopt(c, CURLOPT_POST, 1L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers_);
      curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
      curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
      curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
      curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
      const CURLcode rc = curl_easy_perform(c);
      if (rc == CURLE_COULDNT_CONNECT && attempt < kConnectTries) {
        ::usleep(250000u << attempt);  // 0.5, 1, 2 s: nothing was sent, so retrying is safe
        continue;
      }
      if (rc != CURLE_OK)
        throw LoadError("ClickHouse at " + url_ + ": " + curl_easy_strerror(rc) +
                        (rc == CURLE_COULDNT_CONNECT
                             ? " (" + std::to_string(kConnectTries) + " tries)"
                             : std::string()));
      long status = 0;
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
      if (status != 200) {
        std::string what = first_line(answer);
        if (what.empty()) what = "HTTP status " + std::to_string(status);
        throw LoadError("ClickHouse at " + url_ + ": " + what);
      }
      return answer;
    }
  }

  const std::string& url() const { return url_; }

 private:
  struct Cleanup {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
  };
  std::string url_;
  std::unique_ptr<CURL, Cleanup> curl_;
  curl_slist* headers_ = nullptr;
};

// "name\ttype\n" per column: what system.columns says a table must hold.
std::string expected_columns(const TableDef& t) {
  std::string s;
  for (const auto& c : t.columns) s += std::string(c.name) + "\t" + c.type + "\n";
  return s;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Sends each batch on a thread of its own while the next one is built
// (the server parses while the replay runs), one at a time and in order:
// a batch is sent only once the one before it was taken, so `traces`
// still goes last.
class Inserter : public TableSink {
 public:
  Inserter(Server& server, const std::string& db) : server_(server), db_(db) {}
  ~Inserter() override { wait_quietly(); }
  void rows(const TableDef& table, const std::string& tsv, size_t) override {
    finish();
    sending_ = tsv;
    const std::string sql = "INSERT INTO " + db_ + "." + table.name + " FORMAT TabSeparated";
    pending_ = std::async(std::launch::async, [this, sql] { server_.run(sql, sending_); });
    inserted_ = true;
  }
  // Waits for the batch being sent; throws its error.
  void finish() {
    if (pending_.valid()) pending_.get();
  }
  // After a failure elsewhere: the batch in flight ends before cleaning up.
  void wait_quietly() {
    try {
      finish();
    } catch (const std::exception&) {
    }
  }
  bool inserted() const { return inserted_; }

 private:
  Server& server_;
  const std::string& db_;
  std::string sending_;
  std::future<void> pending_;
  bool inserted_ = false;
};

// Checks what exists, then creates what is missing: a database with a
// table of other columns is left as it was.
void prepare(Server& server, const std::string& db) {
  const std::string have =
      server.run("SELECT table, name, type FROM system.columns WHERE database = " + quoted(db) +
                 " FORMAT TabSeparated");
  std::map<std::string, std::string> columns;  // table -> "name\ttype\n" lines
  for (size_t at = 0; at < have.size();) {
    size_t tab = have.find('\t', at), end = have.find('\n', at);
    if (tab == std::string::npos || end == std::string::npos || tab > end) break;
    columns[have.substr(at, tab - at)] += have.substr(tab + 1, end - tab);
    at = end + 1;
  }
  for (const auto& t : table_defs()) {
    auto it = columns.find(t.name);
    if (it != columns.end() && it->second != expected_columns(t))
      throw LoadError("ClickHouse at " + server.url() + ": table " + db + "." + t.name +
                      " exists with other columns than atrace's (docs/tables.md): load into "
                      "another database, or drop that table");
  }
  server.run("CREATE DATABASE IF NOT EXISTS " + db);
  for (const auto& t : table_defs()) server.run(table_schema(t, db));
}

// Removes trace `id`'s rows from every table: each is one partition.
// Before a load, any failure is the load's; after a failed one, every
// table is tried and those that could not be cleaned are returned.
void drop_trace(Server& server, const std::string& db, uint64_t id) {
  for (const auto& t : table_defs())
    server.run("ALTER TABLE " + db + "." + t.name + " DROP PARTITION " + std::to_string(id));
}
std::string drop_trace_after_failure(Server& server, const std::string& db, uint64_t id) {
  std::string left;
  for (const auto& t : table_defs()) {
    try {
      server.run("ALTER TABLE " + db + "." + t.name + " DROP PARTITION " + std::to_string(id));
    } catch (const LoadError&) {
      left += (left.empty() ? "" : ", ") + db + "." + t.name;
    }
  }
  return left;
}

}  // namespace

ClickHouseUrl parse_clickhouse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    throw LoadError("--to=clickhouse: -o takes a URL http://HOST:PORT/DATABASE, not '" + url + "'");
  const size_t slash = url.find('/', scheme.size());
  ClickHouseUrl u;
  u.server = url.substr(0, slash);
  if (u.server.size() == scheme.size())
    throw LoadError("--to=clickhouse: '" + url + "' names no server");
  u.db = slash == std::string::npos ? "" : url.substr(slash + 1);
  while (!u.db.empty() && u.db.back() == '/') u.db.pop_back();
  if (u.db.empty()) u.db = "atrace";
  for (char c : u.db)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw LoadError("--to=clickhouse: database name '" + u.db +
                      "' in the URL: letters, digits and '_' only");
  return u;
}

LoadResult load_clickhouse(formats::TraceReader& reader, const std::string& url,
                           const std::string& salt, size_t batch_rows) {
  const ClickHouseUrl u = parse_clickhouse_url(url);
  Server server(u.server);
  prepare(server, u.db);
  LoadResult result;
  result.trace_id = trace_id(reader, salt);
  const std::string id = std::to_string(result.trace_id);
  const std::string loaded =
      server.run("SELECT count() FROM " + u.db + ".traces WHERE trace_id = " + id);
  if (first_line(loaded) != "0") {
    result.already_loaded = true;
    return result;
  }
  // Rows without a `traces` row: a load of this trace that was cut short.
  drop_trace(server, u.db, result.trace_id);
  Inserter inserter(server, u.db);
  try {
    result.counts = export_tables(reader, result.trace_id, inserter, batch_rows);
    inserter.finish();
  } catch (const std::exception& e) {
    std::string what = e.what();
    inserter.wait_quietly();
    if (!inserter.inserted()) throw LoadError(what + " (nothing was loaded)");
    const std::string left = drop_trace_after_failure(server, u.db, result.trace_id);
    if (left.empty()) {
      what += " (the rows loaded of trace " + id + " were removed)";
    } else {
      what += " (rows of trace " + id + " may be left in " + left +
              " without their `traces` row: loading the trace again removes them)";
    }
    throw LoadError(what);
  }
  return result;
}

}  // namespace atrace::analysis

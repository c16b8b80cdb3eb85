// The ClickHouse loader (clickhouse_load.h): libcurl POSTs to the HTTP
// interface, one statement each (a query in the URL, the rows as the body
// of an INSERT, in ClickHouse's Native format).
#include "output/clickhouse_load.h"

#include <curl/curl.h>
#include <unistd.h>

#include <future>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "base/plural.h"
#include "formats/trace_reader.h"
#include "output/table_native.h"

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
  // `params`: settings for every statement, "&name=value..." in the URL.
  explicit Server(std::string url, std::string params = "")
      : url_(std::move(url)), params_(std::move(params)) {
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
    const std::string url = url_ + "/?query=" + q + params_;
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
  std::string url_, params_;
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

// An answer's lines split at their first tab: (first field, the rest of
// the line, with its '\n' when `keep_newline`).
std::vector<std::pair<std::string, std::string>> tsv_pairs(const std::string& text,
                                                           bool keep_newline) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t at = 0; at < text.size();) {
    size_t tab = text.find('\t', at), end = text.find('\n', at);
    if (tab == std::string::npos || end == std::string::npos || tab > end) break;
    out.emplace_back(text.substr(at, tab - at),
                     text.substr(tab + 1, end - tab - (keep_newline ? 0 : 1)));
    at = end + 1;
  }
  return out;
}

// Sends each batch on a thread of its own while the next one is built
// (the server writes its part while the replay runs), one at a time and
// in order: a batch is sent only once the one before it was taken, so
// `traces` still goes last. A batch goes as one Native block in its
// sorting key's order (table_native.h): the server neither parses nor
// sorts it.
class Inserter : public TableSink {
 public:
  Inserter(Server& server, const std::string& db) : server_(server), db_(db) {}
  ~Inserter() override { wait_quietly(); }
  void rows(const TableBatch& batch) override {
    finish();
    sending_.clear();
    encoder_.append(batch, sending_);
    const std::string sql = "INSERT INTO " + db_ + "." + batch.def().name + " FORMAT Native";
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
  NativeEncoder encoder_;
  std::string sending_;  // the batch being sent, encoded
  std::future<void> pending_;
  bool inserted_ = false;
};

// Where a load goes: one server's MergeTree tables, or a cluster's shards
// (each with NAME_local MergeTree tables and NAME Distributed over them).
struct Target {
  std::vector<std::unique_ptr<Server>> shards;  // the first is the one inserted into
  std::string db, cluster;

  bool distributed() const { return !cluster.empty(); }
  // The table that holds the rows on a server.
  std::string local(const TableDef& t) const {
    return db + "." + t.name + (distributed() ? "_local" : "");
  }
};

// How a cluster spreads each table's rows: the big tables call by call
// (or interval by interval), so even one busy thread's calls are shared
// by the shards; the small per-trace tables by trace. No shipped query
// needs a thread's calls on one shard: they aggregate on the shards and
// join the rest on the server asked (GLOBAL).
const char* sharding_key(const std::string& table) {
  if (table == "calls") return "cityHash64(trace_id, call_id)";
  if (table == "kernel") return "cityHash64(trace_id, host, tid, start_ns)";
  if (table == "messages") return "cityHash64(trace_id, host, tid, ts_ns)";
  if (table == "message_pairs") return "cityHash64(trace_id, send_host, send_tid, send_ns)";
  if (table == "threads") return "cityHash64(trace_id, host, tid)";
  if (table == "processes") return "cityHash64(trace_id, host, pid)";
  return "trace_id";
}

// The cluster is in the server's remote_servers with one replica per
// shard, as many shards as the URL lists servers.
void check_cluster(Server& server, const Target& to) {
  const auto counts =
      server.run("SELECT uniqExact(shard_num), count() FROM system.clusters WHERE cluster = " +
                 quoted(to.cluster) + " FORMAT TabSeparated");
  const std::string shards = counts.substr(0, counts.find('\t'));
  const std::string replicas = first_line(counts.substr(counts.find('\t') + 1));
  const std::string where = "ClickHouse at " + server.url() + ": ";
  if (shards == "0")
    throw LoadError(where + "no cluster '" + to.cluster + "' in its remote_servers (--cluster)");
  if (shards != replicas)
    throw LoadError(where + "cluster '" + to.cluster +
                    "' has shards of several replicas: atrace loads one replica per shard");
  if (shards != std::to_string(to.shards.size()))
    throw LoadError(where + "cluster '" + to.cluster + "' has " + shards +
                    " shards and the URL lists " + base::plural(to.shards.size(), "server") +
                    ": list every shard's HTTP server (http://H1:P1,H2:P2/DB)");
}

// Checks what exists on every server, then creates what is missing: a
// database with a table of other columns or another engine is left as it
// was.
void prepare(const Target& to) {
  const std::string& db = to.db;
  for (const auto& server : to.shards) {
    if (to.distributed()) check_cluster(*server, to);
    const std::string have =
        server->run("SELECT table, name, type FROM system.columns WHERE database = " + quoted(db) +
                    " FORMAT TabSeparated");
    std::map<std::string, std::string> columns;  // table -> "name\ttype\n" lines
    for (const auto& [table, lines] : tsv_pairs(have, true)) columns[table] += lines;
    std::map<std::string, std::string> engine;
    for (const auto& [table, e] : tsv_pairs(
             server->run("SELECT name, engine FROM system.tables WHERE database = " + quoted(db) +
                         " FORMAT TabSeparated"),
             false))
      engine[table] = e;
    auto check = [&](const std::string& table, const std::string& columns_wanted,
                     const std::string& engine_wanted) {
      auto it = columns.find(table);
      if (it == columns.end()) return;
      const std::string what = it->second != columns_wanted ? "other columns than atrace's"
                               : engine[table] != engine_wanted
                                   ? "engine " + engine[table] + ", not " + engine_wanted
                                   : "";
      if (!what.empty())
        throw LoadError("ClickHouse at " + server->url() + ": table " + db + "." + table +
                        " exists with " + what + " (docs/tables.md): load into another " +
                        "database, or drop that table");
    };
    for (const auto& t : table_defs()) {
      if (to.distributed()) {
        check(std::string(t.name) + "_local", expected_columns(t), "MergeTree");
        check(t.name, expected_columns(t), "Distributed");
      } else {
        check(t.name, expected_columns(t), "MergeTree");
      }
    }
  }
  for (const auto& server : to.shards) {
    server->run("CREATE DATABASE IF NOT EXISTS " + db);
    for (const auto& t : table_defs()) {
      if (!to.distributed()) {
        server->run(table_schema(t, db));
        continue;
      }
      const std::string local = std::string(t.name) + "_local";
      TableDef def = t;
      def.name = local.c_str();
      server->run(table_schema(def, db));
      server->run("CREATE TABLE IF NOT EXISTS " + db + "." + t.name + " AS " + db + "." + local +
                  " ENGINE = Distributed(" + to.cluster + ", " + db + ", " + local + ", " +
                  sharding_key(t.name) + ")");
    }
  }
}

// Removes trace `id`'s rows from every table of every server: each is one
// partition. Before a load, any failure is the load's; after a failed
// one, every table is tried and those that could not be cleaned are
// returned.
void drop_trace(const Target& to, uint64_t id) {
  for (const auto& server : to.shards)
    for (const auto& t : table_defs())
      server->run("ALTER TABLE " + to.local(t) + " DROP PARTITION " + std::to_string(id));
}
std::string drop_trace_after_failure(const Target& to, uint64_t id) {
  std::string left;
  for (const auto& server : to.shards) {
    std::string tables;
    bool answers = true;  // a server gone (killed mid-load) is not asked again per table
    for (const auto& t : table_defs()) {
      try {
        if (answers)
          server->run("ALTER TABLE " + to.local(t) + " DROP PARTITION " + std::to_string(id));
        else tables += ", " + to.local(t);
      } catch (const LoadError&) {
        tables += (tables.empty() ? "" : ", ") + to.local(t);
        answers = false;
      }
    }
    if (tables.empty()) continue;
    if (!left.empty()) left += "; ";
    left += to.distributed() ? tables + " of " + server->url() : tables;
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
  const std::string hosts = url.substr(scheme.size(), slash - scheme.size());
  for (size_t at = 0;;) {
    const size_t comma = hosts.find(',', at);
    const std::string host = hosts.substr(at, comma == std::string::npos ? comma : comma - at);
    if (host.empty()) throw LoadError("--to=clickhouse: '" + url + "' names no server");
    u.servers.push_back(scheme + host);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  u.server = u.servers.front();
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
                           const std::string& salt, size_t batch_rows, const std::string& cluster) {
  const ClickHouseUrl u = parse_clickhouse_url(url);
  if (u.servers.size() > 1 && cluster.empty())
    throw LoadError("--to=clickhouse: '" + url +
                    "' lists several servers: they are a cluster's shards, name it (--cluster)");
  for (char c : cluster)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw LoadError("--cluster: '" + cluster + "': letters, digits and '_' only");
  Target to;
  to.db = u.db;
  to.cluster = cluster;
  for (const auto& s : u.servers) to.shards.push_back(std::make_unique<Server>(s));
  Server& front = *to.shards.front();
  prepare(to);
  LoadResult result;
  result.trace_id = trace_id(reader, salt);
  const std::string id = std::to_string(result.trace_id);
  const std::string loaded =
      front.run("SELECT count() FROM " + u.db + ".traces WHERE trace_id = " + id);
  if (first_line(loaded) != "0") {
    result.already_loaded = true;
    return result;
  }
  // Rows without a `traces` row: a load of this trace that was cut short.
  drop_trace(to, result.trace_id);
  // Through a Distributed table, an INSERT returns once every shard has
  // its rows (not when they are queued on the first server), so an error
  // is this load's and `traces` still goes in last.
  Server insert_to(u.server, to.distributed() ? "&insert_distributed_sync=1" : "");
  Inserter inserter(insert_to, u.db);
  try {
    result.counts = export_tables(reader, result.trace_id, inserter, batch_rows);
    inserter.finish();
  } catch (const std::exception& e) {
    std::string what = e.what();
    inserter.wait_quietly();
    if (!inserter.inserted()) throw LoadError(what + " (nothing was loaded)");
    const std::string left = drop_trace_after_failure(to, result.trace_id);
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

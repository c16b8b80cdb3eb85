// A real clickhouse-server for the typed-table tests (docs/tables.md):
// Debian's, started from a short config in a test's temp dir on free
// ports of 127.0.0.1, stopped (or killed) by the test. Several of them
// form a cluster when each gets the same `remote_servers` XML.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/convert_util.h"

namespace atrace::it {

// A port nothing listens on now (the kernel's choice of a free one).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

inline std::vector<std::vector<std::string>> tsv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      size_t tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

// clickhouse-server on 127.0.0.1, its files in `dir`. `started`: false
// for a cluster's servers, which learn each other's ports first.
class ClickHouseServer {
 public:
  explicit ClickHouseServer(const std::string& dir, bool started = true)
      : dir_(dir), http_(free_port()), tcp_(free_port()) {
    if (started) start();
  }
  ~ClickHouseServer() { stop(); }

  // More XML inside <yandex> (a cluster's <remote_servers>), from the
  // next start().
  void set_extra_config(const std::string& xml) { extra_ = xml; }

  // (Re)starts it on the same ports and files; ok() says whether it answers.
  void start() {
    const std::string config = dir_ + "/config.xml";
    std::ofstream(config) << "<?xml version=\"1.0\"?>\n<yandex>\n"
                          << "  <logger><level>warning</level><log>" << dir_
                          << "/server.log</log><errorlog>" << dir_
                          << "/error.log</errorlog><console>0</console></logger>\n"
                          << "  <http_port>" << http_ << "</http_port>\n"
                          << "  <tcp_port>" << tcp_ << "</tcp_port>\n"
                          << "  <listen_host>127.0.0.1</listen_host>\n"
                          << "  <path>" << dir_ << "/data/</path>\n"
                          << "  <tmp_path>" << dir_ << "/tmp/</tmp_path>\n"
                          << "  <users_config>/etc/clickhouse-server/users.xml</users_config>\n"
                          << "  <default_profile>default</default_profile>\n"
                          << "  <default_database>default</default_database>\n"
                          << "  <mark_cache_size>536870912</mark_cache_size>\n"
                          << extra_ << "</yandex>\n";
    child_ = std::make_unique<Child>(
        std::vector<std::string>{"clickhouse-server", "--config-file=" + config});
    ok_ = false;
    for (int i = 0; i < 300 && !ok_; ++i) {
      if (!child_->running()) break;
      ok_ = client("SELECT 1").exited(0);
      if (!ok_) ::usleep(100000);
    }
  }

  bool ok() const { return ok_; }
  int tcp_port() const { return tcp_; }
  int http_port() const { return http_; }
  std::string url(const std::string& db) const { return host() + "/" + db; }
  // "http://127.0.0.1:PORT"
  std::string host() const { return "http://127.0.0.1:" + std::to_string(http_); }
  Result client(const std::string& sql) {
    return run({"clickhouse-client", "--host=127.0.0.1", "--port=" + std::to_string(tcp_),
                "--query=" + sql},
               milliseconds(60000));
  }
  // The query's TabSeparated rows; a test failure when it fails.
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    Result r = client(sql);
    EXPECT_TRUE(r.exited(0)) << sql << "\n" << r.describe();
    return tsv_rows(r.out);
  }
  std::string value(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() || r[0].empty() ? "" : r[0][0];
  }
  void stop() { end(SIGTERM); }
  // kill -9: a server gone mid-load.
  void kill() { end(SIGKILL); }
  std::string log() const { return read_whole(dir_ + "/error.log"); }

 private:
  void end(int sig) {
    if (!child_) return;
    child_->signal(sig);
    child_->wait(milliseconds(60000));
    child_.reset();
    ok_ = false;
  }

  std::string dir_;
  int http_, tcp_;
  std::string extra_;
  std::unique_ptr<Child> child_;
  bool ok_ = false;
};

#define REQUIRE_CLICKHOUSE()         \
  REQUIRE_TOOL("clickhouse-server"); \
  REQUIRE_TOOL("clickhouse-client")

// A shipped query (docs/sql/NAME), as the docs tell a user to run it.
inline std::string shipped_query(const std::string& name) {
  return read_whole(std::string(DOCS_SQL_DIR) + "/" + name);
}

}  // namespace atrace::it

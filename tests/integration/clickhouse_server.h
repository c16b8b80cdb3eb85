// A clickhouse-server for a test: Debian's, started from a short config in
// the test's temp dir on free ports of 127.0.0.1, stopped at destruction.
// (The same server test_tables.cpp starts; a header so other suites, the
// big trace's load, can start one too.)
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/convert_util.h"

namespace atrace::it {

class TestClickHouse {
 public:
  explicit TestClickHouse(const std::string& dir)
      : dir_(dir), http_(free_port()), tcp_(free_port()) {
    const std::string config = dir + "/config.xml";
    std::ofstream(config) << "<?xml version=\"1.0\"?>\n<yandex>\n"
                          << "  <logger><level>warning</level><log>" << dir
                          << "/server.log</log><errorlog>" << dir
                          << "/error.log</errorlog><console>0</console></logger>\n"
                          << "  <http_port>" << http_ << "</http_port>\n"
                          << "  <tcp_port>" << tcp_ << "</tcp_port>\n"
                          << "  <listen_host>127.0.0.1</listen_host>\n"
                          << "  <path>" << dir << "/data/</path>\n"
                          << "  <tmp_path>" << dir << "/tmp/</tmp_path>\n"
                          << "  <users_config>/etc/clickhouse-server/users.xml</users_config>\n"
                          << "  <default_profile>default</default_profile>\n"
                          << "  <default_database>default</default_database>\n"
                          << "  <mark_cache_size>536870912</mark_cache_size>\n"
                          << "</yandex>\n";
    child_ = std::make_unique<Child>(
        std::vector<std::string>{"clickhouse-server", "--config-file=" + config});
    for (int i = 0; i < 300 && !ok_; ++i) {
      if (!child_->running()) break;
      ok_ = client("SELECT 1").exited(0);
      if (!ok_) ::usleep(100000);
    }
  }
  ~TestClickHouse() { stop(); }
  TestClickHouse(const TestClickHouse&) = delete;
  TestClickHouse& operator=(const TestClickHouse&) = delete;

  bool ok() const { return ok_; }
  std::string url(const std::string& db) const {
    return "http://127.0.0.1:" + std::to_string(http_) + "/" + db;
  }
  Result client(const std::string& sql) {
    return run({"clickhouse-client", "--host=127.0.0.1", "--port=" + std::to_string(tcp_),
                "--query=" + sql},
               milliseconds(600000));
  }
  void stop() {
    if (!child_) return;
    child_->signal(SIGTERM);
    child_->wait(milliseconds(60000));
    child_.reset();
  }
  std::string log() const { return read_whole(dir_ + "/error.log"); }

 private:
  // A port nothing listens on now (the kernel's choice of a free one).
  static int free_port() {
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

  std::string dir_;
  int http_, tcp_;
  std::unique_ptr<Child> child_;
  bool ok_ = false;
};

}  // namespace atrace::it

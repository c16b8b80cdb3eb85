// `--to=clickhouse -o URL` (output/clickhouse_load.h): one server, or a
// cluster's shards listed before the database.
#include <gtest/gtest.h>

#include "output/clickhouse_load.h"

namespace atrace::analysis {
namespace {

TEST(ClickHouseUrl, OneServer) {
  const ClickHouseUrl u = parse_clickhouse_url("http://127.0.0.1:8123/traces");
  EXPECT_EQ(u.server, "http://127.0.0.1:8123");
  EXPECT_EQ(u.servers, std::vector<std::string>{"http://127.0.0.1:8123"});
  EXPECT_EQ(u.db, "traces");
  EXPECT_EQ(parse_clickhouse_url("http://h:8123").db, "atrace");
  EXPECT_EQ(parse_clickhouse_url("http://h:8123/").db, "atrace");
}

TEST(ClickHouseUrl, ShardsOfACluster) {
  const ClickHouseUrl u = parse_clickhouse_url("http://a:8123,b:8124,c/db");
  EXPECT_EQ(u.servers, (std::vector<std::string>{"http://a:8123", "http://b:8124", "http://c"}));
  EXPECT_EQ(u.server, "http://a:8123");
  EXPECT_EQ(u.db, "db");
}

TEST(ClickHouseUrl, Refused) {
  for (const char* bad : {"https://a/db", "http:///db", "http://a,,b/db", "http://a,/db",
                          "http://a/db;DROP", "a:8123/db"})
    EXPECT_THROW(parse_clickhouse_url(bad), LoadError) << bad;
}

}  // namespace
}  // namespace atrace::analysis

// The exporters' escaping and number formats (output/text_escape.h) and
// the protobuf wire encoding of the Perfetto exporter (proto_wire.h): every
// field must come out valid whatever bytes the traced program put in a name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "output/proto_wire.h"
#include "output/text_escape.h"

using namespace atrace::analysis;

namespace {

std::string json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}
std::string csv(std::string_view s) {
  std::string out;
  append_csv_field(out, s);
  return out;
}
std::string paje(std::string_view s) {
  std::string out;
  append_paje_string(out, s);
  return out;
}
std::string hex_bytes(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += out.empty() ? "" : " ";
    out += buf;
  }
  return out;
}

TEST(ExportJson, EscapesWhatJsonRequires) {
  EXPECT_EQ(json("plain"), "\"plain\"");
  EXPECT_EQ(json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json("l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
  EXPECT_EQ(json(std::string("a\x01z", 3)), "\"a\\u0001z\"");
  EXPECT_EQ(json(std::string("\0", 1)), "\"\\u0000\"");
  EXPECT_EQ(json("\x7f"), "\"\\u007f\"");
}

TEST(ExportJson, KeepsValidUtf8AndReplacesInvalid) {
  EXPECT_EQ(json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(json("a\xff"
                 "b"),
            "\"a" + r + "b\"");
  EXPECT_EQ(json("\xc3"), "\"" + r + "\"");                          // cut sequence
  EXPECT_EQ(json("\xc0\xaf"), "\"" + r + r + "\"");                  // overlong
  EXPECT_EQ(json("\xed\xa0\x80"), "\"" + r + r + r + "\"");          // surrogate
  EXPECT_EQ(json("\xf4\x90\x80\x80"), "\"" + r + r + r + r + "\"");  // > U+10FFFF
}

TEST(ExportJson, AnyBytesParseBackWithNlohmann) {
  // Every byte value, in every position a name can put it.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (const std::string& s : {all, std::string("x\xe2\x82"), std::string("\"},{\"ph\":\"X")}) {
    std::string doc = "{\"name\":" + json(s) + "}";
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(doc)) << doc;
    std::string back = parsed["name"];
    if (s == "\"},{\"ph\":\"X") {
      EXPECT_EQ(back, s);  // valid input comes back unchanged
    }
  }
  std::string ascii;
  for (int c = 0; c < 128; ++c) ascii += static_cast<char>(c);
  EXPECT_EQ(nlohmann::json::parse("[" + json(ascii) + "]")[0].get<std::string>(), ascii);
}

TEST(ExportCsv, QuotesOnlyWhenNeededRfc4180) {
  EXPECT_EQ(csv("leaf"), "leaf");
  EXPECT_EQ(csv(""), "");
  EXPECT_EQ(csv("ns::add<int>(int, int)"), "\"ns::add<int>(int, int)\"");
  EXPECT_EQ(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv("bad\xff"), "bad\xef\xbf\xbd");
  EXPECT_EQ(csv("q\"\xff"), "\"q\"\"\xef\xbf\xbd\"");
}

TEST(ExportPaje, AlwaysQuotedNeverBroken) {
  EXPECT_EQ(paje("leaf"), "\"leaf\"");
  EXPECT_EQ(paje("f(char const*, int)"), "\"f(char const*, int)\"");
  EXPECT_EQ(paje("a\"b"), "\"a'b\"");
  EXPECT_EQ(paje("l1\nl2\t"), "\"l1 l2 \"");
}

TEST(ExportNumbers, MicrosecondsAndSecondsExactToTheNanosecond) {
  auto us = [](uint64_t ns) {
    std::string s;
    append_us(s, ns);
    return s;
  };
  auto sec = [](uint64_t ns) {
    std::string s;
    append_seconds(s, ns);
    return s;
  };
  EXPECT_EQ(us(0), "0.000");
  EXPECT_EQ(us(7), "0.007");
  EXPECT_EQ(us(1234567), "1234.567");
  EXPECT_EQ(us(20166163372887), "20166163372.887");
  EXPECT_EQ(us(UINT64_MAX), "18446744073709551.615");
  EXPECT_EQ(sec(0), "0.000000000");
  EXPECT_EQ(sec(1500000000), "1.500000000");
  EXPECT_EQ(sec(12), "0.000000012");
  std::string s;
  append_int(s, -38);
  append_hex(s, 255);
  append_uint(s, 18446744073709551615ull);
  EXPECT_EQ(s, "-380xff18446744073709551615");
}

TEST(ProtoWire, VarintsAsTheSpecSays) {
  auto v = [](uint64_t x) {
    std::string s;
    proto::append_varint(s, x);
    return hex_bytes(s);
  };
  // protobuf.dev/programming-guides/encoding: 1 -> 01, 150 -> 96 01.
  EXPECT_EQ(v(0), "00");
  EXPECT_EQ(v(1), "01");
  EXPECT_EQ(v(127), "7f");
  EXPECT_EQ(v(128), "80 01");
  EXPECT_EQ(v(150), "96 01");
  EXPECT_EQ(v(300), "ac 02");
  EXPECT_EQ(v(UINT64_MAX), "ff ff ff ff ff ff ff ff ff 01");
}

TEST(ProtoWire, TagsFieldsAndNesting) {
  // The spec's example: field 1 = 150 is 08 96 01; field 2 = "testing" is
  // 12 07 74 65 73 74 69 6e 67.
  proto::Message m;
  m.uint(1, 150);
  EXPECT_EQ(hex_bytes(m.data()), "08 96 01");
  m.clear();
  m.bytes(2, "testing");
  EXPECT_EQ(hex_bytes(m.data()), "12 07 74 65 73 74 69 6e 67");
  // Nested: field 3 holding the first message (the spec's "1a 03 08 96 01").
  proto::Message inner, outer;
  inner.uint(1, 150);
  outer.message(3, inner);
  EXPECT_EQ(hex_bytes(outer.data()), "1a 03 08 96 01");
  // Field numbers past 15 take two bytes of tag: TracePacket.track_descriptor
  // (60, LEN) is e2 03; negative int64 is ten bytes.
  proto::Message big;
  big.bytes(60, "");
  big.sint64(4, -1);
  EXPECT_EQ(hex_bytes(big.data()), "e2 03 00 20 ff ff ff ff ff ff ff ff ff 01");
}

}  // namespace

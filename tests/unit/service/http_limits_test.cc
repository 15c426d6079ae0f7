// The HTTP frontend's request limits without a socket: Content-Encoding
// undone within the cap (http_body.h), the JSON nesting check with its
// paths, and ParseHttpRequest (http_server.h), the parser and limits the
// server applies to a connection's bytes.
#include <zlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http_body.h"
#include "http_server.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::service {
namespace {

using ::testing::HasSubstr;

std::string Gzip(const std::string& data) {
  z_stream zs{};
  // 15 + 16: gzip framing.
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(DecodeContentTest, GzipIsUndoneWithinTheCap) {
  EXPECT_EQ(*DecodeContent(Gzip("{\"a\":1}"), "gzip", 100), "{\"a\":1}");
  EXPECT_EQ(*DecodeContent("{}", "", 100), "{}");
  EXPECT_EQ(*DecodeContent("{}", "Identity", 100), "{}");
  // 1 MiB of zeros deflates to about 1 KB; a 64 KiB cap stops the inflation.
  const std::string bomb = Gzip(std::string(1 << 20, '\0'));
  EXPECT_LT(bomb.size(), 8u << 10);
  absl::StatusOr<std::string> r = DecodeContent(bomb, "gzip", 64 << 10);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("--max-message-bytes"));
  // Exactly at the cap passes.
  EXPECT_EQ(DecodeContent(bomb, "gzip", 1 << 20)->size(), 1u << 20);
}

TEST(DecodeContentTest, BadDataAndOtherEncodings) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(DecodeContent("not gzip", "gzip", 100).status()));
  const std::string cut = Gzip("{\"a\":1}").substr(0, 8);  // header only
  EXPECT_TRUE(
      absl::IsInvalidArgument(DecodeContent(cut, "gzip", 100).status()));
  absl::Status br = DecodeContent("x", "br", 100).status();
  EXPECT_TRUE(absl::IsUnimplemented(br));
  EXPECT_THAT(std::string(br.message()), HasSubstr("Content-Encoding"));
}

TEST(CheckJsonNestingTest, PathsOfListsInLists) {
  EXPECT_TRUE(
      CheckJsonNesting(R"({"batchSizes":[1,2],"m":{"x":[{"y":1}]}})", 32).ok());
  absl::Status s = CheckJsonNesting(R"({"a":1,"batchSizes":[1,[2]]})", 32);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  // The second element (index 1) of batchSizes opens the inner list.
  EXPECT_EQ(engine::FieldPathOf(s), "batchSizes[1]");
  EXPECT_THAT(std::string(s.message()), HasSubstr("array inside an array"));
  // Brackets and quotes inside strings are text, not structure.
  EXPECT_TRUE(CheckJsonNesting(R"({"k":"[[\"{{","l":["]]"]})", 32).ok());
  // A top-level list of lists: the path starts at the request.
  EXPECT_EQ(engine::FieldPathOf(CheckJsonNesting("[[1]]", 32)), "[0]");
}

TEST(CheckJsonNestingTest, DepthCapNamesThePath) {
  // Depth 3 ({ { {) under a cap of 3 passes; a fourth level is refused at
  // the path of the value that opens it.
  EXPECT_TRUE(CheckJsonNesting(R"({"a":{"b":{"c":1}}})", 3).ok());
  absl::Status s = CheckJsonNesting(R"({"a":{"b":{"c":{"d":1}}}})", 3);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(engine::FieldPathOf(s), "a.b.c");
  EXPECT_THAT(std::string(s.message()), HasSubstr("deeper than 3"));
  // Unbalanced or truncated text is left to the JSON parser.
  EXPECT_TRUE(CheckJsonNesting("}}]]{\"", 3).ok());
}

HttpLimits Small() {
  HttpLimits l;
  l.max_body_bytes = 1000;
  l.max_header_bytes = 2000;
  l.max_header_count = 10;
  return l;
}

TEST(ParseHttpRequestTest, AWholeRequest) {
  ParsedHttpRequest p = ParseHttpRequest(
      "POST /v1/Analyze?x=1 HTTP/1.1\r\nHost: h\r\nContent-Type: "
      "application/json\r\nContent-Length: 2\r\n\r\n{}",
      Small());
  ASSERT_EQ(p.refuse, 0) << p.why;
  EXPECT_EQ(p.request.method, "POST");
  EXPECT_EQ(p.request.Path(), "/v1/Analyze");
  EXPECT_EQ(p.request.Header("content-type"), "application/json");
  EXPECT_EQ(p.request.body, "{}");
  EXPECT_TRUE(p.keep_alive);
  // Cut short: the server would read on.
  EXPECT_EQ(ParseHttpRequest("GET / HTTP/1.1\r\nHost:", Small()).refuse, -1);
  EXPECT_EQ(ParseHttpRequest("NOT HTTP\r\n\r\n", Small()).refuse, 400);
}

TEST(ParseHttpRequestTest, ChunkedBodiesCountAsTheyArrive) {
  // Two chunks of 0x258 = 600 bytes: 1200 > 1000 at the second chunk.
  const std::string chunk = "258\r\n" + std::string(600, 'x') + "\r\n";
  ParsedHttpRequest p = ParseHttpRequest(
      "POST /v1/Analyze HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
      "chunked\r\n\r\n" +
          chunk + chunk + "0\r\n\r\n",
      Small());
  EXPECT_EQ(p.refuse, 413);
  // Content-Length over the cap: refused before any body byte.
  EXPECT_EQ(ParseHttpRequest("POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n",
                             Small())
                .refuse,
            413);
  // Chunked within the cap is joined.
  p = ParseHttpRequest(
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\n{}\r\n0\r\n\r\n",
      Small());
  ASSERT_EQ(p.refuse, 0) << p.why;
  EXPECT_EQ(p.request.body, "{}");
}

TEST(ParseHttpRequestTest, GzipBodiesAreCappedAfterInflating) {
  // 4000 spaces deflate to a few dozen bytes, inflate past the 1000 cap.
  const std::string bomb = Gzip(std::string(4000, ' '));
  ParsedHttpRequest p = ParseHttpRequest(
      absl::StrCat("POST / HTTP/1.1\r\nContent-Encoding: gzip\r\n"
                   "Content-Length: ",
                   bomb.size(), "\r\n\r\n", bomb),
      Small());
  EXPECT_EQ(p.refuse, 413);
  const std::string good = Gzip("{\"a\":1}");
  p = ParseHttpRequest(absl::StrCat("POST / HTTP/1.1\r\nContent-Encoding: "
                                    "gzip\r\nContent-Length: ",
                                    good.size(), "\r\n\r\n", good),
                       Small());
  ASSERT_EQ(p.refuse, 0) << p.why;
  EXPECT_EQ(p.request.body, "{\"a\":1}");
  EXPECT_EQ(ParseHttpRequest("POST / HTTP/1.1\r\nContent-Encoding: br\r\n"
                             "Content-Length: 1\r\n\r\nx",
                             Small())
                .refuse,
            415);
}

TEST(ParseHttpRequestTest, HeaderCountAndBytes) {
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 11; ++i) absl::StrAppend(&many, "X-", i, ": v\r\n");
  // 11 fields > 10.
  EXPECT_EQ(ParseHttpRequest(many + "\r\n", Small()).refuse, 431);
  // One 3000-byte field > the 2000-byte head.
  EXPECT_EQ(ParseHttpRequest("GET / HTTP/1.1\r\nX-Big: " +
                                 std::string(3000, 'y') + "\r\n\r\n",
                             Small())
                .refuse,
            431);
}

}  // namespace
}  // namespace ridgeline::service

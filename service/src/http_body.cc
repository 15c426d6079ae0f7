#include "http_body.h"

#include <zlib.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::service {
namespace {

absl::StatusOr<std::string> Inflate(const std::string& in, int64_t max_bytes) {
  z_stream zs{};
  // 15 + 32: a zlib or gzip header, detected (HTTP's "deflate" is zlib).
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    return absl::InternalError("request: zlib could not start");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char chunk[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    const size_t produced = sizeof chunk - zs.avail_out;
    if (static_cast<int64_t>(out.size() + produced) > max_bytes) {
      inflateEnd(&zs);
      return absl::ResourceExhaustedError(absl::StrCat(
          "request: the decoded body is larger than --max-message-bytes (",
          max_bytes, " bytes)"));
    }
    out.append(chunk, produced);
    if (rc == Z_OK && produced == 0 && zs.avail_in == 0) {
      rc = Z_BUF_ERROR;  // the input ended before the stream did
      break;
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return absl::InvalidArgumentError(
        "Content-Encoding: the body is not valid gzip/deflate data");
  }
  return out;
}

}  // namespace

absl::Status CheckContentEncoding(absl::string_view content_encoding) {
  const std::string enc =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(content_encoding));
  if (enc.empty() || enc == "identity" || enc == "gzip" || enc == "x-gzip" ||
      enc == "deflate") {
    return absl::OkStatus();
  }
  return absl::UnimplementedError(absl::StrCat(
      "Content-Encoding: must be identity, gzip or deflate; got \"",
      enc.substr(0, 64), "\""));
}

absl::StatusOr<std::string> DecodeContent(std::string body,
                                          absl::string_view content_encoding,
                                          int64_t max_bytes) {
  if (absl::Status s = CheckContentEncoding(content_encoding); !s.ok()) {
    return s;
  }
  const std::string enc =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(content_encoding));
  if (enc.empty() || enc == "identity") return body;
  return Inflate(body, max_bytes);
}

absl::Status CheckJsonNesting(absl::string_view json, int max_depth) {
  // One frame per open object or array: its kind, the key of the member
  // being read (objects) or the element index (arrays). Keys are kept to 64
  // characters, so memory is bounded by max_depth.
  struct Frame {
    char kind;  // '{' or '['
    std::string key;
    int64_t index = 0;
  };
  std::vector<Frame> stack;
  bool expect_key = false;  // in an object, before a member's name
  auto path = [&stack] {
    std::string p;
    for (const Frame& f : stack) {
      if (f.kind == '[') {
        absl::StrAppend(&p, "[", f.index, "]");
      } else {
        absl::StrAppend(&p, p.empty() ? "" : ".", f.key);
      }
    }
    return p.empty() ? std::string("request") : p;
  };
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    switch (c) {
      case '"': {
        const size_t begin = i + 1;
        for (++i; i < json.size() && json[i] != '"'; ++i) {
          if (json[i] == '\\') ++i;  // the escaped character
        }
        if (expect_key && !stack.empty()) {
          stack.back().key =
              std::string(json.substr(begin, std::min<size_t>(i - begin, 64)));
          expect_key = false;
        }
        break;
      }
      case '{':
      case '[': {
        if (c == '[' && !stack.empty() && stack.back().kind == '[') {
          return engine::WithFieldPath(
              absl::InvalidArgumentError(absl::StrCat(
                  path(),
                  ": an array inside an array (a repeated field holds "
                  "numbers, strings or objects)")),
              path());
        }
        if (static_cast<int>(stack.size()) >= max_depth) {
          return engine::WithFieldPath(
              absl::InvalidArgumentError(
                  absl::StrCat(path(), ": objects and arrays nest deeper than ",
                               max_depth, " levels")),
              path());
        }
        stack.push_back(Frame{c, "", 0});
        expect_key = c == '{';
        break;
      }
      case '}':
      case ']':
        if (!stack.empty()) stack.pop_back();
        expect_key = false;
        break;
      case ',':
        if (!stack.empty()) {
          if (stack.back().kind == '[') {
            ++stack.back().index;
          } else {
            expect_key = true;
          }
        }
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::service

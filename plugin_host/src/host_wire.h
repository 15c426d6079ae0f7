// The messages between the server and a plugin-host child process
// (hosted_plugin.h), and their framing on a stream socket. Internal to
// plugin_host. Every message is one frame: a 4-byte little-endian length,
// then the payload. The parent treats every byte from the child as
// untrusted: readers are bounds-checked and strings are checked as the
// in-process loader checks them.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/hardware.h"

namespace ridgeline::plugin_host::wire {

// Appends fixed-size little-endian fields (the host and the child are the
// same binary, so only the sizes are fixed, not the byte order).
class Writer {
 public:
  void U8(uint8_t v) { Raw(&v, 1); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void I32(int32_t v) { Raw(&v, 4); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F64(double v) { Raw(&v, 8); }
  void Str(absl::string_view s);
  void OptF64(const std::optional<double>& v);
  const std::string& data() const { return data_; }

 private:
  void Raw(const void* p, size_t n) {
    data_.append(static_cast<const char*>(p), n);
  }
  std::string data_;
};

// Reads what Writer wrote; any read past the end (or a string longer than
// its bound) makes ok() false and later reads return zeros.
class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}
  uint8_t U8() { return Get<uint8_t>(); }
  uint32_t U32() { return Get<uint32_t>(); }
  int32_t I32() { return Get<int32_t>(); }
  int64_t I64() { return Get<int64_t>(); }
  double F64() { return Get<double>(); }
  std::string Str(size_t max);
  std::optional<double> OptF64();
  bool ok() const { return ok_; }
  bool done() const { return ok_ && data_.empty(); }

 private:
  template <typename T>
  T Get() {
    T v{};
    if (!ok_ || data_.size() < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, data_.data(), sizeof(T));
    data_.remove_prefix(sizeof(T));
    return v;
  }
  absl::string_view data_;
  bool ok_ = true;
};

// engine::Hardware without its hook and plugin file name (the parent sets
// both).
void PutHardware(Writer& w, const engine::Hardware& hw);
// INVALID_ARGUMENT naming what is malformed (counts, tier kinds, string
// lengths and UTF-8 checked; numbers are left to engine::ValidateHardware).
absl::Status GetHardware(Reader& r, engine::Hardware* hw);

// The child's first message: what the plugin contains, or why it failed.
struct LoadReply {
  bool ok = false;
  std::string family, plugin_version;
  std::string reason;  // when !ok
  bool has_hook = false;
  std::vector<engine::Hardware> platforms;
};
std::string EncodeLoadReply(const LoadReply& reply);
absl::StatusOr<LoadReply> DecodeLoadReply(absl::string_view payload);

// One efficiency hook call: the platform's index in get_platform order.
struct HookRequest {
  uint32_t index = 0;
  engine::OpShape shape{};
};
std::string EncodeHookRequest(const HookRequest& request);
absl::StatusOr<HookRequest> DecodeHookRequest(absl::string_view payload);

// The hook's answer as the plugin's table gave it: an error (code != 0,
// message) or both efficiencies (both 0: no opinion). The parent checks
// the answer itself (CheckHookAnswer).
struct HookReply {
  int32_t code = 0;
  std::string message;
  double compute = 0, memory = 0;
};
std::string EncodeHookReply(const HookReply& reply);
absl::StatusOr<HookReply> DecodeHookReply(absl::string_view payload);

// Frames larger than this are refused (a platform list is a few KiB).
inline constexpr uint32_t kMaxFrameBytes = 16u << 20;

// Writes one frame; never raises SIGPIPE. UNAVAILABLE when the peer is gone.
absl::Status WriteFrame(int fd, absl::string_view payload);

// Reads one frame. `deadline` nullopt: wait for ever. DEADLINE_EXCEEDED at
// the deadline, CANCELLED when `cancelled` (polled every 20 ms; may be
// empty) says so, UNAVAILABLE at end of stream, DATA_LOSS for a frame over
// kMaxFrameBytes.
absl::StatusOr<std::string> ReadFrame(
    int fd, std::optional<std::chrono::steady_clock::time_point> deadline,
    const std::function<bool()>& cancelled = nullptr);

}  // namespace ridgeline::plugin_host::wire

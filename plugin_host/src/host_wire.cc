#include "host_wire.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/plugin_host/plugin_library.h"

namespace ridgeline::plugin_host::wire {
namespace {

// The in-process loader's bounds (plugin_library.cc).
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxSourceBytes = 65536;
constexpr uint32_t kMaxSources = 4096;
constexpr uint32_t kMaxPlatforms = 4096;

void PutPerMath(Writer& w, const engine::PerMathType& v) {
  for (const std::optional<double>& x : v) w.OptF64(x);
}
engine::PerMathType GetPerMath(Reader& r) {
  engine::PerMathType v;
  for (std::optional<double>& x : v) x = r.OptF64();
  return v;
}

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed message from the plugin-host process: ", what));
}

// A string from the child, checked as the loader checks plugin strings.
absl::Status GetString(Reader& r, const std::string& field, size_t max,
                       std::string* out) {
  *out = r.Str(max);
  if (!r.ok())
    return Malformed(absl::StrCat(field, " is cut short or too long"));
  return CheckPluginString(field, *out, max);
}

}  // namespace

void Writer::Str(absl::string_view s) {
  U32(static_cast<uint32_t>(s.size()));
  Raw(s.data(), s.size());
}

void Writer::OptF64(const std::optional<double>& v) {
  U8(v.has_value() ? 1 : 0);
  F64(v.value_or(0));
}

std::string Reader::Str(size_t max) {
  const uint32_t n = U32();
  if (!ok_ || n > max || data_.size() < n) {
    ok_ = false;
    return {};
  }
  std::string s(data_.data(), n);
  data_.remove_prefix(n);
  return s;
}

std::optional<double> Reader::OptF64() {
  const uint8_t has = U8();
  const double v = F64();
  if (has > 1) ok_ = false;
  if (has == 0) return std::nullopt;
  return v;
}

void PutHardware(Writer& w, const engine::Hardware& hw) {
  w.Str(hw.id);
  w.Str(hw.display_name);
  w.Str(hw.vendor);
  w.Str(hw.family);
  w.U32(static_cast<uint32_t>(hw.sources.size()));
  for (const std::string& s : hw.sources) w.Str(s);
  PutPerMath(w, hw.peak_ops_per_second);
  PutPerMath(w, hw.energy_joules_per_op);
  w.F64(hw.kernel_launch_seconds);
  w.U32(static_cast<uint32_t>(hw.tiers.size()));
  for (const engine::MemoryTier& t : hw.tiers) {
    w.Str(t.name);
    w.U8(static_cast<uint8_t>(t.kind));
    w.F64(t.capacity_bytes);
    w.F64(t.read_bandwidth_bytes_per_second);
    w.F64(t.write_bandwidth_bytes_per_second);
    w.F64(t.latency_seconds);
    w.OptF64(t.energy_joules_per_byte);
    w.F64(t.inline_ecc_share);
    w.U8(t.near_memory_compute.has_value() ? 1 : 0);
    if (t.near_memory_compute.has_value()) {
      w.F64(t.near_memory_compute->internal_bandwidth_bytes_per_second);
      PutPerMath(w, t.near_memory_compute->peak_ops_per_second);
      w.OptF64(t.near_memory_compute->energy_joules_per_op);
    }
  }
  w.OptF64(hw.tdp_watts);
  w.OptF64(hw.idle_watts);
  w.OptF64(hw.price_usd);
  w.OptF64(hw.embodied_kg_co2e);
  w.OptF64(hw.interconnect_bytes_per_second);
  w.OptF64(hw.scale_up_latency_seconds);
  w.OptF64(hw.scale_out_bytes_per_second);
  w.OptF64(hw.scale_out_latency_seconds);
  w.U8(hw.devices_per_node.has_value() ? 1 : 0);
  w.I64(hw.devices_per_node.value_or(0));
  w.U8(hw.compute_units.has_value() ? 1 : 0);
  w.I64(hw.compute_units.value_or(0));
  w.OptF64(hw.last_level_cache_bytes);
}

absl::Status GetHardware(Reader& r, engine::Hardware* hw) {
  RETURN_IF_ERROR(GetString(r, "id", kMaxNameBytes, &hw->id));
  RETURN_IF_ERROR(
      GetString(r, "display_name", kMaxNameBytes, &hw->display_name));
  RETURN_IF_ERROR(GetString(r, "vendor", kMaxNameBytes, &hw->vendor));
  RETURN_IF_ERROR(GetString(r, "family", kMaxNameBytes, &hw->family));
  const uint32_t sources = r.U32();
  if (!r.ok() || sources > kMaxSources) return Malformed("source count");
  for (uint32_t i = 0; i < sources; ++i) {
    std::string s;
    RETURN_IF_ERROR(GetString(r, "sources", kMaxSourceBytes, &s));
    hw->sources.push_back(std::move(s));
  }
  hw->peak_ops_per_second = GetPerMath(r);
  hw->energy_joules_per_op = GetPerMath(r);
  hw->kernel_launch_seconds = r.F64();
  const uint32_t tiers = r.U32();
  if (!r.ok() || tiers > engine::kMaxTiers) return Malformed("tier count");
  for (uint32_t i = 0; i < tiers; ++i) {
    engine::MemoryTier t;
    RETURN_IF_ERROR(GetString(r, absl::StrCat("tiers[", i, "].name"),
                              kMaxNameBytes, &t.name));
    const uint8_t kind = r.U8();
    if (kind >= engine::kTierKindCount) return Malformed("tier kind");
    t.kind = static_cast<engine::TierKind>(kind);
    t.capacity_bytes = r.F64();
    t.read_bandwidth_bytes_per_second = r.F64();
    t.write_bandwidth_bytes_per_second = r.F64();
    t.latency_seconds = r.F64();
    t.energy_joules_per_byte = r.OptF64();
    t.inline_ecc_share = r.F64();
    const uint8_t nmc = r.U8();
    if (nmc > 1) return Malformed("near-memory compute flag");
    if (nmc == 1) {
      engine::NearMemoryCompute c;
      c.internal_bandwidth_bytes_per_second = r.F64();
      c.peak_ops_per_second = GetPerMath(r);
      c.energy_joules_per_op = r.OptF64();
      t.near_memory_compute = std::move(c);
    }
    hw->tiers.push_back(std::move(t));
  }
  hw->tdp_watts = r.OptF64();
  hw->idle_watts = r.OptF64();
  hw->price_usd = r.OptF64();
  hw->embodied_kg_co2e = r.OptF64();
  hw->interconnect_bytes_per_second = r.OptF64();
  hw->scale_up_latency_seconds = r.OptF64();
  hw->scale_out_bytes_per_second = r.OptF64();
  hw->scale_out_latency_seconds = r.OptF64();
  const uint8_t has_dpn = r.U8();
  const int64_t dpn = r.I64();
  if (has_dpn > 1) return Malformed("devices_per_node flag");
  if (has_dpn == 1) hw->devices_per_node = dpn;
  const uint8_t has_units = r.U8();
  const int64_t units = r.I64();
  if (has_units > 1) return Malformed("compute_units flag");
  if (has_units == 1) hw->compute_units = units;
  hw->last_level_cache_bytes = r.OptF64();
  if (!r.ok()) return Malformed("platform cut short");
  return absl::OkStatus();
}

std::string EncodeLoadReply(const LoadReply& reply) {
  Writer w;
  w.U8(reply.ok ? 1 : 0);
  w.Str(reply.family);
  w.Str(reply.plugin_version);
  if (!reply.ok) {
    w.Str(reply.reason);
    return w.data();
  }
  w.U8(reply.has_hook ? 1 : 0);
  w.U32(static_cast<uint32_t>(reply.platforms.size()));
  for (const engine::Hardware& hw : reply.platforms) PutHardware(w, hw);
  return w.data();
}

absl::StatusOr<LoadReply> DecodeLoadReply(absl::string_view payload) {
  Reader r(payload);
  LoadReply reply;
  const uint8_t ok = r.U8();
  if (ok > 1) return Malformed("load flag");
  reply.ok = ok == 1;
  RETURN_IF_ERROR(GetString(r, "table.family", kMaxNameBytes, &reply.family));
  RETURN_IF_ERROR(GetString(r, "table.plugin_version", kMaxNameBytes,
                            &reply.plugin_version));
  if (!reply.ok) {
    RETURN_IF_ERROR(GetString(r, "reason", kMaxSourceBytes, &reply.reason));
  } else {
    const uint8_t hook = r.U8();
    if (hook > 1) return Malformed("hook flag");
    reply.has_hook = hook == 1;
    const uint32_t n = r.U32();
    if (!r.ok() || n > kMaxPlatforms) return Malformed("platform count");
    reply.platforms.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      if (absl::Status s = GetHardware(r, &reply.platforms[i]); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("platforms[", i, "]: ", s.message()));
      }
    }
  }
  if (!r.done()) return Malformed("trailing bytes after the load reply");
  return reply;
}

std::string EncodeHookRequest(const HookRequest& request) {
  Writer w;
  w.U32(request.index);
  w.U8(static_cast<uint8_t>(request.shape.op_class));
  w.U8(static_cast<uint8_t>(request.shape.math));
  w.I64(request.shape.tokens);
  w.F64(request.shape.flops);
  w.F64(request.shape.bytes);
  return w.data();
}

absl::StatusOr<HookRequest> DecodeHookRequest(absl::string_view payload) {
  Reader r(payload);
  HookRequest q;
  q.index = r.U32();
  const uint8_t cls = r.U8();
  const uint8_t math = r.U8();
  q.shape.tokens = r.I64();
  q.shape.flops = r.F64();
  q.shape.bytes = r.F64();
  if (!r.done() || cls >= engine::kOpClassCount ||
      math >= engine::kMathTypeCount) {
    return Malformed("hook request");
  }
  q.shape.op_class = static_cast<engine::OpClass>(cls);
  q.shape.math = static_cast<engine::MathType>(math);
  return q;
}

std::string EncodeHookReply(const HookReply& reply) {
  Writer w;
  w.I32(reply.code);
  w.Str(reply.message);
  w.F64(reply.compute);
  w.F64(reply.memory);
  return w.data();
}

absl::StatusOr<HookReply> DecodeHookReply(absl::string_view payload) {
  Reader r(payload);
  HookReply reply;
  reply.code = r.I32();
  reply.message = r.Str(1024);
  reply.compute = r.F64();
  reply.memory = r.F64();
  if (!r.done()) return Malformed("hook reply");
  return reply;
}

absl::Status WriteFrame(int fd, absl::string_view payload) {
  std::string frame;
  const auto n = static_cast<uint32_t>(payload.size());
  frame.append(reinterpret_cast<const char*>(&n), 4);
  frame.append(payload.data(), payload.size());
  size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t w =
        ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return absl::UnavailableError(
          absl::StrCat("plugin-host channel closed: ", std::strerror(errno)));
    }
    sent += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFrame(
    int fd, std::optional<std::chrono::steady_clock::time_point> deadline,
    const std::function<bool()>& cancelled) {
  auto read_exact = [&](char* out, size_t size) -> absl::Status {
    size_t got = 0;
    while (got < size) {
      int wait_ms = -1;
      if (deadline.has_value() || cancelled) {
        wait_ms = 20;
        if (deadline.has_value()) {
          const auto left =
              std::chrono::duration_cast<std::chrono::milliseconds>(
                  *deadline - std::chrono::steady_clock::now());
          if (left.count() <= 0) {
            return absl::DeadlineExceededError("no answer before the deadline");
          }
          if (!cancelled) {
            wait_ms =
                static_cast<int>(std::min<int64_t>(left.count() + 1, 1000));
          } else {
            wait_ms = static_cast<int>(std::min<int64_t>(left.count() + 1, 20));
          }
        }
      }
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, wait_ms);
      if (ready < 0 && errno != EINTR) {
        return absl::UnavailableError(std::strerror(errno));
      }
      if (ready <= 0) {
        if (cancelled && cancelled()) {
          return absl::CancelledError("cancelled while waiting");
        }
        continue;
      }
      const ssize_t r = ::read(fd, out + got, size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        return absl::UnavailableError("the plugin-host process closed its end");
      }
      got += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  };
  uint32_t n = 0;
  RETURN_IF_ERROR(read_exact(reinterpret_cast<char*>(&n), 4));
  if (n > kMaxFrameBytes) {
    return absl::DataLossError(
        absl::StrCat("frame of ", n, " bytes exceeds ", kMaxFrameBytes));
  }
  std::string payload(n, '\0');
  RETURN_IF_ERROR(read_exact(payload.data(), n));
  return payload;
}

}  // namespace ridgeline::plugin_host::wire

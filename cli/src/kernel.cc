#include "kernel.h"

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scenario.h"

namespace ridgeline::cli {

std::vector<FlagSpec> KernelFlags() {
  std::vector<FlagSpec> flags = {
      {"hardware", "ID", "platform id (see `ridgeline hardware`)"},
      {"hardware-file", "FILE.json",
       "inline hardware: a ridgeline.v1.Hardware in proto JSON"},
      {"batch", "N", "attention: sequences (default 1)"},
      {"q-heads", "N", "attention: query heads (default 32)"},
      {"kv-heads", "N", "attention: KV heads (default = --q-heads)"},
      {"head-dim", "N", "attention: head dimension (default 128)"},
      {"kv-len", "N", "attention: KV-cache length in tokens (default 2048)"},
      {"dtype", "FMT", "attention: q/k/v/output format (default fp16)"},
      {"m", "N", "gemm: rows of A and C (tokens)"},
      {"n", "N", "gemm: columns of B and C"},
      {"k", "N", "gemm: inner dimension"},
      {"a-format", "FMT", "gemm: activations (A, C) format (default fp16)"},
      {"b-format", "FMT", "gemm: weights (B) format (default --a-format)"},
      {"gemv-max-tokens", "N",
       "gemm: m at or below this is a GEMV (default 64)"},
      {"fp16-accumulation", "", "gemm: fp16 accumulates in fp16 (GeForce: 2x)"},
      {"no-fp16-accumulation", "",
       "gemm: fp16 accumulates in fp32 even if the profile's framework does not"},
      {"cold", "",
       "every call streams from device memory (default: operands that fit "
       "stay in on-chip SRAM between calls)"},
      {"profile", "NAME", "calibration profile by name"},
      {"framework", "NAME",
       "pick the best calibration profile for this framework"},
      {"pure-roofline", "", "ignore calibration: the speed upper bound"},
  };
  const std::vector<FlagSpec>& common = CommonFlags();
  flags.insert(flags.end(), common.begin(), common.end());
  return flags;
}

namespace {

Outcome BuildKernel(const std::string& kind, const ParsedFlags& flags,
                    v1::AnalyzeKernelRequest* request) {
  if (Outcome o = FillHardware(flags, request->mutable_hardware())) return o;
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  // Flags of the other kernel are a mistake worth naming.
  const std::vector<std::string> attention_only = {
      "batch", "q-heads", "kv-heads", "head-dim", "kv-len", "dtype"};
  const std::vector<std::string> gemm_only = {
      "m", "n", "k", "a-format", "b-format", "gemv-max-tokens"};
  for (const std::string& f :
       kind == "attention" ? gemm_only : attention_only) {
    if (flags.Has(f)) {
      return Usage(
          absl::StrCat("--", f, " does not apply to `kernel ", kind, "`"));
    }
  }
  // Ranges are checked by the service (one place); here only the syntax.
  auto get = [&](const char* flag,
                 const std::function<void(int64_t)>& set) -> Outcome {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(flag, -kAny, kAny);
    if (!v.ok()) return Usage(v.status());
    if (*v) set(**v);
    return std::nullopt;
  };
  if (kind == "attention") {
    v1::DecodeAttentionKernelShape* a = request->mutable_decode_attention();
    for (const auto& [flag, set] :
         std::vector<std::pair<const char*, std::function<void(int64_t)>>>{
             {"batch", [a](int64_t v) { a->set_batch(v); }},
             {"q-heads", [a](int64_t v) { a->set_num_q_heads(v); }},
             {"kv-heads", [a](int64_t v) { a->set_num_kv_heads(v); }},
             {"head-dim", [a](int64_t v) { a->set_head_dim(v); }},
             {"kv-len", [a](int64_t v) { a->set_kv_length(v); }}}) {
      if (Outcome o = get(flag, set)) return o;
    }
    if (auto v = flags.Get("dtype")) a->set_dtype(*v);
  } else {
    v1::GemmKernelShape* g = request->mutable_gemm();
    for (const char* required : {"m", "n", "k"}) {
      if (!flags.Has(required)) {
        return Usage("give --m N --n N --k N (C[m x n] = A[m x k] B[k x n])");
      }
    }
    if (Outcome o = get("m", [g](int64_t v) { g->set_m(v); })) return o;
    if (Outcome o = get("n", [g](int64_t v) { g->set_n(v); })) return o;
    if (Outcome o = get("k", [g](int64_t v) { g->set_k(v); })) return o;
    if (auto v = flags.Get("a-format")) g->set_a_format(*v);
    if (auto v = flags.Get("b-format")) g->set_b_format(*v);
    if (Outcome o = get("gemv-max-tokens", [request](int64_t v) {
          request->set_gemv_max_tokens(v);
        })) {
      return o;
    }
    if (flags.Has("fp16-accumulation")) request->set_fp16_accumulation(true);
    if (flags.Has("no-fp16-accumulation")) request->set_fp16_accumulation(false);
  }
  if (flags.Has("cold")) request->set_warm_cache(false);
  if (flags.Has("profile") && flags.Has("framework")) {
    return Usage("give at most one of --profile NAME or --framework NAME");
  }
  if (auto profile = flags.Get("profile")) {
    request->mutable_calibration()->set_profile(*profile);
  }
  if (auto framework = flags.Get("framework")) {
    request->mutable_calibration()->set_framework(*framework);
  }
  if (flags.Has("pure-roofline")) request->set_pure_roofline(true);
  return std::nullopt;
}

std::string KernelTitle(const v1::AnalyzeKernelRequest& request,
                        const v1::AnalyzeKernelResponse& response) {
  if (request.has_decode_attention()) {
    const v1::DecodeAttentionKernelShape& a = request.decode_attention();
    const int64_t q = a.has_num_q_heads() ? a.num_q_heads() : 32;
    return absl::StrCat("decode attention on ", response.hardware_id(),
                        ": batch ", a.has_batch() ? a.batch() : 1, ", ", q,
                        " q / ", a.has_num_kv_heads() ? a.num_kv_heads() : q,
                        " kv heads, head dim ",
                        a.has_head_dim() ? a.head_dim() : 128, ", KV length ",
                        a.has_kv_length() ? a.kv_length() : 2048, ", ",
                        a.dtype().empty() ? "fp16" : a.dtype());
  }
  const v1::GemmKernelShape& g = request.gemm();
  const std::string a = g.a_format().empty() ? "fp16" : g.a_format();
  return absl::StrCat("GEMM on ", response.hardware_id(), ": m ", g.m(), ", n ",
                      g.n(), ", k ", g.k(), "; A ", a, ", B ",
                      g.b_format().empty() ? a : g.b_format(), " (",
                      response.op_class(), ")");
}

void PrintKernelText(const v1::AnalyzeKernelRequest& request,
                     const v1::AnalyzeKernelResponse& response,
                     std::ostream& out) {
  out << KernelTitle(request, response) << "\n";
  // Operands in an L2 of unpublished bandwidth: device memory is charged,
  // which that L2 may beat, so the roofline is no bound for this call.
  const bool l2_unknown = response.bound().onchip_bandwidth_unknown();
  out << "Calibration: "
      << (response.calibration().profile_name().empty()
              ? "none"
              : response.calibration().profile_name())
      << (!response.upper_bound() ? ""
          : l2_unknown            ? " (pure roofline)"
                                  : " (pure roofline: the time is a lower "
                                    "bound, the speed an upper bound)")
      << "\n";
  if (l2_unknown) {
    out << "On-chip: the operands fit the on-chip cache (L2), whose bandwidth "
           "no source gives; the times charge device memory, so the bound "
           "is not a bound for this warm call (--cold: streamed from device "
           "memory)\n";
  }
  if (!response.compute_roof_known()) {
    out << "Compute roof unknown: no published peak for "
        << response.bound().math()
        << "; compute time 0, the bound is the memory roof only\n";
  }
  out << "\n";
  Table t{{"", ">predicted", ">bound"}};
  const v1::KernelCost& p = response.result();
  const v1::KernelCost& b = response.bound();
  auto tier = [](const v1::KernelCost& c) {
    return absl::StrCat(
        c.tier_name(), " (tier ", c.tier(), ")",
        c.onchip_bandwidth_unknown() ? ", fits L2 (charged here)"
        : c.onchip_resident()        ? ", on-chip resident"
                                     : "");
  };
  auto compute = [&](const v1::KernelCost& c) {
    return response.compute_roof_known() ? Seconds(c.compute_seconds())
                                         : std::string("unknown");
  };
  t.rows = {
      {"FLOPs", Si(p.flops()), Si(b.flops())},
      {"bytes", Bytes(p.bytes()), Bytes(b.bytes())},
      {"FLOP/B", Fixed3(p.intensity()), Fixed3(b.intensity())},
      {"math", p.math(), b.math()},
      {"operands from", tier(p), tier(b)},
      {"compute time", compute(p), compute(b)},
      {"memory time", Seconds(p.memory_seconds()), Seconds(b.memory_seconds())},
      {"overhead", Seconds(p.overhead_seconds()),
       Seconds(b.overhead_seconds())},
      {"time", Seconds(p.seconds()), Seconds(b.seconds())},
      {"bound", p.bound(), b.bound()},
      {"attained", Si(p.attained_flops_per_second(), "FLOP/s"),
       Si(b.attained_flops_per_second(), "FLOP/s")},
      {"attained bandwidth", Si(p.attained_bytes_per_second(), "B/s"),
       Si(b.attained_bytes_per_second(), "B/s")},
  };
  PrintTable(t, TableStyle::kText, out);
}

}  // namespace

Outcome KernelCommand(Context& ctx) {
  const auto& pos = ctx.flags.positional();
  if (pos.size() != 1 || (pos[0] != "attention" && pos[0] != "gemm")) {
    return Usage(
        "usage: ridgeline kernel attention|gemm --hardware ID [flags]");
  }
  v1::AnalyzeKernelRequest request;
  if (Outcome o = BuildKernel(pos[0], ctx.flags, &request)) return o;
  if (Outcome o = MakeClient(ctx)) return o;
  absl::StatusOr<v1::AnalyzeKernelResponse> response =
      ctx.client->AnalyzeKernel(request);
  if (!response.ok()) return Failed(response.status());
  switch (ctx.format) {
    case Format::kJson:
      ctx.out << Json(*response) << "\n";
      break;
    case Format::kCsv: {
      Table t{{"kernel", "hardware", "variant", "op_class", "flops", "bytes",
               "intensity", "math", "tier", "onchip_resident",
               "compute_seconds", "memory_seconds", "overhead_seconds",
               "seconds", "bound", "profile"}};
      for (const auto& [variant, c] :
           {std::pair{"predicted", &response->result()},
            std::pair{"bound", &response->bound()}}) {
        t.rows.push_back({response->kernel(), response->hardware_id(), variant,
                          response->op_class(), Raw(c->flops()),
                          Raw(c->bytes()), Raw(c->intensity()), c->math(),
                          absl::StrCat(c->tier()),
                          c->onchip_resident() ? "true" : "false",
                          Raw(c->compute_seconds()), Raw(c->memory_seconds()),
                          Raw(c->overhead_seconds()), Raw(c->seconds()),
                          c->bound(), response->calibration().profile_name()});
      }
      PrintTable(t, TableStyle::kCsv, ctx.out);
      break;
    }
    case Format::kTable:
      PrintKernelText(request, *response, ctx.out);
      break;
  }
  return std::nullopt;
}

}  // namespace ridgeline::cli

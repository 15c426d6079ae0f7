#include "catalog.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ridgeline::cli {

namespace {

// (name, value) of each published rate, in MathType order.
std::vector<std::pair<std::string, double>> Rates(const v1::PerMathType& p) {
  std::vector<std::pair<std::string, double>> out;
  const auto* d = p.GetDescriptor();
  const auto* refl = p.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (refl->HasField(p, f))
      out.emplace_back(f->name(), refl->GetDouble(p, f));
  }
  return out;
}

bool IsDeviceMemory(const v1::MemoryTier& t) {
  return t.kind() == "hbm" || t.kind() == "gddr" || t.kind() == "lpddr" ||
         t.kind() == "ddr" || t.kind() == "unified";
}

}  // namespace

std::vector<FlagSpec> CatalogFlags(std::string_view filter_help) {
  std::vector<FlagSpec> flags = CommonFlags();
  if (!filter_help.empty()) {
    flags.insert(flags.begin(), {"family", "NAME", std::string(filter_help)});
  }
  return flags;
}

namespace {

void PrintHardware(const v1::Hardware& h, const Context& ctx) {
  Table info;
  auto opt = [](bool has, double v, const std::string& unit) {
    return has ? Si(v, unit) : std::string("not published");
  };
  info.rows = {
      {"id", h.id()},
      {"name", h.display_name()},
      {"vendor", h.vendor()},
      {"family", h.family()},
      {"plugin", h.plugin()},
      // 0 in the proto (and the ABI) means not published.
      {"launch overhead", h.kernel_launch_seconds() > 0
                              ? Seconds(h.kernel_launch_seconds())
                              : std::string("not published")},
      {"TDP", opt(h.has_tdp_watts(), h.tdp_watts(), "W")},
      {"idle", opt(h.has_idle_watts(), h.idle_watts(), "W")},
      {"price", h.has_price_usd() ? absl::StrCat("$", Fixed3(h.price_usd()))
                                  : std::string("not published")},
      {"embodied",
       opt(h.has_embodied_kg_co2e(), h.embodied_kg_co2e() * 1e3, "g CO2e")},
      {"interconnect", opt(h.has_interconnect_bytes_per_second(),
                           h.interconnect_bytes_per_second(), "B/s")},
      {"efficiency hook", std::string(h.has_efficiency_hook() ? "yes" : "no")}};
  for (const auto& [name, rate] : Rates(h.peak_ops_per_second())) {
    // The engine's math type names ("fp16_acc16" field -> "fp16-acc16").
    info.rows.push_back({absl::StrCat("peak ", absl::StrReplaceAll(name, {{"_", "-"}})),
                         Si(rate, "OPS")});
  }
  if (ctx.csv()) {
    info.headers = {"field", "value"};
  }
  PrintTable(info, ctx.style(), ctx.out, 0);
  if (ctx.csv()) return;
  ctx.out << "\nMemory tiers (fastest first)\n";
  Table tiers{{">#", "name", "kind", ">capacity", ">read", ">write", ">latency",
               ">inline ECC", "PIM"}};
  for (int i = 0; i < h.tiers_size(); ++i) {
    const v1::MemoryTier& t = h.tiers(i);
    tiers.rows.push_back(
        {absl::StrCat(i), t.name(), t.kind(), Bytes(t.capacity_bytes()),
         Si(t.read_bandwidth_bytes_per_second(), "B/s"),
         Si(t.write_bandwidth_bytes_per_second(), "B/s"),
         t.latency_seconds() > 0 ? Seconds(t.latency_seconds()) : std::string("-"),
         t.inline_ecc_share() > 0 ? Percent(t.inline_ecc_share()) : std::string("-"),
         t.has_near_memory_compute()
             ? Si(t.near_memory_compute().internal_bandwidth_bytes_per_second(),
                  "B/s internal")
             : "-"});
  }
  PrintTable(tiers, TableStyle::kText, ctx.out);
  ctx.out << "\nSources\n";
  for (const std::string& s : h.sources()) ctx.out << "  - " << s << "\n";
}

// `ridgeline <noun> [list | show ID]`: the ID after "show", or nullopt for
// a listing.
absl::StatusOr<std::optional<std::string>> ShowId(const ParsedFlags& flags,
                                                  const char* noun) {
  const auto& pos = flags.positional();
  if (pos.empty() || (pos.size() == 1 && pos[0] == "list")) {
    return std::optional<std::string>();
  }
  if (pos.size() == 2 && pos[0] == "show") {
    return std::optional<std::string>(pos[1]);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("usage: ridgeline ", noun, " [list | show ID]"));
}

// A catalog response as canonical JSON, or through `print` for table/CSV.
template <typename Response, typename Print>
Outcome PrintCatalog(Context& ctx, const absl::StatusOr<Response>& response,
                     Print print) {
  if (!response.ok()) return Failed(response.status());
  if (ctx.format == Format::kJson) {
    ctx.out << Json(*response) << "\n";
  } else {
    print(*response);
  }
  return std::nullopt;
}

void PrintHardwareList(const v1::ListHardwareResponse& response,
                       const Context& ctx) {
  Table table{{"id", "family", "name", ">peak", ">memory", ">bandwidth"}};
  if (ctx.csv()) {
    table.headers = {"id",
                     "family",
                     "name",
                     "peak_type",
                     "peak_ops_per_second",
                     "memory_bytes",
                     "bandwidth_bytes_per_second"};
  }
  for (const v1::Hardware& h : response.hardware()) {
    // The headline rate: bf16 (or fp16) when published, else the largest.
    auto rates = Rates(h.peak_ops_per_second());
    std::pair<std::string, double> peak{"", 0};
    for (const auto& r : rates) {
      if (r.first == "bf16" || r.first == "fp16") {
        peak = r;
        break;
      }
      if (r.second > peak.second) peak = r;
    }
    // The headline memory: the first device-memory tier (not on-chip SRAM,
    // not host memory over a link, not flash); else the largest tier.
    const v1::MemoryTier* main_tier = nullptr;
    for (const v1::MemoryTier& t : h.tiers()) {
      if (IsDeviceMemory(t)) {
        main_tier = &t;
        break;
      }
    }
    for (const v1::MemoryTier& t : h.tiers()) {
      if (main_tier == nullptr ||
          (!IsDeviceMemory(*main_tier) &&
           t.capacity_bytes() > main_tier->capacity_bytes())) {
        main_tier = &t;
      }
    }
    double capacity = main_tier ? main_tier->capacity_bytes() : 0;
    double bandwidth =
        main_tier ? main_tier->read_bandwidth_bytes_per_second() : 0;
    if (ctx.csv()) {
      table.rows.push_back({h.id(), h.family(), h.display_name(), peak.first,
                            Raw(peak.second), Raw(capacity), Raw(bandwidth)});
    } else {
      table.rows.push_back(
          {h.id(), h.family(), h.display_name(),
           peak.first.empty()
               ? "-"
               : absl::StrCat(Si(peak.second, "OPS"), " ", peak.first),
           Bytes(capacity), Si(bandwidth, "B/s")});
    }
  }
  PrintTable(table, ctx.style(), ctx.out, 0);
  if (!ctx.csv()) {
    for (const v1::PluginInfo& p : response.plugins()) {
      if (!p.loaded()) {
        ctx.out << "refused plugin " << p.path() << ": " << p.reason() << "\n";
      }
    }
  }
}

}  // namespace

Outcome HardwareCommand(Context& ctx) {
  absl::StatusOr<std::optional<std::string>> show =
      ShowId(ctx.flags, "hardware");
  if (!show.ok()) return Usage(show.status());
  if (Outcome o = MakeClient(ctx)) return o;
  if (*show) {
    v1::GetHardwareRequest request;
    request.set_id(**show);
    return PrintCatalog(ctx, ctx.client->GetHardware(request),
                        [&](const v1::GetHardwareResponse& r) {
                          PrintHardware(r.hardware(), ctx);
                        });
  }
  v1::ListHardwareRequest request;
  request.set_family(ctx.flags.Get("family").value_or(""));
  return PrintCatalog(
      ctx, ctx.client->ListHardware(request),
      [&](const v1::ListHardwareResponse& r) { PrintHardwareList(r, ctx); });
}

namespace {

void PrintModel(const v1::Model& m, const Context& ctx) {
  Table info;
  info.rows = {
      {"id", m.id()},
      {"name", m.display_name()},
      {"architecture", m.architecture()},
      {"source", m.source()},
      {"parameters", Si(m.parameters().total())},
      {"active per token", Si(m.parameters().active_per_token())},
      {"layers", absl::StrCat(m.num_layers())},
      {"hidden size", absl::StrCat(m.hidden_size())},
      {"intermediate size", absl::StrCat(m.intermediate_size())},
      {"attention heads", absl::StrCat(m.num_attention_heads())},
      {"KV heads", absl::StrCat(m.num_kv_heads())},
      {"head dim", absl::StrCat(m.head_dim())},
      {"vocabulary", absl::StrCat(m.vocab_size())},
      {"max context", absl::StrCat(m.max_context())},
      {"KV elements per token", Si(m.kv_elements_per_token())},
      {"norm / FFN", absl::StrCat(m.norm(), " / ", m.ffn())},
      {"sliding layers",
       m.sliding_layers() == "none"
           ? "none"
           : absl::StrCat(m.sliding_layers(), ", window ", m.sliding_window())},
  };
  if (m.attention_chunk_size() > 0) {
    info.rows.push_back({"chunked attention",
                         absl::StrCat(m.attention_chunk_size(), "-token chunks")});
  }
  if (m.has_moe()) {
    info.rows.push_back(
        {"MoE", absl::StrCat(m.moe().num_routed_experts(), " routed (top ",
                             m.moe().experts_per_token(), "), ",
                             m.moe().num_shared_experts(), " shared")});
  }
  if (m.has_mla()) {
    info.rows.push_back(
        {"MLA", absl::StrCat("kv_lora_rank ", m.mla().kv_lora_rank(),
                             ", q_lora_rank ", m.mla().q_lora_rank())});
  }
  if (ctx.csv()) info.headers = {"field", "value"};
  PrintTable(info, ctx.style(), ctx.out, 0);
}

void PrintModelList(const v1::ListModelsResponse& response,
                    const Context& ctx) {
  Table table{{"id", "name", "architecture", ">params", ">active", ">layers",
               ">heads/kv", ">context"}};
  for (const v1::Model& m : response.models()) {
    if (ctx.csv()) {
      table.rows.push_back(
          {m.id(), m.display_name(), m.architecture(),
           Raw(m.parameters().total()), Raw(m.parameters().active_per_token()),
           absl::StrCat(m.num_layers()),
           absl::StrCat(m.num_attention_heads(), "/", m.num_kv_heads()),
           absl::StrCat(m.max_context())});
    } else {
      table.rows.push_back(
          {m.id(), m.display_name(), m.architecture(),
           Si(m.parameters().total()), Si(m.parameters().active_per_token()),
           absl::StrCat(m.num_layers()),
           absl::StrCat(m.num_attention_heads(), "/", m.num_kv_heads()),
           absl::StrCat(m.max_context())});
    }
  }
  if (ctx.csv()) {
    table.headers = {"id",
                     "name",
                     "architecture",
                     "parameters",
                     "active_parameters",
                     "layers",
                     "heads_kv_heads",
                     "max_context"};
  }
  PrintTable(table, ctx.style(), ctx.out, 0);
}

}  // namespace

Outcome ModelsCommand(Context& ctx) {
  absl::StatusOr<std::optional<std::string>> show = ShowId(ctx.flags, "models");
  if (!show.ok()) return Usage(show.status());
  if (Outcome o = MakeClient(ctx)) return o;
  if (*show) {
    v1::GetModelRequest request;
    request.set_id(**show);
    return PrintCatalog(
        ctx, ctx.client->GetModel(request),
        [&](const v1::GetModelResponse& r) { PrintModel(r.model(), ctx); });
  }
  return PrintCatalog(
      ctx, ctx.client->ListModels(v1::ListModelsRequest()),
      [&](const v1::ListModelsResponse& r) { PrintModelList(r, ctx); });
}

}  // namespace ridgeline::cli

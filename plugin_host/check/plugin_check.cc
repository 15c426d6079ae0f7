// ridgeline-plugin-check: the conformance suite vendors run against their
// plugin .so files (and ctest runs against every in-tree plugin).
//
//   ridgeline-plugin-check [--threads N] [--iterations N] lib.so...
//
// Loads each library exactly as the Ridgeline host does and checks the ABI
// fields, every descriptor (engine::ValidateHardware, the rules inline
// hardware follows too: kebab ids, fastest-first tiers, bandwidths and
// capacities, near-memory bandwidth; plus citations, names and finite dense
// raw peaks; a platform with no peak at all is a NOTE, "compute roof
// unknown", not a failure), determinism, concurrent calls from many threads, and that
// the efficiency hook rejects unsupported data types with UNIMPLEMENTED.
// With several files it also checks platform ids are unique across them.
// Exit status: 0 all checks passed, 1 a check failed, 2 usage error.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/plugin_host/plugin_library.h"
#include "ridgeline/plugin_host/registry.h"

namespace ridgeline::plugin_host {
namespace {

using engine::Hardware;
using engine::MathType;

class Report {
 public:
  void Pass(const std::string& what) {
    ++checks_;
    std::printf("  PASS %s\n", what.c_str());
  }
  void Fail(const std::string& what) {
    ++checks_;
    ++failures_;
    std::printf("  FAIL %s\n", what.c_str());
  }
  // Not a check: something a vendor should know that is allowed.
  void Note(const std::string& what) {
    ++notes_;
    std::printf("  NOTE %s\n", what.c_str());
  }
  // Records one check; prints only failures (keeps reports readable).
  bool Expect(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) {
      ++failures_;
      std::printf("  FAIL %s\n", what.c_str());
    }
    return ok;
  }
  int checks() const { return checks_; }
  int failures() const { return failures_; }
  int notes() const { return notes_; }

 private:
  int checks_ = 0;
  int failures_ = 0;
  int notes_ = 0;
};

std::string Num(double v) { return absl::StrFormat("%.17g", v); }
std::string Num(const std::optional<double>& v) {
  return v ? Num(*v) : std::string("unknown");
}

// Canonical text of a descriptor: equal text <=> equal data (hook excluded).
std::string Describe(const Hardware& hw) {
  std::string out = absl::StrCat(hw.id, "|", hw.display_name, "|", hw.vendor,
                                 "|", hw.family, "|", hw.plugin, "|");
  for (const std::string& s : hw.sources) absl::StrAppend(&out, s, ";");
  for (int i = 0; i < engine::kMathTypeCount; ++i) {
    absl::StrAppend(&out, "|p", i, "=", Num(hw.peak_ops_per_second[i]), ",e=",
                    Num(hw.energy_joules_per_op[i]));
  }
  absl::StrAppend(&out, "|launch=", Num(hw.kernel_launch_seconds));
  for (const engine::MemoryTier& t : hw.tiers) {
    absl::StrAppend(&out, "|tier:", t.name, ",", static_cast<int>(t.kind), ",",
                    Num(t.capacity_bytes), ",",
                    Num(t.read_bandwidth_bytes_per_second), ",",
                    Num(t.write_bandwidth_bytes_per_second), ",",
                    Num(t.latency_seconds), ",", Num(t.energy_joules_per_byte),
                    ",ecc=", Num(t.inline_ecc_share));
    if (t.near_memory_compute) {
      const engine::NearMemoryCompute& c = *t.near_memory_compute;
      absl::StrAppend(&out, ",nmc:",
                      Num(c.internal_bandwidth_bytes_per_second), ",",
                      Num(c.energy_joules_per_op));
      for (const auto& p : c.peak_ops_per_second) absl::StrAppend(&out, ",", Num(p));
    }
  }
  absl::StrAppend(&out, "|tdp=", Num(hw.tdp_watts), "|idle=", Num(hw.idle_watts),
                  "|price=", Num(hw.price_usd), "|co2=", Num(hw.embodied_kg_co2e),
                  "|ic=", Num(hw.interconnect_bytes_per_second),
                  "|hook=", hw.efficiency_hook ? 1 : 0);
  return out;
}

bool IsKebab(const std::string& s) {
  static const std::regex kKebab("^[a-z0-9]+(-[a-z0-9]+)*$");
  return std::regex_match(s, kKebab);
}

bool FiniteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

// A shape that exercises the hook for `math`.
engine::OpShape Shape(engine::OpClass op, int math) {
  // 4096x4096 weights, 16 tokens: 2*16*4096*4096 FLOPs, ~32 MiB read.
  return engine::OpShape{op, static_cast<MathType>(math), 16,
                         2.0 * 16 * 4096 * 4096, 4096.0 * 4096 * 2};
}

std::string HookResult(
    const absl::StatusOr<std::optional<engine::OpEfficiency>>& r) {
  if (!r.ok()) return absl::StrCat("error:", static_cast<int>(r.status().code()));
  if (!*r) return "default";
  return absl::StrCat(Num((*r)->compute), "/", Num((*r)->memory));
}

// Checks of the raw numbers the engine conversion would hide (0 -> unknown).
void CheckRawNumbers(const RidgelinePlatform& p, const std::string& at,
                     Report& report) {
  bool any_peak = false;
  for (int i = 0; i < RIDGELINE_MATH_TYPE_COUNT; ++i) {
    const char* name =
        engine::MathTypeName(static_cast<MathType>(i)).data();
    report.Expect(FiniteNonNegative(p.peak_ops_per_second[i]),
                  absl::StrCat(at, ".peak_ops_per_second[", name,
                               "] must be finite and >= 0 (dense), got ",
                               Num(p.peak_ops_per_second[i])));
    report.Expect(FiniteNonNegative(p.energy_joules_per_op[i]),
                  absl::StrCat(at, ".energy_joules_per_op[", name,
                               "] must be finite and >= 0, got ",
                               Num(p.energy_joules_per_op[i])));
    any_peak = any_peak || p.peak_ops_per_second[i] > 0;
  }
  // ABI 1.1: fp16-acc16 is given only where FP16 accumulation is faster
  // than the FP16 (FP32-accumulate) figure; slower or equal is a mistake.
  const double acc16 = p.peak_ops_per_second[RIDGELINE_MATH_FP16_ACC16];
  const double fp16 = p.peak_ops_per_second[RIDGELINE_MATH_FP16];
  if (acc16 > 0) {
    report.Expect(fp16 > 0 && acc16 > fp16,
                  absl::StrCat(at, ".peak_ops_per_second[fp16-acc16] (", Num(acc16),
                               ") must exceed the fp16 peak (", Num(fp16),
                               "); leave it 0 where FP16 accumulation is not faster"));
  }
  // ABI 1.0 (clarified): all peaks 0 is valid when no source publishes one.
  if (!any_peak) {
    report.Note(absl::StrCat(at, ": compute roof unknown: only memory-bound "
                                 "estimates are bounded"));
  }
  const std::pair<const char*, double> optional[] = {
      {"kernel_launch_seconds", p.kernel_launch_seconds},
      {"tdp_watts", p.tdp_watts},
      {"idle_watts", p.idle_watts},
      {"price_usd", p.price_usd},
      {"embodied_kg_co2e", p.embodied_kg_co2e},
      {"interconnect_bytes_per_second", p.interconnect_bytes_per_second}};
  for (const auto& [name, v] : optional) {
    report.Expect(FiniteNonNegative(v),
                  absl::StrCat(at, ".", name,
                               " must be finite and >= 0 (0 = unknown), got ",
                               Num(v)));
  }
}

// What only a plugin descriptor must carry (names and citations). The rules
// every hardware description follows, inline or plugin (kebab id, tier order,
// bandwidth and capacity ranges, near-memory bandwidth), are
// engine::ValidateHardware's, run just before this.
void CheckHardware(const Hardware& hw, const std::string& at, Report& report) {
  report.Expect(!hw.display_name.empty(),
                absl::StrCat(at, ".display_name must not be empty"));
  report.Expect(!hw.vendor.empty(), absl::StrCat(at, ".vendor must not be empty"));
  report.Expect(!hw.sources.empty(),
                absl::StrCat(at, ".sources must cite at least one source"));
  for (size_t t = 0; t < hw.tiers.size(); ++t) {
    report.Expect(!hw.tiers[t].name.empty(),
                  absl::StrCat(at, ".tiers[", t, "].name must not be empty"));
  }
}

// Returns the ids of the plugin's platforms (for the cross-file check).
bool CheckFile(const std::filesystem::path& path, int threads, int iterations,
               Report& report) {
  std::printf("%s\n", path.string().c_str());
  absl::StatusOr<PluginLibrary> lib = PluginLibrary::Open(path);
  if (!lib.ok()) {
    report.Fail(absl::StrCat("load: ", lib.status().message()));
    return false;
  }
  const RidgelinePluginTable& table = lib->table();
  const size_t count = lib->platform_count();
  report.Pass(absl::StrCat("load: family=", lib->family(),
                           " version=", lib->plugin_version(), " abi=",
                           table.abi_major, ".", table.abi_minor,
                           " platforms=", count,
                           " efficiency_hook=", table.efficiency ? "yes" : "no"));
  report.Expect(IsKebab(lib->family()),
                absl::StrCat("table.family must be lower-case kebab, got '",
                             lib->family(), "'"));
  if (!report.Expect(count >= 1 && count <= 100000,
                     absl::StrCat("platform_count() must be in [1, 100000], got ",
                                  count))) {
    return false;
  }

  // Descriptors: structure, engine validation, our invariants, determinism.
  std::vector<std::string> reference(count);
  std::vector<Hardware> platforms(count);
  std::set<std::string> ids;
  bool all_ok = true;
  for (size_t i = 0; i < count; ++i) {
    const std::string at = absl::StrCat("platforms[", i, "]");
    absl::StatusOr<const RidgelinePlatform*> raw = lib->RawPlatform(i);
    absl::StatusOr<Hardware> hw = lib->Platform(i);
    if (!raw.ok() || !hw.ok()) {
      report.Fail(absl::StrCat(at, ": ", (!raw.ok() ? raw.status() : hw.status()).message()));
      all_ok = false;
      continue;
    }
    const int failures_before = report.failures();
    const std::string named = absl::StrCat(at, " '", hw->id, "'");
    CheckRawNumbers(**raw, named, report);
    if (absl::Status s = engine::ValidateHardware(*hw, at); !s.ok()) {
      report.Fail(absl::StrCat(named, ": engine validation: ", s.message()));
    }
    CheckHardware(*hw, named, report);
    report.Expect(ids.insert(hw->id).second,
                  absl::StrCat(named, ": duplicate platform id within the plugin"));
    absl::StatusOr<Hardware> again = lib->Platform(i);
    reference[i] = Describe(*hw);
    report.Expect(again.ok() && Describe(*again) == reference[i],
                  absl::StrCat(named, ": two reads of get_platform(", i,
                               ") differ (descriptors must be deterministic)"));
    if (report.failures() == failures_before) {
      report.Pass(absl::StrCat(named, ": descriptor valid (", hw->tiers.size(),
                               " tiers, ", hw->sources.size(), " sources)"));
    } else {
      all_ok = false;
    }
    platforms[i] = *std::move(hw);
  }

  // Out-of-range index must be an error, not a crash or garbage.
  {
    const RidgelinePlatform* p = nullptr;
    RidgelinePluginError* error = table.get_platform(count, &p);
    if (report.Expect(error != nullptr,
                      absl::StrCat("get_platform(", count,
                                   ") (one past the end) must return an error"))) {
      const char* message = table.error_message(error);
      const int32_t code = table.error_code(error);
      table.error_free(error);
      report.Expect(code != RIDGELINE_CODE_OK && message != nullptr,
                    "errors must carry a non-OK code and a message");
    }
  }

  // Efficiency hook: supported types answer, unsupported ones are refused.
  std::vector<std::vector<std::string>> hook_reference(count);
  if (table.efficiency != nullptr) {
    const int failures_before = report.failures();
    for (size_t i = 0; i < count; ++i) {
      if (reference[i].empty()) continue;
      const Hardware& hw = platforms[i];
      for (int op = 0; op < engine::kOpClassCount; ++op) {
        for (int m = 0; m < RIDGELINE_MATH_SLOTS; ++m) {
          const auto shape = Shape(static_cast<engine::OpClass>(op), m);
          auto r = lib->CallEfficiency(i, shape);
          const bool supported =
              m < engine::kMathTypeCount && hw.peak_ops_per_second[m].has_value();
          const std::string what = absl::StrCat(
              "efficiency(", hw.id, ", ",
              std::string(engine::OpClassName(static_cast<engine::OpClass>(op))), ", math ",
              m < engine::kMathTypeCount
                  ? std::string(engine::MathTypeName(static_cast<MathType>(m)))
                  : absl::StrCat(m),
              ")");
          if (supported) {
            report.Expect(r.ok(), absl::StrCat(what, " must succeed for a type "
                                                     "with a peak, got ",
                                               r.status().ToString()));
          } else {
            report.Expect(!r.ok() && r.status().code() ==
                                         absl::StatusCode::kUnimplemented,
                          absl::StrCat(what, " must return UNIMPLEMENTED for a "
                                             "type without a peak, got ",
                                       HookResult(r)));
          }
          report.Expect(HookResult(lib->CallEfficiency(i, shape)) == HookResult(r),
                        absl::StrCat(what, " is not deterministic"));
          hook_reference[i].push_back(HookResult(r));
        }
      }
    }
    auto bad = lib->CallEfficiency(count, Shape(engine::OpClass::kGemm, 3));
    report.Expect(!bad.ok(), absl::StrCat("efficiency(platform_index=", count,
                                          ") must return an error"));
    if (report.failures() == failures_before) {
      report.Pass("efficiency hook: answers supported types, UNIMPLEMENTED "
                  "for the others, deterministic");
    } else {
      all_ok = false;
    }
  }

  // Concurrency: every thread must see exactly the single-threaded answers.
  {
    std::atomic<int> mismatches{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int it = 0; it < iterations; ++it) {
          for (size_t k = 0; k < count; ++k) {
            const size_t i = (k + static_cast<size_t>(t)) % count;  // spread
            if (reference[i].empty()) continue;
            absl::StatusOr<Hardware> hw = lib->Platform(i);
            if (!hw.ok() || Describe(*hw) != reference[i]) ++mismatches;
            if (table.efficiency == nullptr) continue;
            size_t n = 0;
            for (int op = 0; op < engine::kOpClassCount; ++op) {
              for (int m = 0; m < RIDGELINE_MATH_SLOTS; ++m, ++n) {
                auto r = lib->CallEfficiency(
                    i, Shape(static_cast<engine::OpClass>(op), m));
                if (HookResult(r) != hook_reference[i][n]) ++mismatches;
              }
            }
          }
        }
      });
    }
    for (std::thread& th : pool) th.join();
    if (!report.Expect(mismatches.load() == 0,
                       absl::StrCat("concurrency: ", mismatches.load(),
                                    " answers from ", threads,
                                    " threads differed from single-threaded ones"))) {
      all_ok = false;
    } else {
      report.Pass(absl::StrCat("concurrency: ", threads, " threads x ", iterations,
                               " rounds of get_platform",
                               table.efficiency ? " + efficiency" : "",
                               " agree"));
    }
  }
  return all_ok;
}

int Main(int argc, char** argv) {
  int threads = 16;
  int iterations = 20;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--threads" || arg == "--iterations") && i + 1 < argc) {
      const int v = std::atoi(argv[++i]);
      if (v < 1 || v > 1024) {
        std::fprintf(stderr, "%s must be in [1, 1024], got %s\n", arg.c_str(),
                     argv[i]);
        return 2;
      }
      (arg == "--threads" ? threads : iterations) = v;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: ridgeline-plugin-check [--threads N] [--iterations N] lib.so...\n"
                  "Runs the Ridgeline plugin conformance checks; exit 0 = pass.\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "unknown option %s (try --help)\n", arg.c_str());
      return 2;
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: ridgeline-plugin-check [--threads N] [--iterations N] lib.so...\n");
    return 2;
  }
  std::printf("ridgeline-plugin-check (host ABI %d.%d)\n", RIDGELINE_PLUGIN_ABI_MAJOR,
              RIDGELINE_PLUGIN_ABI_MINOR);
  Report report;
  for (const auto& file : files) CheckFile(file, threads, iterations, report);
  if (files.size() > 1) {
    // Loading them together exposes ids claimed by two plugins.
    std::printf("all files together\n");
    std::fflush(stdout);  // keep the registry's stderr lines after this one
    // Each file's load was reported above; only refusals are news here.
    auto registry = HardwareRegistry::LoadFiles(files, LoadLog::kRefusalsOnly);
    for (const LoadOutcome& o : registry->outcomes()) {
      if (absl::StrContains(o.reason, "duplicate platform id")) {
        report.Fail(absl::StrCat(o.path, ": ", o.reason));
      }
    }
    report.Pass(absl::StrCat("registry: ", registry->platforms().size(),
                             " platforms from ", files.size(), " files"));
  }
  if (report.failures() == 0) {
    if (report.notes() > 0) {
      std::printf("RESULT: PASS (%d checks, %d notes)\n", report.checks(),
                  report.notes());
    } else {
      std::printf("RESULT: PASS (%d checks)\n", report.checks());
    }
    return 0;
  }
  std::printf("RESULT: FAIL (%d of %d checks failed)\n", report.failures(),
              report.checks());
  return 1;
}

}  // namespace
}  // namespace ridgeline::plugin_host

int main(int argc, char** argv) { return ridgeline::plugin_host::Main(argc, argv); }

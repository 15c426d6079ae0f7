#include "ridgeline/cli/cli.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analyze.h"
#include "calibrate.h"
#include "catalog.h"
#include "common.h"
#include "explore.h"
#include "flags.h"
#include "kernel.h"
#include "plan.h"
#include "simulate.h"
#include "step.h"
#include "sweep.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

struct Command {
  std::string_view name;
  std::string_view usage;
  std::string_view summary;
  std::function<std::vector<FlagSpec>()> flags;
  std::function<Outcome(Context&)> run;
};

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"analyze", "ridgeline analyze --model ID --hardware ID [flags]",
       "predict one scenario: latency, throughput, memory, per-op roofline",
       AnalyzeFlags, Analyze},
      {"sweep",
       "ridgeline sweep --model ID,... --hardware ID,... [--batch N,...] "
       "[flags]",
       "the cartesian product of models, hardware, formats and workloads "
       "(json: one point per line)",
       SweepFlags, Sweep},
      {"hardware", "ridgeline hardware [list | show ID] [flags]",
       "the hardware catalog of the loaded plugins",
       [] { return CatalogFlags("only this plugin family"); }, HardwareCommand},
      {"models", "ridgeline models [list | show ID] [flags]",
       "the built-in model catalog", [] { return CatalogFlags(""); },
       ModelsCommand},
      {"kernel",
       "ridgeline kernel attention --hardware ID [--batch N] [--q-heads N] "
       "[--kv-heads N] [--head-dim N] [--kv-len N] [--dtype FMT] [flags]\n"
       "       ridgeline kernel gemm --hardware ID --m N --n N --k N "
       "[--a-format FMT] [--b-format FMT] [flags]",
       "one kernel call (decode attention or GEMM): predicted time beside "
       "the roofline bound",
       KernelFlags, KernelCommand},
      {"step",
       "ridgeline step --model ID --hardware ID --seq CONTEXT:NEW "
       "[--seq ...] [flags]",
       "the time of one forward step of a real batch: every sequence at its "
       "own context (decode tokens and prefill chunks mixed)",
       StepFlags, StepCommand},
  };
  return kCommands;
}

void PrintMainHelp(std::ostream& out) {
  out << "ridgeline: predict LLM inference performance with a roofline "
         "model\n\n"
         "usage: ridgeline [--server HOST:PORT] <command> [flags]\n\n"
         "commands:\n";
  Table table;
  for (const Command& c : Commands()) {
    table.rows.push_back({std::string(c.name), std::string(c.summary)});
  }
  table.rows.push_back({"validate", "compare predictions with measurements"});
  table.rows.push_back(
      {"calibrate", "fit a calibration profile from measurements"});
  table.rows.push_back(
      {"plan", "cheapest deployments for a traffic at TTFT/TPOT targets"});
  table.rows.push_back(
      {"simulate", "one replica serving requests: latency percentiles"});
  PrintTable(table, TableStyle::kText, out);
  out << "\nRuns in-process by default (plugins from --plugin-dir, "
         "RIDGELINE_PLUGIN_DIR or the\ninstalled folder); --server sends the "
         "same requests to a ridgeline-server.\n'ridgeline <command> --help' "
         "lists a command's flags.\n";
}

std::string OneLine(std::string text) {
  return absl::StrReplaceAll(text, {{"\n", "; "}});
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err) {
  // Common flags may come before the command: split them off.
  std::vector<std::string> leading;
  size_t i = 0;
  for (; i < args.size() && args[i].starts_with("--"); ++i) {
    if (args[i] == "--help") {
      PrintMainHelp(out);
      return kOk;
    }
    leading.push_back(args[i]);
    std::string name = args[i].substr(2, args[i].find('=') - 2);
    auto spec = std::find_if(CommonFlags().begin(), CommonFlags().end(),
                             [&](const FlagSpec& s) { return s.name == name; });
    if (spec != CommonFlags().end() && !spec->value_name.empty() &&
        args[i].find('=') == std::string::npos) {
      // "ridgeline --server" used to print the whole help instead.
      if (i + 1 == args.size()) {
        err << "ridgeline: --" << name << " needs a value (" << spec->value_name
            << ")\n";
        return kUsage;
      }
      leading.push_back(args[++i]);
    }
  }
  if (args.empty()) {
    PrintMainHelp(err);
    return kUsage;
  }
  if (i == args.size()) {
    err << "ridgeline: missing command after flags (commands: analyze, sweep, "
           "step, hardware, models, kernel, validate, calibrate; see ridgeline "
           "--help)\n";
    return kUsage;
  }
  const std::string& name = args[i];
  std::vector<std::string> rest(args.begin() + i + 1, args.end());
  if (name == "help" || name == "-h") {
    PrintMainHelp(out);
    return kOk;
  }
  // validate and calibrate keep their own usage output (calibrate.h).
  if (name == "validate") return ValidateCli(rest, out, err);
  if (name == "calibrate") return CalibrateCli(rest, out, err);
  if (name == "explore" || name == "merge") return ExploreCli(name, leading, rest, out, err);
  if (name == "plan") {  // common flags (--server) may precede it
    leading.insert(leading.end(), rest.begin(), rest.end());
    return PlanCli(leading, out, err);
  }
  if (name == "simulate") {
    leading.insert(leading.end(), rest.begin(), rest.end());
    return SimulateCli(leading, out, err);
  }

  auto command = std::find_if(Commands().begin(), Commands().end(),
                              [&](const Command& c) { return c.name == name; });
  if (command == Commands().end()) {
    err << "ridgeline: unknown command '" << name
        << "' (commands: analyze, sweep, step, hardware, models, "
           "kernel, validate, calibrate; see ridgeline --help)\n";
    return kUsage;
  }
  std::vector<FlagSpec> specs = command->flags();
  leading.insert(leading.end(), rest.begin(), rest.end());
  absl::StatusOr<ParsedFlags> flags = ParseFlags(leading, specs);
  if (!flags.ok()) {
    err << "ridgeline " << name << ": " << flags.status().message() << "\n";
    return kUsage;
  }
  if (flags->Has("help")) {
    out << "usage: " << command->usage << "\n\n"
        << command->summary << "\n\nflags:\n"
        << FlagHelp(specs);
    return kOk;
  }
  Context ctx{*flags, Format::kTable, nullptr, out, err};
  Outcome outcome;
  try {
    outcome = command->run(ctx);
  } catch (const std::exception& e) {
    outcome = Failure{kFailed, absl::StrCat("internal error: ", e.what())};
  }
  if (!outcome) return kOk;
  err << "ridgeline " << name << ": " << OneLine(outcome->message) << "\n";
  return outcome->code;
}

}  // namespace ridgeline::cli

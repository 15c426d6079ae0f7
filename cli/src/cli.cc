#include "ridgeline/cli/cli.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "analyze.h"
#include "calibrate.h"
#include "catalog.h"
#include "common.h"
#include "explore.h"
#include "flags.h"
#include "kernel.h"
#include "measurements.h"
#include "plan.h"
#include "simulate.h"
#include "step.h"
#include "sweep.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

// Every command `ridgeline` knows: the dispatcher, --help and the
// "unknown command" message all read this one table.
struct Command {
  std::string_view name;
  std::string_view usage;
  std::string_view summary;
  // Commands on the common path: their flags and what runs them.
  std::function<std::vector<FlagSpec>()> flags;
  std::function<Outcome(Context&)> run;
  // Commands that parse their own command line (and print their own
  // usage): the flags given before the command name, then the rest.
  std::function<int(const std::vector<std::string>& leading,
                    const std::vector<std::string>& rest, std::ostream& out,
                    std::ostream& err)>
      own;
};

std::vector<std::string> Join(const std::vector<std::string>& leading,
                              const std::vector<std::string>& rest) {
  std::vector<std::string> all = leading;
  all.insert(all.end(), rest.begin(), rest.end());
  return all;
}

const std::vector<Command>& CommandTable() {
  static const std::vector<Command> kCommands = {
      {"analyze", "ridgeline analyze --model ID --hardware ID [flags]",
       "predict one scenario: latency, throughput, memory, per-op roofline",
       AnalyzeFlags, Analyze, nullptr},
      {"sweep",
       "ridgeline sweep --model ID,... --hardware ID,... [--batch N,...] "
       "[flags]",
       "the cartesian product of models, hardware, formats and workloads "
       "(json: one point per line)",
       SweepFlags, Sweep, nullptr},
      {"step",
       "ridgeline step --model ID --hardware ID --seq CONTEXT:NEW "
       "[--seq ...] [flags]",
       "the time of one forward step of a real batch: every sequence at its "
       "own context (decode tokens and prefill chunks mixed)",
       StepFlags, StepCommand, nullptr},
      {"hardware", "ridgeline hardware [list | show ID] [flags]",
       "the hardware catalog of the loaded plugins",
       [] { return CatalogFlags("only this plugin family"); }, HardwareCommand,
       nullptr},
      {"models", "ridgeline models [list | show ID] [flags]",
       "the built-in model catalog", [] { return CatalogFlags(""); },
       ModelsCommand, nullptr},
      {"kernel",
       "ridgeline kernel attention --hardware ID [--batch N] [--q-heads N] "
       "[--kv-heads N] [--head-dim N] [--kv-len N] [--dtype FMT] [flags]\n"
       "       ridgeline kernel gemm --hardware ID --m N --n N --k N "
       "[--a-format FMT] [--b-format FMT] [flags]",
       "one kernel call (decode attention or GEMM): predicted time beside "
       "the roofline bound",
       KernelFlags, KernelCommand, nullptr},
      {"explore", "",
       "design-space exploration: the exact Pareto front of hypothetical "
       "hardware and deployments (--shard I/N splits it)",
       nullptr, nullptr,
       [](const auto& leading, const auto& rest, auto& out, auto& err) {
         return ExploreCli("explore", leading, rest, out, err);
       }},
      {"merge", "",
       "combine the shard outputs of explore --shard I/N into the "
       "single-process output",
       nullptr, nullptr,
       [](const auto& leading, const auto& rest, auto& out, auto& err) {
         return ExploreCli("merge", leading, rest, out, err);
       }},
      {"plan", "", "cheapest deployments for a traffic at TTFT/TPOT targets",
       nullptr, nullptr,
       [](const auto& leading, const auto& rest, auto& out, auto& err) {
         return PlanCli(Join(leading, rest), out, err);
       }},
      {"simulate", "", "one replica serving requests: latency percentiles",
       nullptr, nullptr,
       [](const auto& leading, const auto& rest, auto& out, auto& err) {
         return SimulateCli(Join(leading, rest), out, err);
       }},
      // validate and calibrate keep their own usage output (calibrate.h).
      {"validate", "", "compare predictions with measurements", nullptr,
       nullptr,
       [](const auto&, const auto& rest, auto& out, auto& err) {
         return ValidateCli(rest, out, err);
       }},
      {"calibrate", "", "fit a calibration profile from measurements", nullptr,
       nullptr,
       [](const auto&, const auto& rest, auto& out, auto& err) {
         return CalibrateCli(rest, out, err);
       }},
      {"measurements", "",
       "import a serving benchmark's result file (vllm bench serve, SGLang "
       "bench_serving, GuideLLM, genai-perf, AIPerf) as measurement rows",
       nullptr, nullptr,
       [](const auto&, const auto& rest, auto& out, auto& err) {
         return MeasurementsCli(rest, out, err);
       }},
  };
  return kCommands;
}

std::string CommandNames() {
  std::vector<std::string> names;
  for (const Command& c : CommandTable()) names.emplace_back(c.name);
  return absl::StrJoin(names, ", ");
}

void PrintMainHelp(std::ostream& out) {
  out << "ridgeline: predict LLM inference performance with a roofline "
         "model\n\n"
         "usage: ridgeline [--server HOST:PORT] <command> [flags]\n\n"
         "commands:\n";
  Table table;
  for (const Command& c : CommandTable()) {
    table.rows.push_back({std::string(c.name), std::string(c.summary)});
  }
  PrintTable(table, TableStyle::kText, out);
  out << "\nRuns in-process by default (plugins from --plugin-dir, "
         "RIDGELINE_PLUGIN_DIR or the\ninstalled folder, plus any "
         "--extra-plugin-dir); --server sends the same requests\nto a "
         "ridgeline-server. 'ridgeline <command> --help' lists a command's "
         "flags.\n";
}

std::string OneLine(std::string text) {
  return absl::StrReplaceAll(text, {{"\n", "; "}});
}

}  // namespace

std::vector<CommandSummary> Commands() {
  std::vector<CommandSummary> out;
  for (const Command& c : CommandTable()) {
    out.push_back({std::string(c.name), std::string(c.summary)});
  }
  return out;
}

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
    err << "ridgeline: missing command after flags (commands: "
        << CommandNames() << "; see ridgeline --help)\n";
    return kUsage;
  }
  const std::string& name = args[i];
  std::vector<std::string> rest(args.begin() + i + 1, args.end());
  if (name == "help" || name == "-h") {
    PrintMainHelp(out);
    return kOk;
  }
  auto command = std::find_if(CommandTable().begin(), CommandTable().end(),
                              [&](const Command& c) { return c.name == name; });
  if (command == CommandTable().end()) {
    err << "ridgeline: unknown command '" << name
        << "' (commands: " << CommandNames() << "; see ridgeline --help)\n";
    return kUsage;
  }
  if (command->own) return command->own(leading, rest, out, err);
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

// `ridgeline explore` and `ridgeline merge`.
//
// Output (one format for both commands, so merge reproduces explore):
//   csv   header: one column per axis (named as given to --vary), one per
//         objective (named as given to --objective), then feasible, fits,
//         spilled, pareto (1/0), with --all violation (0 when
//         feasible, else how far the constraints are missed), then ties
//         (front rows: the points sharing that objective vector, 1 = no
//         tie; empty off the front; a tie group lists at most 16 of its
//         points, docs/explore.md "Ties"). Rows in grid
//         order (axis values ascending, the first axis slowest). Numbers
//         in the shortest form that parses back to the same double, so
//         merge recomputes the front exactly. Without --all only the
//         front's points. With --shard, a first line "# ridgeline explore
//         shard=I/N request=FINGERPRINT total_points=.. shard_points=..
//         evaluated=.. feasible=.." says which part of which request the
//         rows are (merge checks the set; its own output is whole and has
//         no such line).
//   json  JSON Lines: {"point": {...}} per row, then {"summary": {...}}
//         (canonical proto3 JSON of ExploreResponse; no timing, so shard
//         merges are byte-identical).
//   table the same rows for people, then a summary line.
// A progress bar goes to stderr only when stderr is a terminal.
#include "explore.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client.h"
#include "common.h"
#include "decode_flags.h"
#include "explore_sensitivity.h"
#include "flags.h"
#include "google/protobuf/util/json_util.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/explore/explore.h"
#include "ridgeline/explore/hypervolume.h"
#include "ridgeline/explore/objectives.h"
#include "ridgeline/explore/pareto.h"
#include "ridgeline/explore/space.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

std::vector<FlagSpec> ExploreFlags() {
  std::vector<FlagSpec> flags = {
      {"model", "ID", "catalog model id"},
      {"model-config", "FILE.json", "a Hugging Face config.json instead"},
      {"hardware", "ID", "the base part: a platform id"},
      {"hardware-file", "FILE.json",
       "the base part: inline hardware (proto JSON)"},
      {"batch", "N", "sequences decoded together (default 1)"},
      {"prompt", "N", "prompt tokens (default 512)"},
      {"gen", "N", "generated tokens (default 128)"},
      {"weights", "FMT", "weight format (default bf16)"},
      {"activations", "FMT", "activation format (default bf16)"},
      {"kv", "FMT", "KV-cache format (default bf16)"},
      {"tensor-parallel", "N", "devices per model replica (default 1)"},
      {"profile", "NAME", "calibration profile by name"},
      {"framework", "NAME", "best calibration profile for this framework"},
      {"pure-roofline", "", "ignore calibration: the speed upper bound"},
      {"vary", "AXIS=VALUES",
       "an axis (repeat): a,b,c or lo:hi:n log-spaced; bandwidth_gbs "
       "peak_tflops[.TYPE] capacity_gb sram_mb sram_bandwidth_gbs tdp_w "
       "price_usd interconnect_gbs pim_bandwidth_gbs pim_tflops, *_x "
       "multipliers, batch prompt gen weights activations kv tensor_parallel "
       "speculative_tokens acceptance_rate (with --speculative)"},
      {"objective", "METRIC[:max|:min]",
       "an objective (repeat, 2..6): decode_tok_s decode_tok_s_total "
       "prefill_tok_s ttft_ms tpot_ms e2e_ms j_per_token usd_per_mtoken "
       "gco2_per_mtoken price_usd power_w"},
      {"constraint", "METRIC<=X|METRIC>=X|fits",
       "a constraint (repeat); fitting in memory always applies"},
      {"all", "",
       "print every point (with feasible, fits, pareto), not only the front"},
      {"shard", "I/N", "evaluate only the points with index % N == I"},
      {"resume-from", "INDEX", "skip grid indices below INDEX"},
      {"nsga2-generations", "N",
       "search with NSGA-II for N generations instead of the full grid"},
      {"nsga2-population", "N", "NSGA-II population (even, default 64)"},
      {"seed", "N", "NSGA-II seed (default 0)"},
      {"sensitivity", "INDEX",
       "instead of exploring: the elasticity of every objective (every "
       "metric without --objective) to every axis at the point with this "
       "grid index (0 when each axis has one value)"},
      {"server", "HOST:PORT", "send the request to a ridgeline-server"},
      {"plugin-dir", "DIR",
       "in-process: hardware plugin folder, instead of the installed plugins"},
      {"extra-plugin-dir", "DIR",
       "in-process: also load the plugins of this folder (repeatable, or a "
       "comma list)"},
      {"profile-dir", "DIR", "in-process: calibration profile folder"},
      {"format", "table|csv|json", "output format (default table)"},
      {"timeout", "SECONDS", "deadline with --server (default 600)"},
      {"help", "", "show this help"},
  };
  flags.insert(flags.end(), DecodeVariantFlags().begin(),
               DecodeVariantFlags().end());
  return flags;
}

std::vector<FlagSpec> MergeFlags() {
  return {
      {"all", "", "keep every row (the inputs came from explore --all)"},
      {"format", "table|csv|json", "output format (default: that of the inputs)"},
      {"help", "", "show this help"},
  };
}

// One output row, whatever the source (a stream or a file).
struct Row {
  std::vector<std::string> axes;  // labels
  explore::PointRow point;
  size_t shard = 0;  // merge: which input the row came from
};

struct Output {
  std::vector<std::string> axis_names;
  std::vector<std::string> objective_names;  // as given
  std::vector<Row> rows;
  v1::ExploreSummary summary;  // without seconds
  double seconds = 0;
  bool shard_line = false;  // csv: print the "# ridgeline explore" line
};

constexpr char kShardLineTag[] = "# ridgeline explore ";

// The csv line that says which shard of which request the rows are, and
// how many of the leading columns are axes (an axis may share a metric's
// name, e.g. price_usd, so the header alone cannot say).
std::string ShardLine(const v1::ExploreSummary& s, size_t axes) {
  return absl::StrCat(
      kShardLineTag, "shard=", s.shard_index(), "/", s.shard_count(),
      " request=", s.request_fingerprint(), " total_points=", s.total_points(),
      " shard_points=", s.shard_points(), " evaluated=", s.evaluated(),
      " feasible=", s.feasible(), " axes=", axes);
}

// "216 of 216 points evaluated (216 in all), 180 feasible, front of 4; ...".
std::string SummaryLine(const v1::ExploreSummary& s) {
  const std::string evaluated =
      s.generations().empty()
          ? absl::StrFormat("%d of %d points evaluated (%d in all)",
                            s.evaluated(), s.shard_points(), s.total_points())
          : absl::StrFormat(
                "%d of %d points evaluated by NSGA-II (%d generations)",
                s.evaluated(), s.total_points(), s.generations_size() - 1);
  return absl::StrFormat(
      "%s, %d feasible, front of %d; hypervolume %.6g%s", evaluated,
      s.feasible(), s.front_size(), s.hypervolume(),
      s.hypervolume_exact() ? "" : " (Monte-Carlo estimate)");
}

std::string Num(double v) {
  return std::isfinite(v) ? explore::FormatNumber(v) : "";
}

std::string Human(double v) {
  return std::isfinite(v) ? absl::StrFormat("%.4g", v) : "-";
}

void Print(const Output& o, const std::string& format, bool all,
           std::ostream& out) {
  if (format == "json") {
    for (const Row& r : o.rows) {
      if (!all && !r.point.pareto) continue;
      v1::ExploreResponse m;
      v1::ExplorePoint* p = m.mutable_point();
      p->set_index(r.point.index);
      for (const auto& a : r.axes) p->add_axis_values(a);
      for (double v : r.point.objectives) p->add_objectives(v);
      p->set_feasible(r.point.feasible);
      p->set_fits(r.point.fits);
      p->set_spilled(r.point.spilled);
      p->set_pareto(r.point.pareto);
      p->set_violation(r.point.violation);
      if (r.point.pareto) p->set_ties(r.point.ties);
      out << Json(m) << "\n";
    }
    v1::ExploreResponse m;
    *m.mutable_summary() = o.summary;
    out << Json(m) << "\n";
    return;
  }
  const bool csv = format == "csv";
  Table t;
  for (const auto& a : o.axis_names) t.headers.push_back(csv ? a : ">" + a);
  for (const auto& n : o.objective_names) t.headers.push_back(csv ? n : ">" + n);
  for (const char* h : {"feasible", "fits", "spilled", "pareto"}) {
    t.headers.push_back(h);
  }
  if (all) t.headers.push_back(csv ? "violation" : ">violation");
  t.headers.push_back(csv ? "ties" : ">ties");
  for (const Row& r : o.rows) {
    if (!all && !r.point.pareto) continue;
    std::vector<std::string> cells = r.axes;
    for (double v : r.point.objectives) cells.push_back(csv ? Num(v) : Human(v));
    cells.push_back(r.point.feasible ? "1" : "0");
    cells.push_back(r.point.fits ? "1" : "0");
    cells.push_back(r.point.spilled ? "1" : "0");
    cells.push_back(r.point.pareto ? "1" : "0");
    if (all) {
      const double v = r.point.violation;
      cells.push_back(csv ? Num(v) : (v == 0 ? "0" : Human(v)));
    }
    cells.push_back(r.point.pareto ? absl::StrCat(r.point.ties) : "");
    t.rows.push_back(std::move(cells));
  }
  if (csv && o.shard_line)
    out << ShardLine(o.summary, o.axis_names.size()) << "\n";
  PrintTable(t, csv ? TableStyle::kCsv : TableStyle::kText, out, 0);
  if (!csv) out << "\n" << SummaryLine(o.summary) << "\n";
}

class ProgressBar {
 public:
  ProgressBar(std::ostream& err) : err_(err), tty_(isatty(2) == 1) {}
  void Update(uint64_t done, uint64_t total) {
    if (!tty_ || total == 0) return;
    const int width = 40;
    const int fill = static_cast<int>(width * done / total);
    err_ << "\r[" << std::string(fill, '#') << std::string(width - fill, '.')
         << "] " << absl::StrFormat("%3d%% %d/%d points", 100 * done / total,
                                    done, total)
         << std::flush;
    shown_ = true;
  }
  ~ProgressBar() {
    if (shown_) err_ << "\n";
  }

 private:
  std::ostream& err_;
  bool tty_;
  bool shown_ = false;
};

std::optional<Failure> BuildRequest(const ParsedFlags& f,
                                    v1::ExploreRequest* req) {
  auto usage = [](std::string m) { return Failure{kUsage, std::move(m)}; };
  if (!f.positional().empty()) {
    return usage(absl::StrCat("unexpected argument '", f.positional()[0], "'"));
  }
  if (auto m = f.Get("model")) {
    req->mutable_model()->set_catalog_id(*m);
  } else if (auto path = f.Get("model-config")) {
    std::ifstream in(*path);
    if (!in) return usage(absl::StrCat("--model-config: cannot read '", *path, "'"));
    std::stringstream b;
    b << in.rdbuf();
    req->mutable_model()->set_hf_config_json(b.str());
  } else {
    return usage("give --model ID or --model-config FILE.json");
  }
  if (auto h = f.Get("hardware")) {
    req->mutable_hardware()->set_platform_id(*h);
  } else if (auto path = f.Get("hardware-file")) {
    std::ifstream in(*path);
    if (!in) return usage(absl::StrCat("--hardware-file: cannot read '", *path, "'"));
    std::stringstream b;
    b << in.rdbuf();
    auto st = google::protobuf::util::JsonStringToMessage(
        b.str(), req->mutable_hardware()->mutable_description());
    if (!st.ok()) {
      return usage(absl::StrCat("--hardware-file: '", *path,
                                "' is not a ridgeline.v1.Hardware in proto JSON: ",
                                st.message().as_string()));
    }
  } else {
    return usage("give --hardware ID or --hardware-file FILE.json (the base part)");
  }
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  for (auto [flag, set] :
       {std::pair{"batch", &v1::Workload::set_batch},
        std::pair{"prompt", &v1::Workload::set_prompt_tokens},
        std::pair{"gen", &v1::Workload::set_generated_tokens}}) {
    absl::StatusOr<std::optional<int64_t>> v = f.GetInt(flag, -kAny, kAny);
    if (!v.ok()) return usage(std::string(v.status().message()));
    if (*v) (req->mutable_workload()->*set)(**v);
  }
  if (auto v = f.Get("weights")) req->mutable_formats()->set_weights(*v);
  if (auto v = f.Get("activations")) req->mutable_formats()->set_activations(*v);
  if (auto v = f.Get("kv")) req->mutable_formats()->set_kv_cache(*v);
  absl::StatusOr<std::optional<int64_t>> tp = f.GetInt("tensor-parallel", 1, 256);
  if (!tp.ok()) return usage(std::string(tp.status().message()));
  if (*tp) req->mutable_parallelism()->set_tensor_parallel(static_cast<int32_t>(**tp));
  if (auto p = f.Get("profile")) req->mutable_calibration()->set_profile(*p);
  if (auto p = f.Get("framework")) req->mutable_calibration()->set_framework(*p);
  if (f.Has("pure-roofline")) req->mutable_options()->set_pure_roofline(true);
  if (auto m = FillDecodeVariants(f, req->mutable_options())) return usage(*m);
  for (const auto& v : f.GetAll("vary")) req->add_vary(v);
  for (const auto& v : f.GetAll("objective")) req->add_objectives(v);
  for (const auto& v : f.GetAll("constraint")) req->add_constraints(v);
  req->set_include_all(f.Has("all"));
  if (auto s = f.Get("shard")) {
    absl::StatusOr<explore::Shard> sh = explore::ParseShard(*s, "--shard");
    if (!sh.ok()) return usage(std::string(sh.status().message()));
    req->set_shard_index(static_cast<uint32_t>(sh->index));
    req->set_shard_count(static_cast<uint32_t>(sh->count));
  }
  absl::StatusOr<std::optional<int64_t>> resume = f.GetInt("resume-from", 0, kAny);
  if (!resume.ok()) return usage(std::string(resume.status().message()));
  if (*resume) req->set_resume_from(static_cast<uint64_t>(**resume));
  absl::StatusOr<std::optional<int64_t>> gens = f.GetInt("nsga2-generations", 0, 10000);
  if (!gens.ok()) return usage(std::string(gens.status().message()));
  if (*gens) req->set_nsga2_generations(static_cast<int32_t>(**gens));
  absl::StatusOr<std::optional<int64_t>> pop = f.GetInt("nsga2-population", 4, 4096);
  if (!pop.ok()) return usage(std::string(pop.status().message()));
  if (*pop) req->set_nsga2_population(static_cast<int32_t>(**pop));
  absl::StatusOr<std::optional<int64_t>> seed = f.GetInt("seed", 0, kAny);
  if (!seed.ok()) return usage(std::string(seed.status().message()));
  if (*seed) req->set_nsga2_seed(static_cast<uint64_t>(**seed));
  return std::nullopt;
}

int Explore(const ParsedFlags& f, std::ostream& out, std::ostream& err) {
  const std::string format = f.Get("format").value_or("table");
  if (format != "table" && format != "csv" && format != "json") {
    err << "ridgeline explore: --format: expected table, csv or json, got '"
        << format << "'\n";
    return kUsage;
  }
  v1::ExploreRequest req;
  if (std::optional<Failure> fail = BuildRequest(f, &req)) {
    err << "ridgeline explore: " << fail->message << "\n";
    return fail->code;
  }
  std::unique_ptr<Client> client;
  if (Outcome o = ClientFor(f, std::chrono::seconds(600), &client)) {
    err << "ridgeline explore: " << o->message << "\n";
    return o->code;
  }
  if (f.Has("sensitivity")) {
    absl::StatusOr<std::optional<int64_t>> at = f.GetInt(
        "sensitivity", 0, std::numeric_limits<int64_t>::max());
    if (!at.ok()) {
      err << "ridgeline explore: " << at.status().message() << "\n";
      return kUsage;
    }
    v1::ExploreSensitivityRequest sreq;
    *sreq.mutable_space() = std::move(req);
    sreq.set_index(static_cast<uint64_t>(at->value_or(0)));
    const absl::Status st = RunExploreSensitivity(*client, sreq, format, out);
    if (st.ok()) return kOk;
    // The request's fields sit under "space." (Failed maps them to their
    // flags); the point's index is --sensitivity's.
    if (engine::FieldPathOf(st).value_or("") == "index") {
      err << "ridgeline explore: " << absl::StatusCodeToString(st.code())
          << ": " << st.message() << " (flag --sensitivity)\n";
    } else {
      err << "ridgeline explore: " << Failed(st).message << "\n";
    }
    return kFailed;
  }
  Output o;
  {
    ProgressBar bar(err);
    absl::Status st = client->Explore(req, [&](const v1::ExploreResponse& m) {
      if (m.has_progress()) {
        bar.Update(m.progress().points_done(), m.progress().points_total());
      } else if (m.has_point() && !m.point().provisional()) {
        Row r;
        r.axes.assign(m.point().axis_values().begin(), m.point().axis_values().end());
        r.point.index = m.point().index();
        r.point.objectives.assign(m.point().objectives().begin(),
                                  m.point().objectives().end());
        r.point.feasible = m.point().feasible();
        r.point.fits = m.point().fits();
        r.point.spilled = m.point().spilled();
        r.point.pareto = m.point().pareto();
        r.point.violation = m.point().violation();
        r.point.ties = std::max<uint64_t>(m.point().ties(), 1);
        o.rows.push_back(std::move(r));
      } else if (m.has_summary()) {
        o.summary = m.summary();
      }
    });
    if (!st.ok()) {
      err << "ridgeline explore: " << Failed(st).message << "\n";
      return kFailed;
    }
  }
  o.seconds = o.summary.seconds();
  o.summary.set_seconds(0);
  o.axis_names.assign(req.vary().begin(), req.vary().end());
  for (auto& n : o.axis_names) n = n.substr(0, n.find('='));
  o.objective_names.assign(req.objectives().begin(), req.objectives().end());
  o.shard_line = f.Has("shard");
  // Without --all the server sent the front only: the filter keeps it all.
  Print(o, format, f.Has("all"), out);
  if (format == "table") {
    err << absl::StrFormat("explored in %.3f s\n", o.seconds);
  }
  return kOk;
}

// ---- merge ---------------------------------------------------------------

bool IsFormatAxis(std::string_view name) {
  return name == "weights" || name == "activations" || name == "kv";
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  // Our own output: RFC 4180 quoting only where a cell needs it.
  std::vector<std::string> cells;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  cells.push_back(std::move(cur));
  return cells;
}

// Which shard of which request one input is (its summary, or the csv's
// "# ridgeline explore" line), with the point counts it covers.
struct ShardPart {
  std::string path;
  v1::ExploreSummary summary;  // shard, fingerprint and counts only
  std::optional<size_t> axes;  // csv: leading axis columns (shard line)
};

std::optional<Failure> ParseShardLine(const std::string& path,
                                      const std::string& line,
                                      ShardPart* part) {
  v1::ExploreSummary* s = &part->summary;
  auto bad = [&](const char* why) {
    return Failure{kFailed, absl::StrCat(path, ": bad shard line (", why,
                                         "): \"", line, "\"")};
  };
  std::map<std::string, std::string, std::less<>> kv;
  const std::string items = line.substr(std::string_view(kShardLineTag).size());
  for (absl::string_view item : absl::StrSplit(items, ' ', absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) return bad("want KEY=VALUE items");
    kv[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
  }
  std::vector<std::string> shard = absl::StrSplit(kv["shard"], '/');
  uint32_t index = 0, count = 0;
  uint64_t total = 0, points = 0, evaluated = 0, feasible = 0;
  if (shard.size() != 2 || !absl::SimpleAtoi(shard[0], &index) ||
      !absl::SimpleAtoi(shard[1], &count) || count == 0 || index >= count) {
    return bad("shard=I/N with 0 <= I < N");
  }
  if (kv["request"].empty()) return bad("request=FINGERPRINT");
  if (!absl::SimpleAtoi(kv["total_points"], &total) ||
      !absl::SimpleAtoi(kv["shard_points"], &points) ||
      !absl::SimpleAtoi(kv["evaluated"], &evaluated) ||
      !absl::SimpleAtoi(kv["feasible"], &feasible)) {
    return bad("total_points, shard_points, evaluated and feasible counts");
  }
  if (kv.count("axes") > 0) {  // absent in outputs older than it
    size_t axes = 0;
    if (!absl::SimpleAtoi(kv["axes"], &axes)) return bad("axes=COUNT");
    part->axes = axes;
  }
  s->set_shard_index(index);
  s->set_shard_count(count);
  s->set_request_fingerprint(kv["request"]);
  s->set_total_points(total);
  s->set_shard_points(points);
  s->set_evaluated(evaluated);
  s->set_feasible(feasible);
  return std::nullopt;
}

std::optional<Failure> ReadCsv(const std::string& path, std::istream& in,
                               Output* o, size_t part_index, ShardPart* part) {
  const bool first = part_index == 0;
  std::string line;
  if (!std::getline(in, line)) return Failure{kFailed, absl::StrCat(path, ": empty")};
  if (!line.starts_with(kShardLineTag)) {
    return Failure{kFailed,
                   absl::StrCat(path, ": no \"", kShardLineTag,
                                "shard=...\" first line: not the csv of "
                                "`ridgeline explore --shard I/N`")};
  }
  if (auto fail = ParseShardLine(path, line, part)) return fail;
  if (!std::getline(in, line)) {
    return Failure{kFailed,
                   absl::StrCat(path, ": no header after the shard line")};
  }
  std::vector<std::string> head = SplitCsvLine(line);
  // Last, ties (absent in outputs older than it: every front row then
  // counts as one point); before it, made with --all, violation.
  const bool has_ties = !head.empty() && head.back() == "ties";
  const size_t ties_at = head.size() - 1;
  const size_t before_ties = head.size() - (has_ties ? 1 : 0);
  const bool has_violation =
      before_ties > 0 && head[before_ties - 1] == "violation";
  const size_t violation_at = before_ties - 1;
  const size_t flags_end = before_ties - (has_violation ? 1 : 0);
  if (flags_end < 6 || head[flags_end - 4] != "feasible" ||
      head[flags_end - 3] != "fits" || head[flags_end - 2] != "spilled" ||
      head[flags_end - 1] != "pareto") {
    return Failure{kFailed, absl::StrCat(path,
                                         ": not a ridgeline explore CSV "
                                         "(header must end with "
                                         "feasible,fits,spilled,pareto"
                                         "[,violation][,ties])")};
  }
  const size_t objectives_end = flags_end - 4;
  // The shard line says how many are axes; older outputs: the trailing
  // columns that parse as objectives.
  size_t n_obj = 0;
  if (part->axes.has_value()) {
    if (*part->axes > objectives_end) {
      return Failure{kFailed,
                     absl::StrCat(path, ": the shard line says ", *part->axes,
                                  " axes, the header has ", objectives_end,
                                  " columns before feasible")};
    }
    n_obj = objectives_end - *part->axes;
  } else {
    for (size_t k = objectives_end; k-- > 0;) {
      if (!explore::ParseObjective(head[k], "").ok()) break;
      ++n_obj;
    }
  }
  const size_t n_axes = objectives_end - n_obj;
  std::vector<std::string> axes(head.begin(), head.begin() + n_axes);
  std::vector<std::string> objs(head.begin() + n_axes,
                                head.begin() + objectives_end);
  if (first) {
    o->axis_names = axes;
    o->objective_names = objs;
  } else if (axes != o->axis_names || objs != o->objective_names) {
    return Failure{kFailed, absl::StrCat(path, ": columns differ from the "
                                               "first input's")};
  }
  int n = 2;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (cells.size() != head.size()) {
      return Failure{kFailed, absl::StrCat(path, ":", n, ": ", cells.size(),
                                           " cells, header has ", head.size())};
    }
    Row r;
    r.axes.assign(cells.begin(), cells.begin() + n_axes);
    for (size_t k = 0; k < n_obj; ++k) {
      double v = std::nan("");
      const std::string& c = cells[n_axes + k];
      if (!c.empty() && !absl::SimpleAtod(c, &v)) {
        return Failure{kFailed, absl::StrCat(path, ":", n, ": bad number '", c, "'")};
      }
      r.point.objectives.push_back(v);
    }
    r.point.feasible = cells[flags_end - 4] == "1";
    r.point.fits = cells[flags_end - 3] == "1";
    r.point.spilled = cells[flags_end - 2] == "1";
    r.point.pareto = cells[flags_end - 1] == "1";
    if (has_violation &&
        !absl::SimpleAtod(cells[violation_at], &r.point.violation)) {
      return Failure{kFailed, absl::StrCat(path, ":", n, ": bad violation '",
                                           cells[violation_at], "'")};
    }
    if (has_ties && r.point.pareto &&
        (!absl::SimpleAtoi(cells[ties_at], &r.point.ties) ||
         r.point.ties == 0)) {
      return Failure{kFailed,
                     absl::StrCat(path, ":", n, ": bad ties '", cells[ties_at],
                                  "' (a count >= 1 on a front row)")};
    }
    r.shard = part_index;
    o->rows.push_back(std::move(r));
  }
  return std::nullopt;
}

std::optional<Failure> ReadJson(const std::string& path, std::istream& in,
                                Output* o, size_t part_index, ShardPart* part) {
  const bool first = part_index == 0;
  std::string line;
  bool have_summary = false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    v1::ExploreResponse m;
    if (!google::protobuf::util::JsonStringToMessage(line, &m).ok()) {
      return Failure{kFailed, absl::StrCat(path, ": not ridgeline explore JSON Lines")};
    }
    if (m.has_point()) {
      Row r;
      r.axes.assign(m.point().axis_values().begin(), m.point().axis_values().end());
      r.point.index = m.point().index();
      r.point.objectives.assign(m.point().objectives().begin(),
                                m.point().objectives().end());
      r.point.feasible = m.point().feasible();
      r.point.fits = m.point().fits();
      r.point.spilled = m.point().spilled();
      r.point.pareto = m.point().pareto();
      r.point.violation = m.point().violation();
      r.point.ties = std::max<uint64_t>(m.point().ties(), 1);
      r.shard = part_index;
      o->rows.push_back(std::move(r));
    } else if (m.has_summary()) {
      const v1::ExploreSummary& s = m.summary();
      have_summary = true;
      std::vector<std::string> axes(s.axis_names().begin(), s.axis_names().end());
      std::vector<std::string> objs(s.objective_names().begin(),
                                    s.objective_names().end());
      if (first) {
        o->axis_names = axes;
        o->objective_names = objs;
      } else if (axes != o->axis_names || objs != o->objective_names) {
        return Failure{kFailed, absl::StrCat(path, ": axes or objectives differ "
                                                   "from the first input's")};
      }
      if (s.shard_count() == 0 || s.request_fingerprint().empty()) {
        return Failure{kFailed,
                       absl::StrCat(path,
                                    ": its summary names no shard "
                                    "(shard_count, request_fingerprint):"
                                    " not the output of this ridgeline "
                                    "explore")};
      }
      part->summary.set_shard_index(s.shard_index());
      part->summary.set_shard_count(s.shard_count());
      part->summary.set_request_fingerprint(s.request_fingerprint());
      part->summary.set_total_points(s.total_points());
      part->summary.set_shard_points(s.shard_points());
      part->summary.set_evaluated(s.evaluated());
      part->summary.set_feasible(s.feasible());
    }
  }
  if (!have_summary) return Failure{kFailed, absl::StrCat(path, ": no summary line")};
  return std::nullopt;
}

// The inputs must be the whole of one request: the same fingerprint, shard
// count and grid, every shard 0..N-1 exactly once, each complete. Then
// `summary` gets their sums, as one process would have printed them.
std::optional<Failure> CheckShardSet(const std::vector<ShardPart>& parts,
                                     v1::ExploreSummary* summary) {
  auto fail = [](std::string m) { return Failure{kFailed, std::move(m)}; };
  const ShardPart& a = parts.front();
  const v1::ExploreSummary& s0 = a.summary;
  std::vector<const ShardPart*> by_index(s0.shard_count(), nullptr);
  uint64_t points = 0, evaluated = 0, feasible = 0;
  for (const ShardPart& p : parts) {
    const v1::ExploreSummary& s = p.summary;
    if (s.request_fingerprint() != s0.request_fingerprint()) {
      return fail(absl::StrCat(
          p.path, " is a shard of another request than ", a.path,
          " (request fingerprint ", s.request_fingerprint(), ", not ",
          s0.request_fingerprint(), "): merge the shards of one explore"));
    }
    if (s.shard_count() != s0.shard_count() ||
        s.total_points() != s0.total_points()) {
      return fail(absl::StrCat(
          p.path, " is shard ", s.shard_index(), "/", s.shard_count(), " of ",
          s.total_points(), " points, ", a.path, " one of ", s0.shard_count(),
          " shards of ", s0.total_points(), " points"));
    }
    const ShardPart*& seen = by_index[s.shard_index()];
    if (seen != nullptr) {
      return fail(absl::StrCat("shard ", s.shard_index(), "/", s.shard_count(),
                               " given twice: ", seen->path, " and ", p.path));
    }
    seen = &p;
    const uint64_t want = explore::ShardSize(
        s.total_points(), explore::Shard{s.shard_index(), s.shard_count()});
    // NSGA-II (never sharded) covers the grid it searched, not every point.
    if (s.shard_points() != want ||
        (s.evaluated() != want && s.shard_count() > 1)) {
      return fail(absl::StrCat(
          p.path, ": shard ", s.shard_index(), "/", s.shard_count(),
          " evaluated ", s.evaluated(), " of its ", want,
          " points (made with --resume-from?): not a whole shard"));
    }
    points += s.shard_points();
    evaluated += s.evaluated();
    feasible += s.feasible();
  }
  std::vector<std::string> missing;
  for (uint32_t i = 0; i < by_index.size(); ++i) {
    if (by_index[i] == nullptr) {
      missing.push_back(absl::StrCat(i, "/", s0.shard_count()));
    }
  }
  if (!missing.empty()) {
    return fail(absl::StrCat("missing shard", missing.size() > 1 ? "s " : " ",
                             absl::StrJoin(missing, ", "), " (", parts.size(),
                             " of ", s0.shard_count(), " given)"));
  }
  summary->set_total_points(s0.total_points());
  summary->set_shard_points(points);
  summary->set_evaluated(evaluated);
  summary->set_feasible(feasible);
  summary->set_shard_index(0);
  summary->set_shard_count(1);
  summary->set_request_fingerprint(s0.request_fingerprint());
  return std::nullopt;
}

int Merge(const ParsedFlags& f, std::ostream& out, std::ostream& err) {
  if (f.positional().empty()) {
    err << "ridgeline merge: give the shard outputs: ridgeline merge A.csv B.csv ...\n";
    return kUsage;
  }
  Output o;
  std::string input_format;
  std::vector<ShardPart> parts;
  for (size_t i = 0; i < f.positional().size(); ++i) {
    const std::string& path = f.positional()[i];
    std::ifstream in(path);
    if (!in) {
      err << "ridgeline merge: cannot read '" << path << "'\n";
      return kFailed;
    }
    const int c = in.peek();
    const std::string fmt = c == '{' ? "json" : "csv";
    if (!input_format.empty() && fmt != input_format) {
      err << "ridgeline merge: " << path << " is " << fmt << ", the others "
          << input_format << "\n";
      return kFailed;
    }
    input_format = fmt;
    ShardPart& part = parts.emplace_back();
    part.path = path;
    std::optional<Failure> fail = fmt == "json"
                                      ? ReadJson(path, in, &o, i, &part)
                                      : ReadCsv(path, in, &o, i, &part);
    if (fail) {
      err << "ridgeline merge: " << fail->message << "\n";
      return fail->code;
    }
  }
  if (std::optional<Failure> fail = CheckShardSet(parts, &o.summary)) {
    err << "ridgeline merge: " << fail->message << "\n";
    return fail->code;
  }
  // Grid order: axis values ascending (numbers) or by name (formats),
  // exactly the order explore numbers points in.
  const size_t n_axes = o.axis_names.size();
  auto less = [&](const Row& a, const Row& b) {
    for (size_t k = 0; k < n_axes; ++k) {
      if (a.axes[k] == b.axes[k]) continue;
      if (IsFormatAxis(o.axis_names[k])) return a.axes[k] < b.axes[k];
      double x = 0, y = 0;
      (void)absl::SimpleAtod(a.axes[k], &x);
      (void)absl::SimpleAtod(b.axes[k], &y);
      return x < y;
    }
    return false;
  };
  std::stable_sort(o.rows.begin(), o.rows.end(), less);
  o.rows.erase(std::unique(o.rows.begin(), o.rows.end(),
                           [](const Row& a, const Row& b) { return a.axes == b.axes; }),
               o.rows.end());
  std::vector<explore::Objective> objectives;
  for (const std::string& name : o.objective_names) {
    objectives.push_back(*explore::ParseObjective(name, ""));
  }
  const size_t dims = objectives.size();
  auto vector_of = [&](const explore::PointRow& p) {
    std::vector<double> v(dims);
    for (size_t k = 0; k < dims; ++k) {
      v[k] = objectives[k].maximize ? -p.objectives[k] : p.objectives[k];
    }
    return v;
  };
  uint64_t front_size = 0, unlisted = 0;
  if (f.Has("all")) {
    // Every point is a row: the front of the union, each tie group's every
    // member marked and counted, as one --all run marks them.
    std::vector<explore::PointRow> points;
    for (const Row& r : o.rows) points.push_back(r.point);
    explore::MarkFront(objectives, &points);
    std::map<std::vector<double>, uint64_t> group;
    for (const explore::PointRow& p : points) {
      if (p.pareto) ++group[vector_of(p)];
    }
    for (size_t i = 0; i < points.size(); ++i) {
      o.rows[i].point.pareto = points[i].pareto;
      if (points[i].pareto) o.rows[i].point.ties = group[vector_of(points[i])];
    }
    for (const auto& [v, n] : group) front_size += n;
  } else {
    // Fronts only: the shards' tie groups merged under the tie rule (counts
    // add, the lowest indices listed). A row's place in grid order stands in
    // for its grid index (csv rows carry none); both order alike.
    std::vector<std::vector<explore::PointRow>> shards(parts.size());
    for (size_t i = 0; i < o.rows.size(); ++i) {
      explore::PointRow p = o.rows[i].point;
      p.index = i;
      shards[o.rows[i].shard].push_back(std::move(p));
    }
    const std::vector<explore::PointRow> merged =
        explore::MergeShardFronts(objectives, shards, &unlisted);
    std::vector<Row> rows;
    for (const explore::PointRow& p : merged) {
      Row r = std::move(o.rows[p.index]);
      r.point.pareto = true;
      r.point.ties = p.ties;
      rows.push_back(std::move(r));
    }
    o.rows = std::move(rows);
    front_size = o.rows.size() + unlisted;
  }
  explore::PointSet front;
  front.dims = static_cast<int>(dims);
  for (const Row& r : o.rows) {
    if (r.point.pareto) front.Add(vector_of(r.point).data());
  }
  o.summary.set_front_size(front_size);
  o.summary.set_front_unlisted(unlisted);
  const explore::Hypervolume hv = explore::FrontHypervolume(front);
  o.summary.set_hypervolume(hv.value);
  o.summary.set_hypervolume_exact(hv.exact);
  for (const auto& a : o.axis_names) o.summary.add_axis_names(a);
  for (const auto& n : o.objective_names) o.summary.add_objective_names(n);
  Print(o, f.Get("format").value_or(input_format), f.Has("all"), out);
  return kOk;
}

}  // namespace

int ExploreCli(const std::string& command,
               const std::vector<std::string>& leading,
               const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  const bool merge = command == "merge";
  const std::vector<FlagSpec> specs = merge ? MergeFlags() : ExploreFlags();
  std::vector<std::string> all = leading;
  all.insert(all.end(), args.begin(), args.end());
  absl::StatusOr<ParsedFlags> f = ParseFlags(all, specs);
  if (!f.ok()) {
    err << "ridgeline " << command << ": " << f.status().message() << "\n";
    return kUsage;
  }
  if (f->Has("help")) {
    out << (merge ? "usage: ridgeline merge [--all] [--format F] SHARD_OUTPUT...\n\n"
                    "combine the outputs of `ridgeline explore --shard I/N` "
                    "(csv or json) into exactly the single-process output\n\nflags:\n"
                  : "usage: ridgeline explore --model ID --hardware ID --vary "
                    "AXIS=VALUES ... --objective METRIC:max|min ... [flags]\n\n"
                    "design-space exploration: the exact joint Pareto front of "
                    "the objectives over the feasible points\n\nflags:\n")
        << FlagHelp(specs);
    return kOk;
  }
  return merge ? Merge(*f, out, err) : Explore(*f, out, err);
}

}  // namespace ridgeline::cli

#include "ridgeline/calibration/serving_validation.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ridgeline/calibration/fit.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/throughput.h"

namespace ridgeline::calibration {
namespace {

constexpr int64_t kSimulatedRequests = 400;

std::string Lower(const std::string& s) { return absl::AsciiStrToLower(s); }

bool HigherIsFaster(const std::string& metric) {
  return absl::EndsWith(metric, "tok_s");
}

// The serving scenario of a row: model, hardware, formats, TP (the engine's
// rules as PrepareRow's: W8A8 fp8 engines run fp8 activations; an unstated
// KV format is the narrowest the run could have used).
absl::StatusOr<engine::Scenario> ServingScenario(const MeasurementRow& r,
                                                 const HardwareLookup& lookup,
                                                 int64_t tp) {
  engine::Scenario s;
  absl::StatusOr<engine::ModelConfig> model = engine::FindModel(r.model_id);
  if (!model.ok()) return absl::NotFoundError(absl::StrCat("model: ", model.status().message()));
  absl::StatusOr<engine::Hardware> hw = lookup(r.hardware_id);
  if (!hw.ok()) return absl::NotFoundError(absl::StrCat("hardware: ", hw.status().message()));
  const std::string wf = Lower(r.weight_format);
  ASSIGN_OR_RETURN(s.precision.weights, engine::ParseNumberFormat(wf));
  const bool fp8 = absl::StartsWith(wf, "fp8");
  ASSIGN_OR_RETURN(s.precision.activations,
                   engine::ParseNumberFormat(fp8 ? "fp8" : wf == "bf16" ? "bf16" : "fp16"));
  std::string kv = Lower(r.kv_format);
  if (kv.empty() || kv == "unknown") kv = fp8 ? "fp8" : "fp16";
  ASSIGN_OR_RETURN(s.precision.kv_cache, engine::ParseNumberFormat(kv));
  s.model = *std::move(model);
  s.hardware = *std::move(hw);
  s.parallelism.tensor_parallel = tp;
  s.options.suggestions = false;
  RETURN_IF_ERROR(engine::ValidateScenario(s));
  return s;
}

// The metric of one replica's serving run, in the row's unit, summed over
// `replicas` for throughput. `efficiency` default = the bound.
absl::StatusOr<double> ServingMetric(const MeasurementRow& r,
                                     const std::string& concurrency,
                                     engine::Scenario s, int64_t replicas,
                                     std::string* mode) {
  if (!r.prompt_len || !r.gen_len || *r.prompt_len < 1 || *r.gen_len < 1) {
    return absl::FailedPreconditionError("prompt_len / gen_len not stated");
  }
  const int64_t p = *r.prompt_len, g = *r.gen_len;
  // The bound: the largest batch that fits. All of device memory (runtimes
  // reserve less: vLLM 0.9 of it, TensorRT-LLM 0.9-0.95 of what the weights
  // leave), no max_num_seqs cap below what the KV cache holds or the step
  // budget allows (a step of 8192 tokens runs at most 8192 sequences; vLLM
  // refuses max_num_seqs above max_num_batched_tokens); the step budget of
  // 8192 tokens both vLLM and TensorRT-LLM default to. (Uncapped, a KV
  // cache of more sequences than budget tokens made the engine place a
  // step of one token per sequence, whose activations the capacity had not
  // counted, and spill to host memory: a bound too low.)
  serving::ServingConfig config;
  config.memory_fraction = 1.0;
  config.max_num_seqs = config.max_num_batched_tokens;
  ASSIGN_OR_RETURN(serving::KvCapacity kv,
                   serving::ComputeKvCapacity(s, config, p, g));
  if (!kv.fits) return absl::FailedPreconditionError(kv.not_fitting);
  s.workload = serving::EngineStepCost::ServingWorkload(
      kv.max_concurrency, p, g, config.max_num_batched_tokens);
  ASSIGN_OR_RETURN(std::unique_ptr<serving::EngineStepCost> cost,
                   serving::EngineStepCost::Create(s));
  const serving::ServingLimits limits = serving::LimitsOf(config, kv);
  const int64_t tp = s.parallelism.tensor_parallel;
  if (concurrency == "max") {
    *mode = "offline-max";
    ASSIGN_OR_RETURN(serving::OfflineThroughput t,
                     serving::MaxThroughput(*cost, limits, kv.max_concurrency,
                                            p, g, tp));
    if (r.metric == "throughput_tok_s") {
      return t.output_tokens_per_second * static_cast<double>(replicas);
    }
    if (r.metric == "tpot_ms") {
      // The largest batch that fits gives the slowest step, not the
      // fastest: a saturated runtime running fewer sequences (its own
      // batch cap, not reported) has a shorter TPOT than this "bound".
      return absl::UnimplementedError(
          "tpot_ms at maximum load has no sound bound: it is set by the "
          "batch the runtime ran (not reported); the largest batch that "
          "fits gives the slowest step, not the fastest");
    }
    return absl::UnimplementedError(
        absl::StrCat(r.metric, " at maximum load is not modelled (it is set "
                     "by the queue the benchmark builds)"));
  }
  serving::SimulationConfig sim;
  sim.limits = limits;
  sim.prompt = serving::LengthDistribution::Fixed(p);
  sim.generated = serving::LengthDistribution::Fixed(g);
  sim.requests = kSimulatedRequests;
  double rate = 0;
  if (absl::StartsWith(concurrency, "rate=")) {
    std::string v = concurrency.substr(5);
    if (absl::EndsWith(v, "/s")) v.resize(v.size() - 2);
    if (!absl::SimpleAtod(v, &rate) || !(rate > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("concurrency: cannot read \"", concurrency, "\""));
    }
    sim.arrivals.kind = serving::Arrivals::Kind::kPoisson;
    sim.arrivals.rate = rate / static_cast<double>(replicas);
    *mode = absl::StrCat("poisson ", sim.arrivals.rate, "/s per replica");
  } else {
    int64_t n = 0;
    if (!absl::SimpleAtoi(concurrency, &n) || n < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("concurrency: cannot read \"", concurrency, "\""));
    }
    sim.arrivals.kind = serving::Arrivals::Kind::kConcurrency;
    sim.arrivals.concurrency = std::max<int64_t>(1, n / replicas);
    *mode = absl::StrCat(sim.arrivals.concurrency, " clients per replica");
  }
  ASSIGN_OR_RETURN(serving::SimulationResult res, serving::Simulate(*cost, sim));
  if (r.metric == "ttft_ms") return res.ttft.mean * 1e3;
  if (r.metric == "tpot_ms") return res.tpot.mean * 1e3;
  if (r.metric == "e2e_latency_ms") return res.e2e.mean * 1e3;
  if (r.metric == "throughput_tok_s") {
    return res.output_tokens_per_second * static_cast<double>(replicas);
  }
  return absl::UnimplementedError(
      absl::StrCat("metric ", r.metric, " has no serving definition"));
}

}  // namespace

const std::vector<double>& ServingStepOverheadGrid() {
  // 0 to 20 ms, finer where small: wide enough that no shipped fit sits
  // on its edge (the fits and their rows are in docs/validation.md).
  static const std::vector<double> kGrid = {
      0,    0.25e-3, 0.5e-3, 1e-3, 1.5e-3, 2e-3,  3e-3,  4e-3,
      5e-3, 6e-3,    7e-3,   8e-3, 10e-3,  12e-3, 15e-3, 20e-3};
  return kGrid;
}

const std::vector<double>& ServingCollectiveCallGrid() {
  // 0 to 80 us, doubling: from nothing (a collective is its link time) to
  // ten times the 7.7 us a 512 KiB all-reduce measures on its own (issue
  // 21), a call's launch and the group's synchronisation in a full step.
  static const std::vector<double> kGrid = {0, 5e-6, 10e-6, 20e-6, 40e-6, 80e-6};
  return kGrid;
}

bool IsServingMeasurements(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  return header.find("concurrency") != std::string::npos;
}

bool IsServingMeasurements(const std::filesystem::path& first,
                           const std::vector<std::filesystem::path>& more) {
  if (IsServingMeasurements(first)) return true;
  return std::any_of(more.begin(), more.end(), [](const auto& p) {
    return IsServingMeasurements(p);
  });
}

std::string ServingFrameworkKey(std::string_view framework) {
  std::string key = FrameworkKey(framework);
  for (const std::string suffix : {"-rocm", "-cuda"}) {
    if (key.size() > suffix.size() && key.ends_with(suffix)) {
      key.resize(key.size() - suffix.size());
      break;
    }
  }
  return key;
}

std::vector<ServingRowResult> EvaluateServingRows(
    const std::vector<MeasurementRow>& rows,
    const std::vector<std::string>& concurrency, const HardwareLookup& lookup,
    const ProfileStore* profiles, ServingSummary* summary) {
  std::vector<ServingRowResult> out;
  // Scenario of each evaluated serving row (for the fit below).
  std::map<size_t, engine::Scenario> scenarios;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MeasurementRow& r = rows[i];
    const std::string conc = i < concurrency.size() ? concurrency[i] : "";
    ServingRowResult res;
    RowResult& rr = res.row;
    rr.id = r.id;
    rr.metric = r.metric;
    rr.unit = r.unit;
    rr.measured = r.value;
    rr.hardware_id = r.hardware_id;
    rr.framework = r.framework;
    if (conc.empty()) {
      // A stated batch with no serving load: the static-batch path.
      res.mode = "static batch";
      std::vector<RowResult> one = EvaluateRows({r}, lookup, profiles);
      res.row = one.front();
      out.push_back(std::move(res));
      continue;
    }
    auto skip = [&](std::string why) {
      rr.status = std::move(why);
      out.push_back(res);
    };
    if (!r.usable) {
      skip(absl::StrCat("usable=0 in the data (", r.note.substr(0, 120), ")"));
      continue;
    }
    if (!r.tensor_parallel) {
      skip("tensor_parallel not stated");
      continue;
    }
    const int64_t tp = *r.tensor_parallel;
    if (tp < 1 || r.device_count % tp != 0) {
      skip(absl::StrCat("device_count ", r.device_count,
                        " is not a multiple of tensor_parallel ", tp));
      continue;
    }
    res.replicas = r.device_count / tp;
    absl::StatusOr<engine::Scenario> s = ServingScenario(r, lookup, tp);
    if (!s.ok()) {
      skip(std::string(s.status().message()));
      continue;
    }
    rr.family = s->hardware.family;
    // The bound is the pure roofline: the physical memory too (inline ECC
    // can be turned off; serving::ComputeKvCapacity).
    engine::Scenario bound_scenario = *s;
    bound_scenario.options.pure_roofline = true;
    absl::StatusOr<double> bound =
        ServingMetric(r, conc, bound_scenario, res.replicas, &res.mode);
    if (!bound.ok()) {
      skip(std::string(bound.status().message()));
      continue;
    }
    rr.bound = *bound;
    scenarios[out.size()] = *s;
    rr.evaluated = true;
    rr.status = "ok";
    rr.beats_bound = BeatsBound(HigherIsFaster(r.metric), r.value, *bound);
    out.push_back(std::move(res));
  }

  // The serving fit, per runtime (ServingFrameworkKey): its max-throughput
  // rows, and its static-batch rows of whole runs (end-to-end latency or
  // throughput: a prefill and every decode step, as a served request), which
  // time the same runtime's steps at a known batch (small batches pin the
  // memory efficiency, large ones the compute efficiency). Single-phase
  // rows (TTFT, batch-1 decode) are the kernel profiles' business. Static
  // rows join only runtimes that have a max-throughput row: the profile is
  // for serving under load.
  ServingSummary sum;
  std::map<std::string, std::vector<size_t>> by_key;
  std::map<std::string, std::vector<size_t>> static_by_key;
  for (size_t i = 0; i < out.size(); ++i) {
    const RowResult& r = out[i].row;
    ++sum.rows;
    if (!r.evaluated) continue;
    ++sum.evaluated;
    if (!r.beats_bound) ++sum.inside_bound;
    const std::string key = ServingFrameworkKey(r.framework);
    if (out[i].mode == "offline-max" && r.metric == "throughput_tok_s") {
      by_key[key].push_back(i);
    } else if (out[i].mode == "static batch" && rows[i].usable &&
               (r.metric == "e2e_latency_ms" ||
                r.metric == "throughput_tok_s")) {
      static_by_key[key].push_back(i);
    }
  }
  // One compute and one memory efficiency per runtime (all op classes), on
  // a grid of 0.1 steps, and a per-step overhead beside them (a fixed cost
  // per forward pass: folded into the efficiencies, vLLM's batch-1 rows on
  // 8 x MI300X read as 0.3 of the bandwidth, which then slowed every part's
  // bandwidth-bound steps 3.3x), and the share of the published link
  // bandwidth the runtime's collectives reach (with the link at its full
  // rate, Llama-3.1-70B fp8 on H100 under TensorRT-LLM was predicted to
  // gain 3.5x from TP 2 to TP 8 where it measured 2.8x; the share also absorbs
  // what else grows with the TP degree, so it is an effective figure, not
  // NCCL's bus bandwidth), and a cost per collective call (two all-reduces a
  // layer: with the link share alone TensorRT-LLM's TP 1 and TP 2 rows ran
  // faster than its efficiencies allowed and its TP 8 rows slower, LOPO
  // 13.5 %; with 40 us a call, 9.3 %); each row's prediction at each grid
  // point is computed once, then every fold picks the point with the lowest
  // median error on the other platforms' rows.
  std::vector<double> grid;
  for (int k = 1; k <= 10; ++k) grid.push_back(k / 10.0);  // 0.1 .. 1 exactly
  const size_t g = grid.size();
  const std::vector<double>& overheads = ServingStepOverheadGrid();
  const size_t no = overheads.size();
  const std::vector<double>& calls = ServingCollectiveCallGrid();
  const size_t nq = calls.size();
  // k = (((o * nq + q) * g + l) * g + c) * g + m: step overhead, collective
  // call cost, link, compute, memory.
  const size_t g3 = g * g * g;
  const size_t inner = g3 * nq;  // the points at one step overhead
  const size_t points = inner * no;
  std::vector<double> all_ape;
  for (auto& entry : by_key) {
    // Not a structured binding: clang 14 (the fuzz and sanitizer builds)
    // cannot capture one in the lambdas below.
    const auto& key = entry.first;
    std::vector<size_t> idx = entry.second;
    const size_t n_max = idx.size();
    for (size_t i : static_by_key[key]) {
      if (PrepareRow(rows[i], lookup).ok()) idx.push_back(i);
    }
    ServingSummary::Framework f;
    f.key = key;
    f.max_rows = static_cast<int>(n_max);
    f.static_rows = static_cast<int>(idx.size() - n_max);
    for (size_t i : idx) {
      if (std::find(f.platforms.begin(), f.platforms.end(),
                    out[i].row.hardware_id) == f.platforms.end()) {
        f.platforms.push_back(out[i].row.hardware_id);
      }
    }
    std::sort(f.platforms.begin(), f.platforms.end());
    f.min_speed_fraction = 1;
    for (size_t i : idx) {
      const int64_t tp = rows[i].tensor_parallel.value_or(rows[i].device_count);
      if (std::find(f.tensor_parallel.begin(), f.tensor_parallel.end(), tp) ==
          f.tensor_parallel.end()) {
        f.tensor_parallel.push_back(tp);
      }
      const RowResult& rr = out[i].row;
      if (rr.bound && *rr.bound > 0 && rr.measured > 0) {
        const double share = HigherIsFaster(rr.metric)
                                 ? rr.measured / *rr.bound
                                 : *rr.bound / rr.measured;
        f.min_speed_fraction = std::min(f.min_speed_fraction, share);
      }
    }
    std::sort(f.tensor_parallel.begin(), f.tensor_parallel.end());
    // The per-step overhead first, on its own: the intercept of a
    // Theil-Sen line through the small static batches (batch <= 8: steps
    // that stream the weights, so time per generated token = overhead +
    // bound's time / eta_m) of measured against bound milliseconds per
    // generated token. Rows of several models at several degrees separate
    // the fixed cost from the bandwidth share, which one median over all
    // rows cannot (with a free overhead the grid fitted vLLM to eta_c 0.1
    // and TensorRT-LLM, which has no such rows, to 10 ms on its
    // max-throughput rows alone). No such rows: no overhead (0).
    auto overhead_index = [&](const std::vector<size_t>& train) -> size_t {
      std::vector<double> x, y;
      for (size_t a : train) {
        if (a < n_max) continue;
        const MeasurementRow& row = rows[idx[a]];
        const RowResult& rr = out[idx[a]].row;
        if (row.metric != "e2e_latency_ms" || !row.batch || *row.batch > 8 ||
            !row.gen_len || *row.gen_len < 1 || !rr.bound) {
          continue;
        }
        x.push_back(*rr.bound / static_cast<double>(*row.gen_len));
        y.push_back(row.value / static_cast<double>(*row.gen_len));
      }
      if (x.size() < 2) return 0;
      const double seconds = std::max(0.0, TheilSen(x, y).intercept) / 1e3;
      size_t best = 0;
      for (size_t o = 1; o < no; ++o) {
        if (std::abs(overheads[o] - seconds) <
            std::abs(overheads[best] - seconds)) {
          best = o;
        }
      }
      return best;
    };
    // Predictions only at the overheads some fold uses (each is fitted
    // before the efficiencies).
    std::vector<bool> needed(no, false);
    {
      std::vector<size_t> all(idx.size());
      for (size_t a = 0; a < idx.size(); ++a) all[a] = a;
      needed[overhead_index(all)] = true;
      for (size_t a = 0; a < idx.size(); ++a) {
        std::vector<size_t> train;
        for (size_t b = 0; b < idx.size(); ++b) {
          if (out[idx[b]].row.hardware_id != out[idx[a]].row.hardware_id) {
            train.push_back(b);
          }
        }
        if (!train.empty()) needed[overhead_index(train)] = true;
      }
    }
    // The grid point of index k.
    auto eta_c = [&](size_t k) { return grid[(k / g) % g]; };
    auto eta_m = [&](size_t k) { return grid[k % g]; };
    auto eta_link = [&](size_t k) { return grid[(k / (g * g)) % g]; };
    auto call_index = [&](size_t k) { return (k / g3) % nq; };
    auto collective_call = [&](size_t k) { return calls[call_index(k)]; };
    auto step_overhead = [&](size_t k) { return overheads[k / inner]; };
    // pred[row][k]; a row without collectives (one device a replica) is the
    // same at every link share and collective cost: computed at the full
    // share and no cost, then copied.
    std::vector<std::vector<double>> pred(idx.size(),
                                          std::vector<double>(points, 0));
    for (size_t a = 0; a < idx.size(); ++a) {
      const size_t i = idx[a];
      std::optional<PreparedRow> prepared;
      if (a >= n_max) prepared = *PrepareRow(rows[i], lookup);
      const bool collectives = rows[i].tensor_parallel.value_or(1) > 1;
      // The point with the full link share and no collective cost.
      auto plain = [&](size_t k) {
        return k - call_index(k) * g3 + (g - 1 - (k / (g * g)) % g) * g * g;
      };
      for (size_t o = 0; o < no; ++o) {
        if (!needed[o]) continue;
        for (size_t k = o * inner; k < (o + 1) * inner; ++k) {
          if (!collectives && plain(k) != k) continue;
          engine::Efficiency eff;
          eff.compute.fill(eta_c(k));
          eff.memory.fill(eta_m(k));
          eff.link = eta_link(k);
          eff.collective_call_seconds = collective_call(k);
          eff.per_step_overhead_seconds = step_overhead(k);
          eff.profile_name = "serving-fit";
          absl::StatusOr<double> v = absl::InternalError("");
          if (prepared) {
            v = PredictRow(*prepared, eff, /*pure=*/false);
          } else {
            engine::Scenario sc = scenarios[i];
            sc.efficiency = eff;
            std::string mode;
            v = ServingMetric(rows[i], "max", sc, out[i].replicas, &mode);
          }
          pred[a][k] = v.ok() ? *v : 0;
        }
        if (!collectives) {
          for (size_t k = o * inner; k < (o + 1) * inner; ++k) {
            pred[a][k] = pred[a][plain(k)];
          }
        }
      }
    }
    auto error_at = [&](size_t a, size_t k) {
      return std::abs(pred[a][k] / out[idx[a]].row.measured - 1);
    };
    // Then the efficiencies at that overhead: lowest median error; a tie (a
    // direction the rows do not pin down) goes to the point nearest compute
    // == memory, then to the smaller collective cost, then to the higher
    // efficiencies.
    auto best_point = [&](const std::vector<size_t>& train) {
      const size_t o = overhead_index(train);
      size_t best = o * inner + g3 - 1;
      double best_err = 1e300;
      auto skew = [&](size_t k) {
        return std::abs(static_cast<int>((k / g) % g) -
                        static_cast<int>(k % g));
      };
      for (size_t k = o * inner; k < (o + 1) * inner; ++k) {
        std::vector<double> e;
        for (size_t a : train) e.push_back(error_at(a, k));
        const double med = Median(e);
        const bool tie = std::abs(med - best_err) <= 1e-12 * best_err;
        const bool better_tie =
            skew(k) < skew(best) ||
            (skew(k) == skew(best) &&
             (call_index(k) < call_index(best) ||
              (call_index(k) == call_index(best) && k > best)));
        if ((!tie && med < best_err) || (tie && better_tie)) {
          best_err = std::min(best_err, med);
          best = k;
        }
      }
      return best;
    };
    std::vector<size_t> everyone(idx.size());
    for (size_t a = 0; a < idx.size(); ++a) everyone[a] = a;
    const size_t all_k = best_point(everyone);
    f.eta_all = eta_c(all_k);
    f.eta_memory_all = eta_m(all_k);
    f.eta_link_all = eta_link(all_k);
    f.collective_call_all = collective_call(all_k);
    f.step_overhead_all = step_overhead(all_k);
    std::vector<double> in_sample;
    for (size_t a = 0; a < idx.size(); ++a) in_sample.push_back(error_at(a, all_k));
    f.in_sample_median_ape = Median(in_sample);
    f.in_sample_max_median_ape = Median(
        std::vector<double>(in_sample.begin(), in_sample.begin() + n_max));
    std::vector<double> apes;
    for (size_t a = 0; a < idx.size(); ++a) {
      std::vector<size_t> train;
      for (size_t b = 0; b < idx.size(); ++b) {
        if (out[idx[b]].row.hardware_id != out[idx[a]].row.hardware_id) {
          train.push_back(b);
        }
      }
      RowResult& r = out[idx[a]].row;
      if (train.empty()) {
        // One platform: the fit's own rows, so the error is in-sample.
        r.predicted = pred[a][all_k];
        r.ape = error_at(a, all_k);
        r.in_sample = true;
        r.profile = absl::StrFormat(
            "in-sample eta compute %.1f memory %.1f link %.1f, collective "
            "call %g us, step overhead %g ms",
            f.eta_all, f.eta_memory_all, f.eta_link_all,
            f.collective_call_all * 1e6, f.step_overhead_all * 1e3);
        r.status = absl::StrCat(
            "ok (in-sample: fitted on this row; no other platform of ", key,
            " to cross-validate)");
        continue;
      }
      const size_t k = best_point(train);
      r.predicted = pred[a][k];
      r.ape = error_at(a, k);
      r.in_sample = false;
      r.profile = absl::StrFormat(
          "lopo eta compute %.1f memory %.1f link %.1f, collective call %g "
          "us, step overhead %g ms",
          eta_c(k), eta_m(k), eta_link(k), collective_call(k) * 1e6,
          step_overhead(k) * 1e3);
      if (a < n_max) {
        apes.push_back(*r.ape);
        all_ape.push_back(*r.ape);
      }
    }
    f.rows = static_cast<int>(apes.size());
    if (!apes.empty()) f.median_ape = Median(apes);
    sum.frameworks.push_back(f);
  }
  sum.max_rows_cv = static_cast<int>(all_ape.size());
  if (!all_ape.empty()) sum.max_cv_median_ape = Median(all_ape);
  if (summary) *summary = sum;
  return out;
}

namespace {

// The rows of a serving CSV and each row's `concurrency` cell (the
// measurement parser ignores that column; a file without it gives blanks).
absl::Status ReadServingFile(const std::filesystem::path& path,
                             std::vector<MeasurementRow>* rows,
                             std::vector<std::string>* conc) {
  absl::StatusOr<std::vector<MeasurementRow>> read = ReadMeasurementsCsv(path);
  if (!read.ok()) return read.status();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<std::vector<std::string>>> records =
      SplitCsv(text.str(), path.string());
  if (!records.ok()) return records.status();
  if (records->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": empty file"));
  }
  const std::vector<std::string>& header = records->front();
  const auto col = std::find(header.begin(), header.end(), "concurrency");
  const auto id_col = std::find(header.begin(), header.end(), "id");
  std::map<std::string, std::string> conc_by_id;
  for (size_t i = 1; i < records->size(); ++i) {
    const auto& rec = (*records)[i];
    const size_t c = col - header.begin(), k = id_col - header.begin();
    if (c < rec.size() && k < rec.size()) conc_by_id[rec[k]] = rec[c];
  }
  for (const MeasurementRow& r : *read) conc->push_back(conc_by_id[r.id]);
  rows->insert(rows->end(), read->begin(), read->end());
  return absl::OkStatus();
}

// Every file's rows in order (a repeated --measurements); ids must not
// repeat across them.
absl::Status ReadServingRows(const std::filesystem::path& first,
                             const std::vector<std::filesystem::path>& more,
                             std::vector<MeasurementRow>* rows,
                             std::vector<std::string>* conc) {
  rows->clear();
  conc->clear();
  std::vector<std::filesystem::path> files = {first};
  files.insert(files.end(), more.begin(), more.end());
  for (const std::filesystem::path& f : files) {
    RETURN_IF_ERROR(ReadServingFile(f, rows, conc));
  }
  std::map<std::string, int> seen;
  for (const MeasurementRow& r : *rows) {
    if (++seen[r.id] > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "id: \"", r.id, "\" appears more than once in the measurement files"));
    }
  }
  return absl::OkStatus();
}

// One runtime's fit in a line, saying whether its error is cross-validated.
std::string FitLine(const ServingSummary::Framework& f) {
  std::string line = absl::StrFormat(
      "%-16s fit on all %d rows (%d max-throughput, %d static batches, "
      "platforms: %s): eta compute %.1f, memory %.1f, link %.1f, "
      "collective call %g us, step overhead %g ms; ",
      f.key, f.max_rows + f.static_rows, f.max_rows, f.static_rows,
      absl::StrJoin(f.platforms, ", "), f.eta_all, f.eta_memory_all,
      f.eta_link_all, f.collective_call_all * 1e6, f.step_overhead_all * 1e3);
  if (f.median_ape) {
    absl::StrAppend(&line, absl::StrFormat(
                               "LOPO median error %.1f%% over %d max-throughput "
                               "rows",
                               *f.median_ape * 100, f.rows));
  } else {
    absl::StrAppend(&line, absl::StrFormat(
                               "IN-SAMPLE median error %.1f%%, %.1f%% on its "
                               "max-throughput rows (one platform: no "
                               "leave-one-platform-out)",
                               f.in_sample_median_ape.value_or(0) * 100,
                               f.in_sample_max_median_ape.value_or(0) * 100));
  }
  return line;
}

// "--measurements a.csv --measurements b.csv", for provenance.
std::string SourceFlags(const std::filesystem::path& first,
                        const std::vector<std::filesystem::path>& more) {
  std::string s = absl::StrCat("--measurements ", first.filename().string());
  for (const auto& p : more) {
    absl::StrAppend(&s, " --measurements ", p.filename().string());
  }
  return s;
}

HardwareLookup RegistryLookupOf(const std::optional<std::filesystem::path>& dir) {
  std::shared_ptr<const plugin_host::HardwareRegistry> registry =
      plugin_host::HardwareRegistry::LoadDirectory(
          !dir || dir->empty() ? plugin_host::DefaultPluginDir() : *dir,
          plugin_host::LoadLog::kRefusalsOnly);
  return [registry](std::string_view id) -> absl::StatusOr<engine::Hardware> {
    absl::StatusOr<const engine::Hardware*> hw = registry->Find(id);
    if (!hw.ok()) return hw.status();
    return **hw;
  };
}

}  // namespace

int ValidateServing(const ValidateOptions& options, std::ostream& out,
                    std::ostream& err) {
  std::vector<MeasurementRow> rows;
  std::vector<std::string> conc;
  if (absl::Status st = ReadServingRows(options.measurements,
                                       options.more_measurements, &rows, &conc);
      !st.ok()) {
    err << st.message() << "\n";
    return 1;
  }
  const std::filesystem::path profile_dir =
      options.profiles ? *options.profiles : DefaultProfileDir();
  absl::StatusOr<std::shared_ptr<const ProfileStore>> store =
      ProfileStore::LoadDirectory(profile_dir,
                                  options.profiles
                                      ? ProfileStore::IfMissing::kError
                                      : ProfileStore::IfMissing::kEmpty);
  if (!store.ok()) {
    err << store.status().message() << "\n";
    return 1;
  }
  HardwareLookup lookup = RegistryLookupOf(options.plugin_dir);
  ServingSummary sum;
  std::vector<ServingRowResult> results =
      EvaluateServingRows(rows, conc, lookup, store->get(), &sum);
  auto num = [](const std::optional<double>& v) {
    return v ? absl::StrFormat("%.6g", *v) : std::string();
  };
  const bool csv = options.format == ReportFormat::kCsv;
  if (csv) {
    out << "id,hardware_id,framework,metric,unit,mode,replicas,measured,bound,"
           "inside_bound,predicted,ape,status\n";
  }
  for (const ServingRowResult& s : results) {
    const RowResult& r = s.row;
    if (csv) {
      out << CsvField(r.id) << "," << CsvField(r.hardware_id) << ","
          << CsvField(r.framework) << "," << r.metric << "," << r.unit << ","
          << CsvField(s.mode) << "," << s.replicas << ","
          << absl::StrFormat("%.6g", r.measured) << "," << num(r.bound) << ","
          << (r.evaluated ? (r.beats_bound ? "0" : "1") : "") << ","
          << num(r.predicted) << "," << num(r.ape) << ","
          << CsvField(r.status) << "\n";
    } else {
      out << absl::StrFormat(
          "%-5s %-24s %-26s %-16s %-14s %10.4g %10s %-7s %10s %7s  %s\n", r.id,
          r.hardware_id, r.framework, r.metric, s.mode, r.measured,
          num(r.bound), r.evaluated ? (r.beats_bound ? "BEATS" : "inside") : "",
          num(r.predicted), r.ape ? absl::StrFormat("%.1f%%", *r.ape * 100) : "",
          r.status);
    }
  }
  if (!csv) {
    out << absl::StrFormat(
        "\nserving rows: %d, evaluated %d, inside the bound %d (%.1f%%)\n",
        sum.rows, sum.evaluated, sum.inside_bound,
        sum.evaluated ? 100.0 * sum.inside_bound / sum.evaluated : 0.0);
    for (const auto& f : sum.frameworks) out << "  " << FitLine(f) << "\n";
    if (sum.max_cv_median_ape) {
      out << absl::StrFormat(
          "max-throughput rows, leave-one-platform-out median error: %.1f%% "
          "(%d rows)\n",
          *sum.max_cv_median_ape * 100, sum.max_rows_cv);
    }
  }
  return 0;
}

std::vector<Profile> ServingProfiles(const ServingSummary& summary,
                                     const std::string& source) {
  std::vector<Profile> out;
  for (const ServingSummary::Framework& f : summary.frameworks) {
    // Two efficiencies need two rows; the max-throughput row is there by
    // construction (EvaluateServingRows).
    if (f.max_rows + f.static_rows < 2) continue;
    Profile p;
    p.name = absl::StrCat("serving.", f.key);
    p.framework = f.key;
    p.efficiency.compute.fill(f.eta_all);
    p.efficiency.memory.fill(f.eta_memory_all);
    p.efficiency.link = f.eta_link_all;
    p.efficiency.collective_call_seconds = f.collective_call_all;
    p.efficiency.per_step_overhead_seconds = f.step_overhead_all;
    p.serving_fit.hardware = f.platforms;
    p.serving_fit.tensor_parallel = f.tensor_parallel;
    p.serving_fit.min_speed_fraction = f.min_speed_fraction;
    const std::string rows =
        f.static_rows == 0
            ? absl::StrFormat("%d max-throughput rows", f.max_rows)
            : absl::StrFormat("%d rows (%d max-throughput, %d static batches)",
                              f.max_rows + f.static_rows, f.max_rows,
                              f.static_rows);
    const std::string checked =
        f.median_ape
            ? absl::StrFormat("leave-one-platform-out median error %.1f%%",
                              *f.median_ape * 100)
            : absl::StrFormat(
                  "IN-SAMPLE ONLY, every row from one platform (%s) so "
                  "nothing cross-validates it: in-sample median error %.1f%% "
                  "(%.1f%% on its max-throughput rows)",
                  absl::StrJoin(f.platforms, ", "),
                  f.in_sample_median_ape.value_or(0) * 100,
                  f.in_sample_max_median_ape.value_or(0) * 100);
    p.fitted_from = absl::StrFormat(
        "ridgeline calibrate %s: serving model (offline maximum throughput; "
        "static batches on the engine), one compute and one memory efficiency "
        "for all op classes and the share of the link bandwidth its "
        "collectives reach, on a 0.1 grid, with a cost per collective call "
        "(ServingCollectiveCallGrid), lowest median error over %s, at a "
        "per-step overhead fitted first (Theil-Sen intercept of the static "
        "batches <= 8, on ServingStepOverheadGrid; 0 without them); slowest "
        "fit "
        "row at %.3f of its bound's speed (the floor where it extrapolates); "
        "%s",
        source, rows, f.min_speed_fraction, checked);
    out.push_back(std::move(p));
  }
  return out;
}

int CalibrateServing(const CalibrateOptions& options, std::ostream& out,
                     std::ostream& err) {
  std::vector<MeasurementRow> rows;
  std::vector<std::string> conc;
  if (absl::Status st = ReadServingRows(options.measurements,
                                       options.more_measurements, &rows, &conc);
      !st.ok()) {
    err << st.message() << "\n";
    return 1;
  }
  ServingSummary sum;
  // The bound and the fit need no profiles.
  EvaluateServingRows(rows, conc, RegistryLookupOf(options.plugin_dir),
                      nullptr, &sum);
  std::vector<Profile> profiles = ServingProfiles(
      sum, SourceFlags(options.measurements, options.more_measurements));
  const std::filesystem::path dir = options.out / "serving";
  if (absl::Status st = WriteProfiles(dir, profiles); !st.ok()) {
    err << st.message() << "\n";
    return 1;
  }
  out << absl::StrFormat(
      "fitted %d serving profiles from %d max-throughput rows into %s\n",
      profiles.size(), sum.max_rows_cv, dir.string());
  for (const auto& f : sum.frameworks) out << "  " << FitLine(f) << "\n";
  if (sum.max_cv_median_ape) {
    out << absl::StrFormat(
        "max-throughput rows, leave-one-platform-out median error: %.1f%% "
        "(%d rows)\n",
        *sum.max_cv_median_ape * 100, sum.max_rows_cv);
  }
  return 0;
}

}  // namespace ridgeline::calibration

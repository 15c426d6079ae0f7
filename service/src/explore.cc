// Backend::Explore: ExploreRequest -> explore::ExploreSpec (the base
// scenario through the same translation Analyze uses), the exploration or
// NSGA-II search in explore/, and the results back as ExploreResponse
// messages. No math here.
#include "ridgeline/explore/explore.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "explore_spec.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/nsga2.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::service {
namespace {

void FillPoint(const explore::ExploreSpec& spec, const explore::MixedRadix& g,
               const explore::PointRow& r, v1::ExplorePoint* p) {
  p->set_index(r.index);
  std::vector<uint64_t> d(g.size());
  g.Decode(r.index, d.data());
  for (size_t k = 0; k < d.size(); ++k) {
    p->add_axis_values(spec.space.axes[k].Label(d[k]));
  }
  for (double v : r.objectives) p->add_objectives(v);
  p->set_feasible(r.feasible);
  p->set_fits(r.fits);
  p->set_spilled(r.spilled);
  p->set_pareto(r.pareto);
  p->set_violation(r.violation);
  if (r.pareto) p->set_ties(r.ties);
}

// ExploreSummary.request_fingerprint: FNV-1a 64 of the request without
// the fields that only say which part of it this run is, so every shard of
// one request has the same fingerprint and any other request another.
std::string RequestFingerprint(v1::ExploreRequest req) {
  req.clear_shard_index();
  req.clear_shard_count();
  req.clear_resume_from();
  req.clear_progress_every();
  req.clear_provisional_fronts();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    (void)req.SerializeToCodedStream(&coded);
  }
  uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return absl::StrFormat("%016x", h);
}

}  // namespace

absl::Status Backend::Explore(
    const v1::ExploreRequest& req,
    const std::function<bool(const v1::ExploreResponse&)>& emit,
    const std::function<bool()>& should_stop) const {
  explore::ExploreSpec spec;
  RETURN_IF_ERROR(ExploreSpaceFromRequest(*this, req, &spec));
  const uint32_t count = req.shard_count() == 0 ? 1 : req.shard_count();
  if (count > explore::kMaxShards) {
    return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
        "shard_count: want 0..", explore::kMaxShards, ", got ",
        req.shard_count())), "shard_count");
  }
  if (req.shard_index() >= count) {
    return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
        "shard_index: want 0..", count - 1, " (below shard_count), got ",
        req.shard_index())), "shard_index");
  }
  spec.shard = explore::Shard{req.shard_index(), count};
  spec.resume_from = req.resume_from();
  spec.keep_all = req.include_all();
  if (req.nsga2_generations() < 0 || req.nsga2_generations() > 10000) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "nsga2_generations: want 0..10000, got ", req.nsga2_generations())),
        "nsga2_generations");
  }
  if (req.nsga2_population() != 0 &&
      (req.nsga2_population() < 4 || req.nsga2_population() > 4096 ||
       req.nsga2_population() % 2 != 0)) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "nsga2_population: want 0 (64) or an even number in 4..4096, got ",
            req.nsga2_population())),
        "nsga2_population");
  }
  RETURN_IF_ERROR(explore::ValidateSpec(spec));

  const explore::MixedRadix grid = spec.space.Grid();
  const bool nsga2 = req.nsga2_generations() > 0;
  const uint64_t in_shard =
      spec.resume_from >= grid.total()
          ? 0
          : explore::ShardSize(grid.total() - spec.resume_from, spec.shard);
  if (!nsga2 && in_shard > static_cast<uint64_t>(limits_.max_explore_points)) {
    return engine::WithFieldPath(
        absl::ResourceExhaustedError(absl::StrCat(
            "explore: ", in_shard, " points", count > 1 ? " in this shard" : "",
            " (", grid.total(), " in all) exceed the server's cap of ",
            limits_.max_explore_points,
            " points per request (--max-explore-points); split it with "
            "shard_index/shard_count, or "
            "search it with nsga2_generations")),
        "vary");
  }
  if (!nsga2 && spec.keep_all &&
      in_shard > static_cast<uint64_t>(limits_.max_explore_all_points)) {
    return engine::WithFieldPath(
        absl::ResourceExhaustedError(absl::StrCat(
            "explore: include_all would stream ", in_shard,
            " points; the server's cap is ", limits_.max_explore_all_points,
            " (--max-explore-all-points; ask for the front only, or shard the "
            "space)")),
        "include_all");
  }

  spec.max_front_points = static_cast<uint64_t>(
      std::max<int64_t>(0, limits_.max_explore_front_points));
  // Memory before the work: every kept point, or every NSGA-II evaluation
  // (the front itself is bounded by max_explore_front_points).
  if (nsga2) {
    const int64_t population = req.nsga2_population() != 0
                                   ? req.nsga2_population()
                                   : explore::Nsga2Options().population;
    const double evaluations = static_cast<double>(population) *
                               static_cast<double>(req.nsga2_generations() + 1);
    RETURN_IF_ERROR(CheckRequestMemory(
        "explore", evaluations * explore::kBytesPerNsga2Evaluation,
        absl::StrCat("nsga2_population ", population, " x (nsga2_generations ",
                     req.nsga2_generations(), " + 1) evaluations x ",
                     explore::kBytesPerNsga2Evaluation, " bytes"),
        limits_));
  } else if (spec.keep_all) {
    RETURN_IF_ERROR(CheckRequestMemory(
        "explore", static_cast<double>(in_shard) * explore::kBytesPerKeptPoint,
        absl::StrCat("include_all: ", in_shard, " points x ",
                     explore::kBytesPerKeptPoint, " bytes"),
        limits_));
  }
  ASSIGN_OR_RETURN(ExpensiveCallGate::Slot slot, gate_->Enter("explore"));

  v1::ExploreResponse msg;
  v1::ExploreSummary summary;
  for (const auto& a : spec.space.axes) summary.add_axis_names(a.name);
  for (const auto& o : spec.objectives) summary.add_objective_names(o.name);
  summary.set_request_fingerprint(RequestFingerprint(req));
  // NSGA-II ignores the shard: it searches the whole grid.
  summary.set_shard_index(nsga2 ? 0 : spec.shard.index);
  summary.set_shard_count(nsga2 ? 1 : spec.shard.count);
  bool client_gone = false;
  std::vector<explore::PointRow> rows;

  if (nsga2) {
    explore::Nsga2Options opt;
    opt.generations = req.nsga2_generations();
    if (req.nsga2_population() != 0) opt.population = req.nsga2_population();
    opt.seed = req.nsga2_seed();
    std::vector<uint64_t> last_sent;  // the provisional front's indices
    absl::StatusOr<explore::Nsga2Result> r = explore::RunNsga2(
        spec, opt,
        [&](const explore::Nsga2Generation& g,
            const std::vector<explore::PointRow>& so_far) {
          msg.Clear();
          v1::ExploreProgress* p = msg.mutable_progress();
          p->set_points_done(g.evaluations);
          p->set_points_total(grid.total());
          p->set_generation(g.generation);
          p->set_hypervolume(g.hypervolume);
          v1::ExploreGeneration* eg = summary.add_generations();
          eg->set_generation(g.generation);
          eg->set_evaluations(g.evaluations);
          eg->set_front_size(g.front_size);
          eg->set_hypervolume(g.hypervolume);
          // Sent, as in a grid, when it changed and while it is small.
          std::vector<uint64_t> ids;
          for (const explore::PointRow& row : so_far) ids.push_back(row.index);
          const bool send = req.provisional_fronts() && ids != last_sent &&
                            !so_far.empty() &&
                            so_far.size() <= explore::kProvisionalFrontMax;
          if (send) p->set_provisional_front_size(so_far.size());
          if (!emit(msg)) client_gone = true;
          for (size_t i = 0; send && i < so_far.size() && !client_gone; ++i) {
            msg.Clear();
            FillPoint(spec, grid, so_far[i], msg.mutable_point());
            msg.mutable_point()->set_provisional(true);
            if (!emit(msg)) client_gone = true;
          }
          if (send) last_sent = std::move(ids);
          if (should_stop && should_stop()) client_gone = true;
          return !client_gone;
        });
    if (!r.ok()) return r.status();
    rows = std::move(r->front);
    summary.set_total_points(grid.total());
    summary.set_shard_points(grid.total());  // the space it searched
    summary.set_evaluated(r->evaluations);
    summary.set_feasible(r->feasible);
    summary.set_front_size(r->front_size);
    summary.set_front_unlisted(r->front_size - rows.size());
    summary.set_seconds(r->seconds);
    if (!r->generations.empty()) {
      summary.set_hypervolume(r->generations.back().hypervolume);
      summary.set_hypervolume_exact(r->generations.back().hypervolume_exact);
    }
  } else {
    explore::ExploreCallbacks cb;
    cb.progress_every = req.progress_every() > 0
                            ? req.progress_every()
                            : std::max<uint64_t>(1, in_shard / 100);
    uint64_t shard_total = in_shard;  // as the library counts it
    cb.progress = [&](uint64_t done, uint64_t total) {
      shard_total = total;
      msg.Clear();
      msg.mutable_progress()->set_points_done(done);
      msg.mutable_progress()->set_points_total(total);
      if (!emit(msg)) client_gone = true;
      return !client_gone;
    };
    cb.should_stop = should_stop;
    if (req.provisional_fronts()) {
      cb.provisional_front = [&](uint64_t done,
                                 const std::vector<explore::PointRow>& front) {
        msg.Clear();
        v1::ExploreProgress* p = msg.mutable_progress();
        p->set_points_done(done);
        p->set_points_total(shard_total);
        p->set_provisional_front_size(front.size());
        if (!emit(msg)) client_gone = true;
        for (const explore::PointRow& row : front) {
          if (client_gone) break;
          msg.Clear();
          FillPoint(spec, grid, row, msg.mutable_point());
          msg.mutable_point()->set_provisional(true);
          if (!emit(msg)) client_gone = true;
        }
        return !client_gone;
      };
    }
    absl::StatusOr<explore::ExploreResult> r =
        explore::Explore(spec, cb, limits_.explore_threads);
    if (absl::IsResourceExhausted(r.status())) {
      // The front's cap: name its flag.
      return absl::ResourceExhaustedError(absl::StrCat(
          r.status().message(), " (the server's limit: ",
          limits_.max_explore_front_points, ", --max-explore-front-points)"));
    }
    if (!r.ok()) return r.status();
    rows = std::move(r->rows);
    summary.set_total_points(r->total_points);
    summary.set_shard_points(r->shard_points);
    summary.set_evaluated(r->evaluated);
    summary.set_feasible(r->feasible);
    summary.set_front_size(r->front_size);
    summary.set_front_unlisted(r->front_unlisted);
    summary.set_hypervolume(r->hypervolume);
    summary.set_hypervolume_exact(r->hypervolume_exact);
    summary.set_seconds(r->seconds);
  }
  for (const explore::PointRow& row : rows) {
    msg.Clear();
    FillPoint(spec, grid, row, msg.mutable_point());
    if (!emit(msg)) {
      return absl::CancelledError(
          "explore stopped while sending points: the client went away or "
          "the deadline passed");
    }
  }
  msg.Clear();
  *msg.mutable_summary() = std::move(summary);
  if (!emit(msg)) {
    return absl::CancelledError(
        "explore stopped before the summary: the client went away or the "
        "deadline passed");
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::service

// NSGA-II (nsga2.h).
#include "ridgeline/explore/nsga2.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/evaluate.h"
#include "ridgeline/explore/hypervolume.h"
#include "ridgeline/explore/pareto.h"

namespace ridgeline::explore {
namespace {

struct Individual {
  std::vector<uint64_t> genes;
  uint64_t index = 0;
  std::vector<double> obj;  // minimised
  double violation = 0;
  bool spilled = false;
  int rank = 0;
  double crowding = 0;
};

// Deb's constrained domination.
bool CDominates(const Individual& a, const Individual& b) {
  if (a.violation == 0 && b.violation > 0) return true;
  if (a.violation > 0 && b.violation == 0) return false;
  if (a.violation > 0) return a.violation < b.violation;
  return Dominates(a.obj.data(), b.obj.data(), static_cast<int>(a.obj.size()));
}

// Fast non-dominated sort; fills rank and crowding; returns the fronts.
std::vector<std::vector<int>> Sort(std::vector<Individual>* pop) {
  const int n = static_cast<int>(pop->size());
  std::vector<std::vector<int>> dominated(n);
  std::vector<int> count(n, 0);
  std::vector<std::vector<int>> fronts(1);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      if (CDominates((*pop)[i], (*pop)[j])) {
        dominated[i].push_back(j);
      } else if (CDominates((*pop)[j], (*pop)[i])) {
        ++count[i];
      }
    }
    if (count[i] == 0) {
      (*pop)[i].rank = 0;
      fronts[0].push_back(i);
    }
  }
  for (size_t f = 0; !fronts[f].empty(); ++f) {
    std::vector<int> next;
    for (int i : fronts[f]) {
      for (int j : dominated[i]) {
        if (--count[j] == 0) {
          (*pop)[j].rank = static_cast<int>(f) + 1;
          next.push_back(j);
        }
      }
    }
    fronts.push_back(std::move(next));
  }
  fronts.pop_back();
  const int d = (*pop)[0].obj.size();
  for (const auto& front : fronts) {
    for (int i : front) (*pop)[i].crowding = 0;
    for (int k = 0; k < d; ++k) {
      std::vector<int> by = front;
      std::stable_sort(by.begin(), by.end(), [&](int a, int b) {
        return (*pop)[a].obj[k] < (*pop)[b].obj[k];
      });
      const double lo = (*pop)[by.front()].obj[k];
      const double hi = (*pop)[by.back()].obj[k];
      (*pop)[by.front()].crowding = (*pop)[by.back()].crowding =
          std::numeric_limits<double>::infinity();
      if (!(hi > lo)) continue;
      for (size_t m = 1; m + 1 < by.size(); ++m) {
        (*pop)[by[m]].crowding +=
            ((*pop)[by[m + 1]].obj[k] - (*pop)[by[m - 1]].obj[k]) / (hi - lo);
      }
    }
  }
  return fronts;
}

bool Better(const Individual& a, const Individual& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  return a.crowding > b.crowding;
}

}  // namespace

absl::StatusOr<Nsga2Result> RunNsga2(
    const ExploreSpec& spec, const Nsga2Options& opt,
    const Nsga2Callback& on_generation) {
  RETURN_IF_ERROR(ValidateSpec(spec));
  const auto start = std::chrono::steady_clock::now();
  if (opt.population < 4 || opt.population > 4096 || opt.population % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "population: want an even number in 4..4096, got ", opt.population));
  }
  if (opt.generations < 1 || opt.generations > 10000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generations: want 1..10000, got ", opt.generations));
  }
  const MixedRadix grid = spec.space.Grid();
  const size_t axes = grid.size();
  const int d = static_cast<int>(spec.objectives.size());
  ASSIGN_OR_RETURN(SpaceEvaluator ev, SpaceEvaluator::Create(spec.space));
  std::mt19937_64 rng(opt.seed);
  auto draw = [&](uint64_t n) {  // uniform in [0, n), portable
    return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
  };
  std::unordered_map<uint64_t, Individual> cache;
  Nsga2Result res;
  // The front of every feasible point evaluated, kept as we go: a point
  // once dominated stays dominated (dominance is transitive), so the front
  // of (archive + points evaluated since) is the front of all of them.
  std::vector<uint64_t> archive;  // grid indices, ascending
  std::vector<uint64_t> fresh;    // evaluated since the archive's update
  auto update_archive = [&] {
    std::vector<uint64_t> ids = archive;
    for (uint64_t id : fresh) {
      if (cache.at(id).violation == 0) ids.push_back(id);
    }
    fresh.clear();
    std::sort(ids.begin(), ids.end());
    PointSet set;
    set.dims = d;
    for (uint64_t id : ids) set.Add(cache.at(id).obj.data());
    archive.clear();
    for (size_t i : ParetoFront(set)) archive.push_back(ids[i]);
  };
  // The archive's rows under the tie rule (pareto.h): one group per
  // objective vector, its lowest kMaxListedTies indices listed.
  auto archive_rows = [&] {
    FrontAccumulator acc(d);
    for (uint64_t id : archive) acc.Add(cache.at(id).obj.data(), id);
    std::vector<PointRow> rows;
    for (const FrontAccumulator::Entry& e : acc.Front()) {
      for (uint64_t id : e.ids) {
        PointRow r;
        r.index = id;
        r.ties = e.ties;
        r.objectives = e.values;
        for (int k = 0; k < d; ++k) {
          if (spec.objectives[k].maximize) r.objectives[k] = -r.objectives[k];
        }
        r.feasible = r.fits = r.pareto = true;
        r.spilled = cache.at(id).spilled;
        rows.push_back(std::move(r));
      }
    }
    std::sort(
        rows.begin(), rows.end(),
        [](const PointRow& x, const PointRow& y) { return x.index < y.index; });
    return rows;
  };

  auto evaluate = [&](Individual* ind) -> absl::Status {
    ind->index = grid.Encode(ind->genes.data());
    auto it = cache.find(ind->index);
    if (it == cache.end()) {
      PointOutcome out;
      RETURN_IF_ERROR(ev.EvaluateDigits(ind->genes.data(), &out));
      Individual e = *ind;
      e.obj.resize(d);
      MinimisedObjectives(out.metrics, spec.objectives, e.obj.data());
      e.violation = Violation(out.metrics, out.fits, out.memory_overflow,
                              spec.objectives, spec.constraints);
      e.spilled = out.spilled;
      it = cache.emplace(ind->index, std::move(e)).first;
      fresh.push_back(ind->index);
    }
    ind->obj = it->second.obj;
    ind->violation = it->second.violation;
    return absl::OkStatus();
  };

  std::vector<Individual> pop(opt.population);
  for (Individual& ind : pop) {
    ind.genes.resize(axes);
    for (size_t k = 0; k < axes; ++k) ind.genes[k] = draw(grid.radix(k));
    RETURN_IF_ERROR(evaluate(&ind));
  }
  Sort(&pop);

  std::vector<double> reference;
  auto report = [&](int gen) -> bool {
    PointSet feasible;
    feasible.dims = d;
    for (const Individual& ind : pop) {
      if (ind.violation == 0) feasible.Add(ind.obj.data());
    }
    if (reference.empty() && feasible.size() > 0) {
      reference = FrontReference(feasible);
      // Worst of the generation, not of its front: widen to every feasible.
      for (size_t i = 0; i < feasible.size(); ++i) {
        for (int k = 0; k < d; ++k) {
          reference[k] = std::max(reference[k], feasible.row(i)[k]);
        }
      }
    }
    Nsga2Generation g;
    g.generation = gen;
    g.evaluations = cache.size();
    PointSet front;
    front.dims = d;
    for (size_t i : ParetoFront(feasible)) front.Add(feasible.row(i));
    g.front_size = front.size();
    if (!reference.empty() && front.size() > 0) {
      const Hypervolume hv = ComputeHypervolume(
          front, reference,
          std::clamp<uint64_t>(20'000'000 / front.size(), 1000, 200000));
      g.hypervolume = hv.value;
      g.hypervolume_exact = hv.exact;
    }
    res.generations.push_back(g);
    update_archive();
    return !on_generation || on_generation(g, archive_rows());
  };
  if (!report(0)) return absl::CancelledError("nsga2 stopped at generation 0");

  for (int gen = 1; gen <= opt.generations; ++gen) {
    auto tournament = [&]() -> const Individual& {
      const Individual& a = pop[draw(pop.size())];
      const Individual& b = pop[draw(pop.size())];
      return Better(b, a) ? b : a;
    };
    std::vector<Individual> kids;
    kids.reserve(pop.size());
    while (kids.size() < pop.size()) {
      Individual c1 = tournament(), c2 = tournament();
      if (draw(10) < 9) {
        for (size_t k = 0; k < axes; ++k) {
          if (draw(2) == 1) std::swap(c1.genes[k], c2.genes[k]);
        }
      }
      for (Individual* c : {&c1, &c2}) {
        for (size_t k = 0; k < axes; ++k) {
          if (draw(axes) != 0) continue;
          const uint64_t r = grid.radix(k);
          if (r == 1) continue;
          const int64_t reach = std::max<int64_t>(1, static_cast<int64_t>(r) / 5);
          int64_t step = static_cast<int64_t>(draw(2 * reach)) - reach;
          if (step >= 0) ++step;  // never 0
          const int64_t g = std::clamp<int64_t>(
              static_cast<int64_t>(c->genes[k]) + step, 0,
              static_cast<int64_t>(r) - 1);
          c->genes[k] = static_cast<uint64_t>(g);
        }
        RETURN_IF_ERROR(evaluate(c));
        kids.push_back(std::move(*c));
      }
    }
    // Elitism: the best `population` of parents + children.
    for (Individual& k : kids) pop.push_back(std::move(k));
    const std::vector<std::vector<int>> fronts = Sort(&pop);
    std::vector<Individual> next;
    next.reserve(opt.population);
    for (const auto& front : fronts) {
      if (next.size() + front.size() <= static_cast<size_t>(opt.population)) {
        for (int i : front) next.push_back(pop[i]);
        continue;
      }
      std::vector<int> by = front;
      std::stable_sort(by.begin(), by.end(), [&](int a, int b) {
        return pop[a].crowding > pop[b].crowding;
      });
      for (int i : by) {
        if (next.size() == static_cast<size_t>(opt.population)) break;
        next.push_back(pop[i]);
      }
      break;
    }
    pop = std::move(next);
    Sort(&pop);
    if (!report(gen)) {
      return absl::CancelledError(
          absl::StrCat("nsga2 stopped at generation ", gen));
    }
  }

  // The exact front of every feasible point evaluated (not only the last
  // population): nothing found is thrown away.
  update_archive();
  res.front = archive_rows();
  res.front_size = archive.size();
  res.evaluations = cache.size();
  for (const auto& [index, e] : cache) res.feasible += e.violation == 0;
  res.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return res;
}

}  // namespace ridgeline::explore

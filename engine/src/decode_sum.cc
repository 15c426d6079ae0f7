// Closed-form decode sums (see decode_sum.h).
#include "decode_sum.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridgeline::engine::internal {
namespace {

void Add(OpAccumulator* a, const OpCost& op, const Timing& t, double n) {
  a->flops += n * op.flops;
  for (int c = 0; c < kOperandClassCount; ++c) {
    a->read[c] += n * op.read[c];
    a->write[c] += n * op.write[c];
  }
  a->compute += n * t.compute;
  a->memory += n * t.memory;
  a->overhead += n * t.overhead;
  a->seconds += n * t.seconds;
}

// n steps whose amounts are affine in the step: n x (first + last) / 2.
void AddSeries(OpAccumulator* a, const OpCost& op_s, const Timing& t_s,
               const OpCost& op_e, const Timing& t_e, double n) {
  const double h = n / 2;
  a->flops += h * (op_s.flops + op_e.flops);
  for (int c = 0; c < kOperandClassCount; ++c) {
    a->read[c] += h * (op_s.read[c] + op_e.read[c]);
    a->write[c] += h * (op_s.write[c] + op_e.write[c]);
  }
  a->compute += h * (t_s.compute + t_e.compute);
  a->memory += h * (t_s.memory + t_e.memory);
  a->overhead += h * (t_s.overhead + t_e.overhead);
  a->seconds += h * (t_s.seconds + t_e.seconds);
}

// a += k x b (a whole chunk's sums, repeated).
void AddScaled(OpAccumulator* a, const OpAccumulator& b, double k) {
  a->flops += k * b.flops;
  for (int c = 0; c < kOperandClassCount; ++c) {
    a->read[c] += k * b.read[c];
    a->write[c] += k * b.write[c];
  }
  a->compute += k * b.compute;
  a->memory += k * b.memory;
  a->overhead += k * b.overhead;
  a->seconds += k * b.seconds;
}

// The roof lines of an op as value at x = 0 plus slope per key.
struct Line {
  double at0, slope;
};

// Integer cut points in [lo, hi] between which no two lines cross: for a
// crossing at x*, the steps up to floor(x*) and from floor(x*) + 1 on are
// each in one regime; an integral x* gets a step of its own (both sides
// meet there, and ties resolve as the step loop resolves them).
void Cuts(const std::vector<Line>& lines, double lo, double hi,
          std::vector<double>* cuts) {
  for (size_t i = 0; i < lines.size(); ++i) {
    for (size_t j = i + 1; j < lines.size(); ++j) {
      const double ds = lines[i].slope - lines[j].slope;
      if (ds == 0) continue;
      const double x = (lines[j].at0 - lines[i].at0) / ds;
      if (!(x >= lo && x <= hi)) continue;
      const double f = std::floor(x);
      cuts->push_back(f);
      if (f == x) cuts->push_back(f - 1);
    }
  }
}

}  // namespace

bool SumDecodeStepsLoop(const OpList& dec0, const OpList& slope,
                        const int* lin, size_t n_linear, int64_t prompt,
                        int64_t steps, double const_seconds,
                        const Evaluator& ev, DecodeSums* out, StopPoll* stop) {
  out->acc.assign(n_linear, OpAccumulator());
  OpList scratch;
  for (size_t j = 0; j < n_linear; ++j) scratch.push_back(dec0[lin[j]]);
  // Raw pointers: the inline/heap branch of InlinedVector's operator[]
  // stays out of the per-step loop.
  const OpCost* base_ops = dec0.data();
  const OpCost* slope_ops = slope.data();
  OpCost* step_ops = scratch.data();
  OpAccumulator* sums = out->acc.data();
  double total = 0;
  for (int64_t i = 1; i <= steps; ++i) {
    // Each step calls the plugin's hook per op: the one loop whose length
    // is the generated length, so the one place a deadline must cut.
    if (stop != nullptr && stop->Tick()) return false;
    const int64_t kv = prompt + i;
    double step = const_seconds;
    for (size_t j = 0; j < n_linear; ++j) {
      OpCost& op = step_ops[j];
      OpAt(base_ops[lin[j]], slope_ops[lin[j]], KeysRead(op, kv), &op);
      const Timing t = ev.Time(op);
      Add(&sums[j], op, t, 1);
      sums[j].last = t;
      step += t.seconds;
    }
    if (i == 1) out->first = step;
    if (i == steps) out->last = step;
    total += step;
  }
  out->total = total;
  return true;
}

bool SumDecodeSteps(const OpList& dec0, const OpList& slope, const int* lin,
                    size_t n_linear, int64_t prompt, int64_t steps,
                    double const_seconds, const Evaluator& ev,
                    DecodeSums* out, StopPoll* stop) {
  if (ev.uses_hook()) {
    return SumDecodeStepsLoop(dec0, slope, lin, n_linear, prompt, steps,
                              const_seconds, ev, out, stop);
  }
  out->acc.assign(n_linear, OpAccumulator());
  out->first = out->last = const_seconds;
  double op_seconds = 0;
  std::vector<Line> lines;
  std::vector<double> cuts;
  const int64_t kv_first = prompt + 1, kv_last = prompt + steps;
  for (size_t j = 0; j < n_linear; ++j) {
    const OpCost& base = dec0[lin[j]];
    const OpCost& per_key = slope[lin[j]];
    OpAccumulator& a = out->acc[j];
    auto at = [&](double x) {
      OpCost op = base;
      OpAt(base, per_key, x, &op);
      return op;
    };
    // Steps whose keys read run x = lo .. hi (one per step), into `acc`.
    auto series = [&](int64_t lo_x, int64_t hi_x, OpAccumulator* acc) {
      const double lo = static_cast<double>(lo_x);
      const double hi = static_cast<double>(hi_x);
      const Evaluator::Lines l0 = ev.RoofLines(at(0)), l1 = ev.RoofLines(at(1));
      lines.clear();
      lines.push_back({l0.compute, l1.compute - l0.compute});
      lines.push_back({l0.memory, l1.memory - l0.memory});
      lines.push_back({l0.link, l1.link - l0.link});
      if (l0.pim) {
        lines.push_back({l0.pim_compute, l1.pim_compute - l0.pim_compute});
        lines.push_back({l0.pim_memory, l1.pim_memory - l0.pim_memory});
      }
      cuts.clear();
      Cuts(lines, lo, hi, &cuts);
      cuts.push_back(hi);
      std::sort(cuts.begin(), cuts.end());
      double s = lo;
      for (double c : cuts) {
        if (c < s) continue;
        const OpCost op_s = at(s), op_e = at(c);
        const Timing t_s = ev.Time(op_s), t_e = ev.Time(op_e);
        AddSeries(acc, op_s, t_s, op_e, t_e, c - s + 1);
        acc->last = t_e;
        s = c + 1;
        if (s > hi) break;
      }
    };
    const int64_t w = base.window;
    if (base.chunked && w > 0) {
      // Chunked: x = ((kv - 1) mod w) + 1, a sawtooth. The first chunk's
      // rest, the full chunks between (all alike: summed once), the last
      // chunk's start.
      const int64_t c_first = (kv_first - 1) / w, c_last = (kv_last - 1) / w;
      const int64_t x_first = (kv_first - 1) % w + 1, x_last = (kv_last - 1) % w + 1;
      if (c_first == c_last) {
        series(x_first, x_last, &a);
      } else {
        series(x_first, w, &a);
        if (c_last - c_first > 1) {
          OpAccumulator chunk;
          series(1, w, &chunk);
          AddScaled(&a, chunk, static_cast<double>(c_last - c_first - 1));
        }
        series(1, x_last, &a);
      }
    } else {
      // Keys read grow with the step up to the window, then stay at it.
      const int64_t grow_end = w > 0 ? std::min(kv_last, w) : kv_last;
      if (kv_first <= grow_end) series(kv_first, grow_end, &a);
      const int64_t capped =
          w > 0 ? std::max<int64_t>(0, kv_last - std::max(w, prompt)) : 0;
      if (capped > 0) {
        const OpCost op = at(static_cast<double>(w));
        const Timing t = ev.Time(op);
        Add(&a, op, t, static_cast<double>(capped));
        a.last = t;
      }
    }
    out->first += ev.Time(at(KeysRead(base, kv_first))).seconds;
    out->last += a.last.seconds;
    op_seconds += a.seconds;
  }
  out->total = static_cast<double>(steps) * const_seconds + op_seconds;
  return true;
}

}  // namespace ridgeline::engine::internal

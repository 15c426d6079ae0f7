#include "loadgen_mixed.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "ridgeline/v1/ridgeline.grpc.pb.h"

namespace ridgeline::loadgen {
namespace {

constexpr const char* kKindNames[kKinds] = {"valid", "invalid", "cancelled",
                                            "sweep"};
// The code each kind should end with; anything else counts as an error.
// A cancelled call may also complete before the cancel reaches the server.
bool Expected(int kind, grpc::StatusCode code) {
  switch (kind) {
    case 0:
    case 3:
      return code == grpc::StatusCode::OK;
    case 1:
      return code == grpc::StatusCode::INVALID_ARGUMENT;
    default:
      return code == grpc::StatusCode::CANCELLED ||
             code == grpc::StatusCode::OK;
  }
}

const char* CodeName(int code) {
  static const char* const kNames[] = {
      "OK",         "CANCELLED",         "UNKNOWN",
      "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS",   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED",     "OUT_OF_RANGE",
      "UNIMPLEMENTED",    "INTERNAL",          "UNAVAILABLE",
      "DATA_LOSS",        "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? kNames[code] : "?";
}


}  // namespace

// `concurrency` threads; call n of a thread is of the kind its position in
// the cycle of the --mix weights gives (deterministic, evenly interleaved).
void MixedLoad(const Options& o, KindResults (&out)[kKinds]) {
  const v1::AnalyzeRequest valid = MakeAnalyze(o);
  v1::AnalyzeRequest invalid = valid;
  invalid.mutable_workload()->set_prompt_tokens(0);  // range is 1..1e7
  v1::SweepRequest sweep;
  sweep.add_models()->set_catalog_id(o.model);
  sweep.add_hardware()->set_platform_id(o.hardware);
  for (int64_t b : o.sweep_batches) sweep.add_batch_sizes(b);
  sweep.add_prompt_tokens(o.prompt);
  sweep.add_generated_tokens(o.gen);
  // One cycle of the weights, interleaved by smooth weighted round robin
  // (each turn every kind gains its weight, the richest is picked and pays
  // the total), so the kinds alternate instead of coming in runs.
  std::vector<int> spread;
  {
    const int64_t total = o.mix[0] + o.mix[1] + o.mix[2] + o.mix[3];
    int64_t credit[kKinds] = {0, 0, 0, 0};
    for (int64_t i = 0; i < total; ++i) {
      int best = 0;
      for (int k = 0; k < kKinds; ++k) {
        credit[k] += o.mix[k];
        if (credit[k] > credit[best]) best = k;
      }
      credit[best] -= total;
      spread.push_back(best);
    }
  }
  auto channels = MakeChannels(o);
  const auto end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(o.duration_seconds));
  std::atomic<int64_t> issued{0};
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < o.concurrency; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::RidgelineService::NewStub(channels[t % channels.size()]);
      KindResults mine[kKinds];
      v1::AnalyzeResponse resp;
      v1::SweepPoint point;
      for (int64_t n = t; Clock::now() < end && issued.fetch_add(1) < o.requests;
           ++n) {
        const int kind = spread[static_cast<size_t>(n) % spread.size()];
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
        const auto start = Clock::now();
        grpc::Status status;
        if (kind == 3) {
          auto reader = stub->Sweep(&ctx, sweep);
          while (reader->Read(&point)) {
          }
          status = reader->Finish();
        } else if (kind == 2) {
          // Cancelled while in flight: the async call is started, then
          // cancelled at once.
          std::mutex m;
          std::condition_variable cv;
          bool done = false;
          stub->async()->Analyze(&ctx, &valid, &resp,
                                 [&](grpc::Status s) {
                                   std::lock_guard<std::mutex> l(m);
                                   status = std::move(s);
                                   done = true;
                                   cv.notify_one();
                                 });
          ctx.TryCancel();
          std::unique_lock<std::mutex> l(m);
          cv.wait(l, [&] { return done; });
        } else {
          status = stub->Analyze(&ctx, kind == 0 ? valid : invalid, &resp);
        }
        const double seconds =
            std::chrono::duration<double>(Clock::now() - start).count();
        ++mine[kind].codes[status.error_code()];
        if (kind != 2 && Expected(kind, status.error_code())) {
          mine[kind].latencies.push_back(seconds);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      for (int k = 0; k < kKinds; ++k) {
        for (const auto& [code, count] : mine[k].codes) {
          out[k].codes[code] += count;
        }
        out[k].latencies.insert(out[k].latencies.end(),
                                mine[k].latencies.begin(),
                                mine[k].latencies.end());
      }
    });
  }
  for (auto& th : threads) th.join();
}

// Prints the mixed run; returns the count of unexpected outcomes.
int64_t ReportMixed(KindResults (&r)[kKinds], double wall) {
  int64_t total = 0, unexpected = 0;
  std::map<int, int64_t> all;
  std::vector<double> ok_latencies;
  for (int k = 0; k < kKinds; ++k) {
    for (const auto& [code, n] : r[k].codes) {
      total += n;
      all[code] += n;
      if (!Expected(k, static_cast<grpc::StatusCode>(code))) unexpected += n;
    }
  }
  std::printf("requests %lld in %.2f s: %.0f requests/s; unexpected %lld\n",
              static_cast<long long>(total), wall,
              static_cast<double>(total) / wall,
              static_cast<long long>(unexpected));
  std::printf("by code:");
  for (const auto& [code, n] : all) {
    std::printf(" %s %lld", CodeName(code), static_cast<long long>(n));
  }
  std::printf("\n");
  for (int k = 0; k < kKinds; ++k) {
    std::vector<double>& lat = r[k].latencies;
    std::sort(lat.begin(), lat.end());
    ok_latencies.insert(ok_latencies.end(), lat.begin(), lat.end());
    std::printf("%-9s", kKindNames[k]);
    for (const auto& [code, n] : r[k].codes) {
      std::printf(" %s %lld%s", CodeName(code), static_cast<long long>(n),
                  Expected(k, static_cast<grpc::StatusCode>(code))
                      ? ""
                      : " (unexpected)");
    }
    if (k != 2) {
      std::printf("; latency ms p50 %.3f p99 %.3f max %.3f",
                  Percentile(lat, 0.5) * 1e3, Percentile(lat, 0.99) * 1e3,
                  lat.empty() ? 0 : lat.back() * 1e3);
    }
    std::printf("\n");
  }
  std::sort(ok_latencies.begin(), ok_latencies.end());
  std::printf("latency ms (valid, invalid, sweep): p50 %.3f  p99 %.3f  max "
              "%.3f\n",
              Percentile(ok_latencies, 0.5) * 1e3,
              Percentile(ok_latencies, 0.99) * 1e3,
              ok_latencies.empty() ? 0 : ok_latencies.back() * 1e3);
  return unexpected;
}

}  // namespace ridgeline::loadgen

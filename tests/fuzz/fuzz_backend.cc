#include "fuzz_backend.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/json_util.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/status.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

// The service's caps (backend.h), scaled so that the most expensive request
// they admit still takes well under a second with sanitizers on.
service::Limits FuzzLimits() {
  service::Limits limits;
  limits.max_sweep_points = 64;
  limits.max_explore_points = 4096;
  limits.max_explore_all_points = 256;
  limits.explore_threads = 1;
  limits.max_inline_config_bytes = 1 << 20;
  limits.max_request_cost = 1e8;
  return limits;
}

// What the server's deadline does for the calls that poll one.
std::function<bool()> Deadline(double seconds) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  return [end] { return Clock::now() > end; };
}

constexpr double kDeadlineSeconds = 0.25;

void Emit(const google::protobuf::Message& response, bool json) {
  std::string out;
  if (json) {
    google::protobuf::util::JsonPrintOptions options;
    (void)google::protobuf::util::MessageToJsonString(response, &out, options);
  } else {
    (void)response.SerializeToString(&out);
  }
}

// Maps the outcome as the server does. In-tree plugins never fault, so an
// INTERNAL or UNKNOWN answer to client input is a bug: bad input must be
// INVALID_ARGUMENT (or NOT_FOUND, RESOURCE_EXHAUSTED, ...) naming the field.
void Check(const absl::Status& status) {
  // RIDGELINE_FUZZ_VERBOSE=1: print every outcome (are the seeds valid?).
  static const bool verbose = std::getenv("RIDGELINE_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "fuzz: %s\n", status.ToString().c_str());
  if (status.ok()) return;
  const grpc::Status mapped = service::ToGrpcStatus(status);
  if (mapped.error_message().size() > service::kMaxStatusMessageBytes + 64) {
    std::fprintf(stderr, "fuzz: unbounded status message (%zu bytes)\n",
                 mapped.error_message().size());
    std::abort();
  }
  if (status.code() == absl::StatusCode::kInternal ||
      status.code() == absl::StatusCode::kUnknown) {
    std::fprintf(stderr, "fuzz: client input answered %s\n",
                 status.ToString().c_str());
    std::abort();
  }
}

template <typename T>
void Finish(const absl::StatusOr<T>& r, bool json) {
  Check(r.status());
  if (r.ok()) Emit(*r, json);
}

void Finish(const absl::Status& s, const google::protobuf::Message& response,
            bool json) {
  Check(s);
  if (s.ok()) Emit(response, json);
}

}  // namespace

namespace {

struct World {
  std::shared_ptr<const calibration::ProfileStore> profiles;
  std::unique_ptr<service::Backend> backend;
};

const World& TheWorld() {
  static const World* world = [] {
    // A proto3 string that is not UTF-8 fails the parse (as in the server)
    // and is logged each time; the log would drown the fuzzer's output.
    google::protobuf::SetLogHandler(nullptr);
    // Plugins run in-process here, as in the in-process CLI; the server's
    // child pre-check guards against faulty vendor plugins, not ours.
    auto registry = plugin_host::HardwareRegistry::LoadDirectory(
        RIDGELINE_FUZZ_PLUGIN_DIR, plugin_host::LoadLog::kNone);
    if (registry->platforms().empty()) {
      std::fprintf(stderr, "fuzz: no platforms in %s\n",
                   RIDGELINE_FUZZ_PLUGIN_DIR);
      std::abort();
    }
    auto profiles =
        calibration::ProfileStore::LoadDirectory(RIDGELINE_FUZZ_PROFILE_DIR);
    if (!profiles.ok()) {
      std::fprintf(stderr, "fuzz: %s\n", profiles.status().ToString().c_str());
      std::abort();
    }
    auto* w = new World;
    w->profiles = *profiles;
    w->backend = std::make_unique<service::Backend>(
        std::move(registry), *std::move(profiles), FuzzLimits());
    return w;
  }();
  return *world;
}

}  // namespace

const service::Backend& FuzzBackend() { return *TheWorld().backend; }

const calibration::ProfileStore& FuzzProfiles() {
  return *TheWorld().profiles;
}

std::unique_ptr<google::protobuf::Message> NewRequest(size_t rpc) {
  switch (rpc) {
    case 0: return std::make_unique<v1::AnalyzeRequest>();
    case 1: return std::make_unique<v1::SweepRequest>();
    case 2: return std::make_unique<v1::ListHardwareRequest>();
    case 3: return std::make_unique<v1::GetHardwareRequest>();
    case 4: return std::make_unique<v1::ListModelsRequest>();
    case 5: return std::make_unique<v1::GetModelRequest>();
    case 6: return std::make_unique<v1::AnalyzeKernelRequest>();
    case 7: return std::make_unique<v1::StepTimeRequest>();
    case 8: return std::make_unique<v1::StepTimeStreamRequest>();
    case 9: return std::make_unique<v1::ExploreRequest>();
    case 10: return std::make_unique<v1::PlanRequest>();
    case 11: return std::make_unique<v1::SimulateRequest>();
  }
  std::abort();
}

void CallRpc(size_t rpc, const google::protobuf::Message& message,
             bool json) {
  const service::Backend& b = FuzzBackend();
  switch (rpc) {
    case 0: {
      v1::AnalyzeResponse response;
      Finish(b.Analyze(static_cast<const v1::AnalyzeRequest&>(message),
                       &response),
             response, json);
      return;
    }
    case 1: {
      const auto stop = Deadline(kDeadlineSeconds);
      Check(b.Sweep(static_cast<const v1::SweepRequest&>(message),
                    [&](const v1::SweepPoint& point) {
                      Emit(point, json);
                      return !stop();
                    }));
      return;
    }
    case 2: {
      auto r = b.ListHardware(
          static_cast<const v1::ListHardwareRequest&>(message));
      Finish(r, json);
      return;
    }
    case 3: {
      auto r =
          b.GetHardware(static_cast<const v1::GetHardwareRequest&>(message));
      Finish(r, json);
      return;
    }
    case 4: {
      auto r = b.ListModels(static_cast<const v1::ListModelsRequest&>(message));
      Finish(r, json);
      return;
    }
    case 5: {
      auto r = b.GetModel(static_cast<const v1::GetModelRequest&>(message));
      Finish(r, json);
      return;
    }
    case 6: {
      v1::AnalyzeKernelResponse response;
      Finish(b.AnalyzeKernel(
                 static_cast<const v1::AnalyzeKernelRequest&>(message),
                 &response),
             response, json);
      return;
    }
    case 7: {
      v1::StepTimeResponse response;
      Finish(b.StepTime(static_cast<const v1::StepTimeRequest&>(message),
                        &response),
             response, json);
      return;
    }
    case 8: {
      // The server opens the session from the first message's scenario,
      // then answers that message's steps (and every later message's).
      const auto& request =
          static_cast<const v1::StepTimeStreamRequest&>(message);
      auto session = b.OpenStepSession(request.scenario());
      Check(session.status());
      if (!session.ok()) return;
      v1::StepTimeResponse response;
      (*session)->Answer(request, &response);
      Emit(response, json);
      return;
    }
    case 9: {
      const auto stop = Deadline(kDeadlineSeconds);
      Check(b.Explore(static_cast<const v1::ExploreRequest&>(message),
                      [&](const v1::ExploreResponse& r) {
                        Emit(r, json);
                        return !stop();
                      },
                      stop));
      return;
    }
    case 10: {
      auto r = b.Plan(static_cast<const v1::PlanRequest&>(message),
                      Deadline(kDeadlineSeconds));
      Finish(r, json);
      return;
    }
    case 11: {
      auto r = b.Simulate(static_cast<const v1::SimulateRequest&>(message),
                          Deadline(kDeadlineSeconds));
      Finish(r, json);
      return;
    }
  }
  std::abort();
}

}  // namespace ridgeline::fuzz

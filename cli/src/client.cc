#include "client.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/status.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"

namespace ridgeline::cli {
namespace {

// Flag, then environment variable, then the installed default.
std::filesystem::path ResolveDir(const std::string& flag, const char* env,
                                 std::filesystem::path fallback) {
  if (!flag.empty()) return flag;
  if (const char* value = std::getenv(env); value != nullptr && *value) {
    return value;
  }
  return fallback;
}

class InProcessClient final : public Client {
 public:
  explicit InProcessClient(std::unique_ptr<service::Backend> backend)
      : backend_(std::move(backend)) {}

  absl::StatusOr<v1::AnalyzeResponse> Analyze(
      const v1::AnalyzeRequest& request) override {
    return backend_->Analyze(request);
  }
  absl::Status Sweep(
      const v1::SweepRequest& request,
      const std::function<void(const v1::SweepPoint&)>& emit) override {
    return backend_->Sweep(request, [&](const v1::SweepPoint& point) {
      emit(point);
      return true;
    });
  }
  absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) override {
    return backend_->ListHardware(request);
  }
  absl::StatusOr<v1::GetHardwareResponse> GetHardware(
      const v1::GetHardwareRequest& request) override {
    return backend_->GetHardware(request);
  }
  absl::StatusOr<v1::ListModelsResponse> ListModels(
      const v1::ListModelsRequest& request) override {
    return backend_->ListModels(request);
  }
  absl::StatusOr<v1::GetModelResponse> GetModel(
      const v1::GetModelRequest& request) override {
    return backend_->GetModel(request);
  }
  absl::StatusOr<v1::AnalyzeKernelResponse> AnalyzeKernel(
      const v1::AnalyzeKernelRequest& request) override {
    return backend_->AnalyzeKernel(request);
  }
  absl::StatusOr<v1::StepTimeResponse> StepTime(
      const v1::StepTimeRequest& request) override {
    v1::StepTimeResponse response;
    absl::Status s = backend_->StepTime(request, &response);
    if (!s.ok()) return s;
    return response;
  }
  absl::Status Explore(
      const v1::ExploreRequest& request,
      const std::function<void(const v1::ExploreResponse&)>& emit) override {
    return backend_->Explore(request, [&](const v1::ExploreResponse& m) {
      emit(m);
      return true;
    });
  }
  absl::StatusOr<v1::PlanResponse> Plan(
      const v1::PlanRequest& request) override {
    return backend_->Plan(request);
  }
  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) override {
    return backend_->Simulate(request);
  }
  absl::StatusOr<v1::ExploreSensitivityResponse> ExploreSensitivity(
      const v1::ExploreSensitivityRequest& request) override {
    return backend_->ExploreSensitivity(request);
  }

 private:
  std::unique_ptr<service::Backend> backend_;
};

// absl and gRPC share the canonical code numbering. The server's field
// path (trailing metadata) becomes the Status payload, as in-process.
absl::Status FromGrpc(const grpc::Status& status,
                      const grpc::ClientContext& context) {
  if (status.ok()) return absl::OkStatus();
  absl::Status out(static_cast<absl::StatusCode>(status.error_code()),
                   status.error_message());
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(service::kFieldPathMetadataKey);
  if (it != trailers.end()) {
    out = engine::WithFieldPath(
        std::move(out), std::string(it->second.data(), it->second.size()));
  }
  return out;
}

class GrpcClient final : public Client {
 public:
  GrpcClient(const std::string& target, std::chrono::milliseconds timeout)
      : target_(target),
        stub_(v1::RidgelineService::NewStub(
            grpc::CreateChannel(target, grpc::InsecureChannelCredentials()))),
        timeout_(timeout) {}

  absl::StatusOr<v1::AnalyzeResponse> Analyze(
      const v1::AnalyzeRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::Analyze, request,
                 v1::AnalyzeResponse());
  }
  absl::Status Sweep(
      const v1::SweepRequest& request,
      const std::function<void(const v1::SweepPoint&)>& emit) override {
    return Call([&](grpc::ClientContext* context) {
      std::unique_ptr<grpc::ClientReader<v1::SweepPoint>> reader =
          stub_->Sweep(context, request);
      v1::SweepPoint point;
      while (reader->Read(&point)) emit(point);
      return reader->Finish();
    });
  }
  absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::ListHardware, request,
                 v1::ListHardwareResponse());
  }
  absl::StatusOr<v1::GetHardwareResponse> GetHardware(
      const v1::GetHardwareRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::GetHardware, request,
                 v1::GetHardwareResponse());
  }
  absl::StatusOr<v1::ListModelsResponse> ListModels(
      const v1::ListModelsRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::ListModels, request,
                 v1::ListModelsResponse());
  }
  absl::StatusOr<v1::GetModelResponse> GetModel(
      const v1::GetModelRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::GetModel, request,
                 v1::GetModelResponse());
  }
  absl::StatusOr<v1::AnalyzeKernelResponse> AnalyzeKernel(
      const v1::AnalyzeKernelRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::AnalyzeKernel, request,
                 v1::AnalyzeKernelResponse());
  }
  absl::StatusOr<v1::StepTimeResponse> StepTime(
      const v1::StepTimeRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::StepTime, request,
                 v1::StepTimeResponse());
  }
  absl::Status Explore(
      const v1::ExploreRequest& request,
      const std::function<void(const v1::ExploreResponse&)>& emit) override {
    return Call([&](grpc::ClientContext* context) {
      std::unique_ptr<grpc::ClientReader<v1::ExploreResponse>> reader =
          stub_->Explore(context, request);
      v1::ExploreResponse m;
      while (reader->Read(&m)) emit(m);
      return reader->Finish();
    });
  }
  absl::StatusOr<v1::PlanResponse> Plan(
      const v1::PlanRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::Plan, request,
                 v1::PlanResponse());
  }
  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::Simulate, request,
                 v1::SimulateResponse());
  }
  absl::StatusOr<v1::ExploreSensitivityResponse> ExploreSensitivity(
      const v1::ExploreSensitivityRequest& request) override {
    return Unary(&v1::RidgelineService::Stub::ExploreSensitivity, request,
                 v1::ExploreSensitivityResponse());
  }

 private:
  // One call within --timeout. A server that has just started answers
  // UNAVAILABLE (kNotReadyMessage) until its plugins load: the call is
  // repeated through that wait, so a script may start the server and call
  // it at once. Nothing else is repeated (a refused stream emitted nothing).
  absl::Status Call(
      const std::function<grpc::Status(grpc::ClientContext*)>& attempt) const {
    constexpr auto kPoll = std::chrono::milliseconds(100);
    const auto deadline = std::chrono::system_clock::now() + timeout_;
    while (true) {
      grpc::ClientContext context;
      context.set_deadline(deadline);
      const grpc::Status result = attempt(&context);
      if (result.error_code() != grpc::StatusCode::UNAVAILABLE ||
          result.error_message() != service::kNotReadyMessage ||
          std::chrono::system_clock::now() + kPoll >= deadline) {
        return Annotate(FromGrpc(result, context));
      }
      std::this_thread::sleep_for(kPoll);
    }
  }

  // Transport failures get the target in the message; server errors already
  // name the field.
  absl::Status Annotate(absl::Status status) const {
    if (status.code() == absl::StatusCode::kUnavailable ||
        status.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::Status(status.code(), absl::StrCat("server ", target_, ": ",
                                                      status.message()));
    }
    return status;
  }

  template <typename Request, typename Response>
  absl::StatusOr<Response> Unary(
      grpc::Status (v1::RidgelineService::Stub::*method)(grpc::ClientContext*,
                                                         const Request&,
                                                         Response*),
      const Request& request, Response response) {
    absl::Status status = Call([&](grpc::ClientContext* context) {
      return (stub_.get()->*method)(context, request, &response);
    });
    if (!status.ok()) return status;
    return response;
  }

  std::string target_;
  std::unique_ptr<v1::RidgelineService::Stub> stub_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> MakeInProcessClient(
    const InProcessOptions& options) {
  std::filesystem::path plugin_dir =
      ResolveDir(options.plugin_dir, "RIDGELINE_PLUGIN_DIR",
                 plugin_host::DefaultPluginDir());
  const std::filesystem::path default_profiles = calibration::DefaultProfileDir();
  std::filesystem::path profile_dir =
      ResolveDir(options.profile_dir, "RIDGELINE_PROFILE_DIR", default_profiles);
  // A folder someone named must exist: a typo would otherwise give an
  // empty catalog (and "hardware" an empty table).
  auto check = [](const std::filesystem::path& dir, const char* source,
                  const char* field) -> absl::Status {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) return absl::OkStatus();
    return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                                     source, ": plugin folder '", dir.string(),
                                     "' does not exist or is not a directory")),
                                 field);
  };
  if (!options.plugin_dir.empty()) {
    RETURN_IF_ERROR(check(plugin_dir, "--plugin-dir", "plugin_dir"));
  } else if (plugin_dir != plugin_host::DefaultPluginDir()) {
    RETURN_IF_ERROR(check(plugin_dir, "RIDGELINE_PLUGIN_DIR", "plugin_dir"));
  }
  std::vector<std::filesystem::path> dirs = {plugin_dir};
  for (const std::string& extra : options.extra_plugin_dirs) {
    RETURN_IF_ERROR(check(extra, "--extra-plugin-dir", "extra_plugin_dir"));
    dirs.emplace_back(extra);
  }
  // Successful loads are noise on a command line; refusals are not.
  auto registry = plugin_host::HardwareRegistry::LoadDirectories(
      dirs, plugin_host::LoadLog::kRefusalsOnly);
  absl::StatusOr<std::shared_ptr<const calibration::ProfileStore>> profiles =
      calibration::ProfileStore::LoadDirectory(
          profile_dir, profile_dir == default_profiles
                           ? calibration::ProfileStore::IfMissing::kEmpty
                           : calibration::ProfileStore::IfMissing::kError);
  if (!profiles.ok()) return profiles.status();
  return std::unique_ptr<Client>(
      new InProcessClient(std::make_unique<service::Backend>(
          std::move(registry), *profiles, service::Limits())));
}

std::unique_ptr<Client> MakeGrpcClient(const std::string& target,
                                       std::chrono::milliseconds timeout) {
  return std::make_unique<GrpcClient>(target, timeout);
}

}  // namespace ridgeline::cli

// Where the CLI's requests go: the in-process service::Backend (plugins
// loaded into this process) or a ridgeline-server over gRPC. Both take and
// return the same v1 messages, so the two paths print identical results.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

// Thread-compatible; one per command.
class Client {
 public:
  virtual ~Client() = default;
  virtual absl::StatusOr<v1::AnalyzeResponse> Analyze(
      const v1::AnalyzeRequest& request) = 0;
  // `emit` is called for each point in stream order.
  virtual absl::Status Sweep(
      const v1::SweepRequest& request,
      const std::function<void(const v1::SweepPoint&)>& emit) = 0;
  virtual absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) = 0;
  virtual absl::StatusOr<v1::GetHardwareResponse> GetHardware(
      const v1::GetHardwareRequest& request) = 0;
  virtual absl::StatusOr<v1::ListModelsResponse> ListModels(
      const v1::ListModelsRequest& request) = 0;
  virtual absl::StatusOr<v1::GetModelResponse> GetModel(
      const v1::GetModelRequest& request) = 0;
  virtual absl::StatusOr<v1::AnalyzeKernelResponse> AnalyzeKernel(
      const v1::AnalyzeKernelRequest& request) = 0;
  virtual absl::StatusOr<v1::StepTimeResponse> StepTime(
      const v1::StepTimeRequest& request) = 0;
  // `emit` is called for each message in stream order.
  virtual absl::Status Explore(
      const v1::ExploreRequest& request,
      const std::function<void(const v1::ExploreResponse&)>& emit) = 0;
  virtual absl::StatusOr<v1::PlanResponse> Plan(
      const v1::PlanRequest& request) = 0;
  virtual absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) = 0;
  virtual absl::StatusOr<v1::ExploreSensitivityResponse> ExploreSensitivity(
      const v1::ExploreSensitivityRequest& request) = 0;
};

struct InProcessOptions {
  // Replaces the installed plugins: "" = RIDGELINE_PLUGIN_DIR, else the
  // default folder.
  std::string plugin_dir;
  // Loaded in addition, after plugin_dir (its ids win a clash).
  std::vector<std::string> extra_plugin_dirs;
  std::string profile_dir;  // "" = RIDGELINE_PROFILE_DIR, else the default
};
// Loads plugins and profiles now. A profile directory that fails to parse
// is an error naming the file; a plugin folder without plugins is not (the
// catalog is then empty and hardware ids are NOT_FOUND). A plugin folder
// that was named (flag or variable) but is not a directory is
// INVALID_ARGUMENT naming it and where it came from, with the field path
// "plugin_dir" (or "extra_plugin_dir").
absl::StatusOr<std::unique_ptr<Client>> MakeInProcessClient(
    const InProcessOptions& options);

// `target` is "host:port". Each call has `timeout` as its deadline.
std::unique_ptr<Client> MakeGrpcClient(const std::string& target,
                                       std::chrono::milliseconds timeout);

}  // namespace ridgeline::cli

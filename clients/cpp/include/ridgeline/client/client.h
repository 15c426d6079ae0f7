// SPDX-License-Identifier: Apache-2.0
// ridgeline::client — a small C++ wrapper over the generated ridgeline.v1
// gRPC stubs, with the calls of the Python package: Analyze, Sweep,
// StepTime, the catalogs and a StepTimer for scheduler loops.
//
//   ridgeline::client::Client client("127.0.0.1:50051");
//   ridgeline::v1::AnalyzeResponse response;
//   grpc::Status s = client.Analyze(
//       ridgeline::client::AnalyzeRequestFor("llama-3-8b",
//           "nvidia-h100-sxm-80gb", /*batch=*/8, /*prompt=*/1024, /*gen=*/128),
//       &response);
//
// Errors are grpc::Status. The request field at fault comes back through
// each call's optional `field_path` (the server's trailing metadata
// "ridgeline-field-path", else the leading path of its message).
// Installed with the Ridgeline CMake package:
//   find_package(Ridgeline CONFIG REQUIRED)
//   target_link_libraries(app PRIVATE ridgeline::client)
#ifndef RIDGELINE_CLIENT_CLIENT_H_
#define RIDGELINE_CLIENT_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::client {

// An AnalyzeRequest for catalog ids with the workload set (other fields
// unset: the server's defaults).
v1::AnalyzeRequest AnalyzeRequestFor(std::string_view model,
                                     std::string_view hardware, int64_t batch,
                                     int64_t prompt_tokens,
                                     int64_t generated_tokens);

// A StepScenario for catalog ids (other fields unset: server defaults).
v1::StepScenario ScenarioFor(std::string_view model, std::string_view hardware);

// options.speculative from the CLI's form ("draft:MODEL_ID:k", "mtp:k",
// "eagle:k") and a per-token acceptance rate; set it with
// request.mutable_options()->mutable_speculative(). An unparsable method
// becomes method = the text (the server answers INVALID_ARGUMENT naming
// options.speculative.method); ranges are the server's to check.
v1::SpeculativeDecoding SpeculativeOf(std::string_view method,
                                      double acceptance_rate);

// One sequence of a step: tokens already in its KV cache, tokens it adds
// (1 = a decode token, N = a prefill chunk).
struct StepSequence {
  int64_t context_tokens = 0;
  int64_t new_tokens = 1;
};
v1::Step StepOf(const std::vector<StepSequence>& sequences);

// The leading field path of a server error message ("workload.batch"), or
// "".
std::string FieldPath(const grpc::Status& status);
// The field path of a failed call made with `context`: the server's
// trailing metadata "ridgeline-field-path", else FieldPath(status).
std::string FieldPath(const grpc::Status& status,
                      const grpc::ClientContext& context);

class Client {
 public:
  // Plaintext when `credentials` is null; TLS with
  // grpc::SslCredentials(grpc::SslCredentialsOptions{...}).
  explicit Client(const std::string& target,
                  std::shared_ptr<grpc::ChannelCredentials> credentials =
                      nullptr);
  explicit Client(std::shared_ptr<grpc::Channel> channel);

  // Deadline of every call from now on; zero (the default) = none.
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Returns OK once the server answers Ridgeline calls. A server that is
  // starting answers UNAVAILABLE (not listening yet, or still loading its
  // plugins): retried every 100 ms for up to `timeout`, after which the
  // last UNAVAILABLE is returned. Any other status at once.
  grpc::Status WaitReady(std::chrono::milliseconds timeout);

  // Each call: on failure, `*field_path` (when given) is the request field
  // at fault, or "" when the error is not about one field.
  grpc::Status Analyze(const v1::AnalyzeRequest& request,
                       v1::AnalyzeResponse* response,
                       std::string* field_path = nullptr);
  // The serving simulation: one replica, `replicas` behind `router`, or a
  // prefill pool and a decode pool (request.prefill / request.decode);
  // the response has per-pool utilisation and the KV transfer percentiles.
  grpc::Status Simulate(const v1::SimulateRequest& request,
                        v1::SimulateResponse* response,
                        std::string* field_path = nullptr);
  // Calls `on_point` for each SweepPoint in the server's stable order;
  // returning false cancels the sweep (the status is then OK).
  grpc::Status Sweep(
      const v1::SweepRequest& request,
      const std::function<bool(const v1::SweepPoint&)>& on_point,
      std::string* field_path = nullptr);
  // A step answered with an error has error_code / error_message set in
  // its StepTimeResult; the call's status stays OK.
  grpc::Status StepTime(const v1::StepTimeRequest& request,
                        v1::StepTimeResponse* response,
                        std::string* field_path = nullptr);
  grpc::Status ListHardware(std::string_view family,
                            v1::ListHardwareResponse* response,
                            std::string* field_path = nullptr);
  grpc::Status GetHardware(std::string_view id, v1::Hardware* hardware,
                           std::string* field_path = nullptr);
  grpc::Status ListModels(v1::ListModelsResponse* response,
                          std::string* field_path = nullptr);
  grpc::Status GetModel(std::string_view id, v1::Model* model,
                        std::string* field_path = nullptr);

  v1::RidgelineService::Stub& stub() { return *stub_; }
  // A context with this client's deadline.
  std::unique_ptr<grpc::ClientContext> NewContext() const;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RidgelineService::Stub> stub_;
  std::chrono::milliseconds timeout_{0};
};

// One StepTimeStream kept open for a scheduler loop: the scenario travels
// with the first step, then each Step() is one round trip.
//
//   ridgeline::client::StepTimer timer(client, ScenarioFor("llama-3-8b",
//                                      "nvidia-h100-sxm-80gb"));
//   double seconds;
//   grpc::Status s = timer.Step({{1024, 1}, {0, 512}}, &seconds);
//
// A bad step returns its INVALID_ARGUMENT and the stream stays open; a bad
// scenario (or a broken stream) ends it, and the next Step() opens a new
// one. The client must outlive the timer. Not thread-safe.
class StepTimer {
 public:
  StepTimer(Client& client, v1::StepScenario scenario);
  ~StepTimer();
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;

  // On failure `*field_path` (when given) names the field at fault, e.g.
  // "steps[0].sequences[1].new_tokens" or "scenario.model.catalog_id".
  grpc::Status Step(const std::vector<StepSequence>& sequences,
                    double* seconds, v1::StepTimeResult* result = nullptr,
                    std::string* field_path = nullptr);
  // Half-closes the stream and returns the server's final status.
  grpc::Status Close();
  // "" while the scenario's reservation fits on the device; else where it
  // spilled (StepTimeResponse.spilled), from the latest answer. Each step
  // that touches spilled bytes also says so in result->warnings() and
  // result->off_device_bytes().
  const std::string& spilled() const { return response_.spilled(); }

 private:
  grpc::Status Open();

  Client& client_;
  v1::StepScenario scenario_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepTimeStreamRequest,
                                           v1::StepTimeResponse>>
      stream_;
  bool sent_scenario_ = false;
  uint64_t next_id_ = 1;
  v1::StepTimeStreamRequest request_;
  v1::StepTimeResponse response_;
};

}  // namespace ridgeline::client

#endif  // RIDGELINE_CLIENT_CLIENT_H_

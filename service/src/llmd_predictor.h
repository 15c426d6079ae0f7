// llm-d's latency-predictor HTTP API (llm-d/llm-d-latency-predictor
// prediction_server.py and training_server.py; the fields relied on are
// listed in tests/integration/llmd/llmd_api_fields.json with the source
// commit) answered by Ridgeline's serving model: POST /predict,
// /predict/bulk, /predict/bulk/strict, /add_training_data_bulk, GET
// /healthz, /readyz, /status. Same field names, types and units
// (kv_cache_percentage a fraction, latencies in ms); a body with a missing
// or ill-typed field is 422 with FastAPI's {"detail": [{"type", "loc",
// "msg"}]}. Predictions are the pod model's (serving/pod_latency.h) times
// the per-pod_type running-median correction the training samples fit
// (serving/latency_correction.h). Transport-free: HttpServer serves it on
// --llmd-predictor-listen, the fuzz target calls Handle directly.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "http_router.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/serving/latency_correction.h"

namespace ridgeline::service {

struct LlmdPredictorOptions {
  std::string model_id;     // --llmd-model
  std::string hardware_id;  // --llmd-hardware
  int64_t tensor_parallel = 1;
  std::string framework;  // --llmd-framework, "" = pure roofline
};

class LlmdPredictor : public HttpHandler {
 public:
  static constexpr size_t kMaxBulkRequests = 10000;  // llm-d's max_length

  explicit LlmdPredictor(LlmdPredictorOptions options);

  // Serves predictions from `model` (until then /readyz and the POSTs are
  // 503). Call once.
  void SetModel(Backend::PodModel model);
  // The pod model could not be built: /readyz stays 503 and /status says
  // why. Call instead of SetModel.
  void SetError(const absl::Status& why);

  bool Quick(const HttpRequest& req) const override;
  HttpResponse Handle(const HttpRequest& req) const override;
  HttpResponse Refuse(int http_status, const absl::Status& why) const override;
  void Answered(const HttpRequest*, int) const override {}

 private:
  HttpResponse Predict(const std::string& body) const;
  HttpResponse PredictBulk(const std::string& body, bool strict) const;
  HttpResponse AddTraining(const std::string& body) const;
  HttpResponse Status() const;
  HttpResponse Ready() const;

  const LlmdPredictorOptions options_;
  std::atomic<bool> ready_{false};
  Backend::PodModel model_;  // set once, before ready_
  std::string loaded_at_;    // ISO 8601, set with model_
  mutable serving::LatencyCorrection correction_;
  mutable std::mutex error_mu_;
  std::string error_;  // SetError's, under error_mu_
};

class HttpServer;

// The predictor on its own port (--llmd-predictor-listen): the handler and
// the Boost.Beast server (http_server.h) with its caps.
class LlmdPredictorServer {
 public:
  LlmdPredictorServer(LlmdPredictorOptions options, std::string listen,
                      int64_t max_body_bytes, double read_timeout_seconds);
  ~LlmdPredictorServer();
  // Binds and serves (503 until SetBackend); returns the bound port.
  absl::StatusOr<int> Start();
  // Once plugins are loaded: builds the pod model, or records why not
  // (returned, and shown by /status).
  absl::Status SetBackend(const Backend& backend);
  void Stop();

 private:
  const LlmdPredictorOptions options_;
  const std::string listen_;
  const int64_t max_body_bytes_;
  const double read_timeout_seconds_;
  std::unique_ptr<LlmdPredictor> handler_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace ridgeline::service

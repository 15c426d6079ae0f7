#include "llmd_predictor.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "http_server.h"
#include "nlohmann/json.hpp"

namespace ridgeline::service {
namespace {

using nlohmann::json;

constexpr char kModelType[] = "ridgeline-roofline";
// The correction is a median of measured / predicted: the corrected
// prediction is the median latency (quantile 0.5), not llm-d's p90.
constexpr char kObjectiveType[] = "quantile";
constexpr double kQuantile = 0.5;
// FastAPI's 422 lists every error; a hostile 10,000-entry body would make
// that list larger than the body, so it stops here.
constexpr size_t kMaxErrorsListed = 100;

std::string NowIso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          now.time_since_epoch())
                          .count() %
                      1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
  return buf;
}

HttpResponse JsonResponse(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

HttpResponse Detail(int status, const std::string& detail) {
  return JsonResponse(status, json{{"detail", detail}});
}

// FastAPI / pydantic v2 validation errors: {"type", "loc", "msg"}.
class Errors {
 public:
  void Add(const json& loc, const char* type, std::string msg) {
    ++count_;
    if (list_.size() < kMaxErrorsListed) {
      list_.push_back(
          json{{"type", type}, {"loc", loc}, {"msg", std::move(msg)}});
    }
  }
  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }
  HttpResponse Response() const {
    json body{{"detail", list_}};
    if (count_ > list_.size())
      body["errors_not_listed"] = count_ - list_.size();
    return JsonResponse(422, body);
  }

 private:
  json list_ = json::array();
  size_t count_ = 0;
};

json Loc(const json& prefix, const char* field) {
  json loc = prefix;
  loc.push_back(field);
  return loc;
}

// A float field: a JSON number (not a bool), finite, in [lo, hi].
std::optional<double> Float(const json& obj, const char* field,
                            const json& prefix, double lo, double hi,
                            bool required, Errors* errors) {
  auto it = obj.find(field);
  if (it == obj.end() || (!required && it->is_null())) {
    if (required) errors->Add(Loc(prefix, field), "missing", "Field required");
    return std::nullopt;
  }
  if (!it->is_number()) {
    errors->Add(Loc(prefix, field), "float_type",
                "Input should be a valid number");
    return std::nullopt;
  }
  const double x = it->get<double>();
  if (!std::isfinite(x)) {
    errors->Add(Loc(prefix, field), "finite_number",
                "Input should be a finite number");
    return std::nullopt;
  }
  if (x < lo) {
    errors->Add(Loc(prefix, field), "greater_than_equal",
                absl::StrCat("Input should be greater than or equal to ", lo));
    return std::nullopt;
  }
  if (x > hi) {
    errors->Add(Loc(prefix, field), "less_than_equal",
                absl::StrCat("Input should be less than or equal to ", hi));
    return std::nullopt;
  }
  return x;
}

// An int field >= 0: a JSON integer, or a float with no fraction (pydantic
// accepts 5.0), below 2^53.
std::optional<int64_t> Count(const json& obj, const char* field,
                             const json& prefix, bool required,
                             Errors* errors) {
  auto it = obj.find(field);
  if (it == obj.end() || (!required && it->is_null())) {
    if (required) errors->Add(Loc(prefix, field), "missing", "Field required");
    return std::nullopt;
  }
  double x = 0;
  if (it->is_number_unsigned()) {
    x = static_cast<double>(it->get<uint64_t>());
  } else if (it->is_number_integer()) {
    x = static_cast<double>(it->get<int64_t>());
  } else if (it->is_number_float()) {
    x = it->get<double>();
    if (!std::isfinite(x) || x != std::floor(x)) {
      errors->Add(Loc(prefix, field), "int_from_float",
                  "Input should be a valid integer, got a number with a "
                  "fractional part");
      return std::nullopt;
    }
  } else {
    errors->Add(Loc(prefix, field), "int_type",
                "Input should be a valid integer");
    return std::nullopt;
  }
  if (x < 0) {
    errors->Add(Loc(prefix, field), "greater_than_equal",
                "Input should be greater than or equal to 0");
    return std::nullopt;
  }
  if (x > 9007199254740992.0) {  // 2^53: exact in a double
    errors->Add(Loc(prefix, field), "less_than_equal",
                "Input should be less than or equal to 9007199254740992");
    return std::nullopt;
  }
  return static_cast<int64_t>(x);
}

struct Features {
  serving::PodState state;
  std::string pod_type;
  double actual_ttft_ms = 0;  // training entries only
  double actual_tpot_ms = 0;
};

// One PredictionRequest (training: TrainingEntry) at `prefix`.
std::optional<Features> ReadFeatures(const json& obj, const json& prefix,
                                     bool training, Errors* errors) {
  if (!obj.is_object()) {
    errors->Add(prefix, "model_attributes_type",
                "Input should be a valid dictionary or object to extract "
                "fields from");
    return std::nullopt;
  }
  const size_t before = errors->count();
  Errors& local = *errors;
  Features f;
  auto kv = Float(obj, "kv_cache_percentage", prefix, 0, 1, true, &local);
  auto input = Count(obj, "input_token_length", prefix, true, &local);
  auto waiting = Count(obj, "num_request_waiting", prefix, true, &local);
  auto running = Count(obj, "num_request_running", prefix, true, &local);
  std::optional<double> ttft, tpot;
  if (training) {
    ttft = Float(obj, "actual_ttft_ms", prefix, 0,
                 std::numeric_limits<double>::max(), true, &local);
    tpot = Float(obj, "actual_tpot_ms", prefix, 0,
                 std::numeric_limits<double>::max(), true, &local);
  }
  auto generated = Count(obj, "num_tokens_generated", prefix, true, &local);
  auto prefix_score =
      Float(obj, "prefix_cache_score", prefix, 0, 1, true, &local);
  if (auto it = obj.find("pod_type"); it != obj.end() && !it->is_null()) {
    if (!it->is_string()) {
      local.Add(Loc(prefix, "pod_type"), "string_type",
                "Input should be a valid string");
    } else {
      f.pod_type = it->get<std::string>();
    }
  }
  for (const char* optional :
       {"prefill_tokens_in_flight", "decode_tokens_in_flight",
        "encoder_matched_size", "encoder_input_size"}) {
    Count(obj, optional, prefix, false, &local);
  }
  if (local.count() != before) return std::nullopt;
  f.state.kv_cache_fraction = *kv;
  f.state.input_tokens = *input;
  f.state.waiting = *waiting;
  f.state.running = *running;
  f.state.tokens_generated = *generated;
  f.state.prefix_cache_score = *prefix_score;
  if (training) {
    f.actual_ttft_ms = *ttft;
    f.actual_tpot_ms = *tpot;
  }
  return f;
}

}  // namespace

LlmdPredictor::LlmdPredictor(LlmdPredictorOptions options)
    : options_(std::move(options)) {}

void LlmdPredictor::SetModel(Backend::PodModel model) {
  if (ready_.load()) return;
  model_ = std::move(model);
  loaded_at_ = NowIso8601();
  ready_.store(model_.model != nullptr);
}

void LlmdPredictor::SetError(const absl::Status& why) {
  std::lock_guard<std::mutex> lock(error_mu_);
  error_ = std::string(why.message());
}

bool LlmdPredictor::Quick(const HttpRequest& req) const {
  return req.method != "POST";
}

HttpResponse LlmdPredictor::Refuse(int http_status,
                                   const absl::Status& why) const {
  return Detail(http_status, std::string(why.message()));
}

HttpResponse LlmdPredictor::Handle(const HttpRequest& req) const {
  const std::string path(req.Path());
  struct Route {
    const char* method;
    const char* path;
  };
  static constexpr Route kRoutes[] = {
      {"POST", "/predict"},
      {"POST", "/predict/bulk"},
      {"POST", "/predict/bulk/strict"},
      {"POST", "/add_training_data_bulk"},
      {"GET", "/healthz"},
      {"GET", "/readyz"},
      {"GET", "/status"},
  };
  bool path_known = false;
  for (const Route& r : kRoutes) {
    if (path != r.path) continue;
    path_known = true;
    if (req.method != r.method &&
        !(req.method == "HEAD" && std::string(r.method) == "GET")) {
      continue;
    }
    if (path == "/healthz") {
      return JsonResponse(
          200, json{{"status", "ok"},
                    {"service", "ridgeline-llmd-latency-predictor"}});
    }
    if (path == "/readyz") return Ready();
    if (path == "/status") return Status();
    if (!ready_.load()) return Detail(503, "Models not ready");
    if (path == "/predict") return Predict(req.body);
    if (path == "/predict/bulk") return PredictBulk(req.body, false);
    if (path == "/predict/bulk/strict") return PredictBulk(req.body, true);
    return AddTraining(req.body);
  }
  return path_known ? Detail(405, "Method Not Allowed")
                    : Detail(404, "Not Found");
}

HttpResponse LlmdPredictor::Ready() const {
  if (!ready_.load()) {
    std::lock_guard<std::mutex> lock(error_mu_);
    return Detail(503, error_.empty() ? std::string("Models are not ready")
                                      : "Models are not ready: " + error_);
  }
  return JsonResponse(200, json{{"status", "ready"},
                                {"model_type", kModelType},
                                {"objective_type", kObjectiveType},
                                {"quantile", kQuantile}});
}

namespace {

std::optional<json> ParseBody(const std::string& body, Errors* errors) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    errors->Add(json::array({"body"}), "json_invalid", "JSON decode error");
    return std::nullopt;
  }
  return doc;
}

// The bulk routes' envelope: an object with an array under `key`; else
// nullopt with pydantic's error for the first thing wrong, in its order.
std::optional<json> ListBody(const std::string& body, const char* key,
                             Errors* errors) {
  std::optional<json> doc = ParseBody(body, errors);
  if (!doc) return std::nullopt;
  if (!doc->is_object()) {
    errors->Add(json::array({"body"}), "model_attributes_type",
                "Input should be a valid dictionary or object to extract "
                "fields from");
    return std::nullopt;
  }
  auto it = doc->find(key);
  if (it == doc->end()) {
    errors->Add(json::array({"body", key}), "missing", "Field required");
    return std::nullopt;
  }
  if (!it->is_array()) {
    errors->Add(json::array({"body", key}), "list_type",
                "Input should be a valid list");
    return std::nullopt;
  }
  return std::move(*it);
}

// A prediction entry of a response.
json PredictionJson(double ttft_ms, double tpot_ms, const std::string& now,
                    const std::string& loaded) {
  return json{{"ttft_ms", ttft_ms},
              {"tpot_ms", tpot_ms},
              {"predicted_at", now},
              {"model_type", kModelType},
              {"objective_type", kObjectiveType},
              {"quantile", kQuantile},
              {"last_model_load", loaded}};
}

// The corrected latency in ms (never negative, as llm-d clips at 0).
std::pair<double, double> Corrected(const serving::PodLatency& raw,
                                    const serving::LatencyCorrection::Fit& f) {
  return {std::max(0.0, raw.ttft_seconds * 1e3 * f.ttft_factor),
          std::max(0.0, raw.tpot_seconds * 1e3 * f.tpot_factor)};
}

}  // namespace

HttpResponse LlmdPredictor::Predict(const std::string& body) const {
  Errors errors;
  std::optional<json> doc = ParseBody(body, &errors);
  if (!doc) return errors.Response();
  std::optional<Features> f =
      ReadFeatures(*doc, json::array({"body"}), false, &errors);
  if (!f) return errors.Response();
  absl::StatusOr<serving::PodLatency> raw = model_.model->Predict(f->state);
  if (!raw.ok()) return Detail(400, std::string(raw.status().message()));
  auto [ttft, tpot] = Corrected(*raw, correction_.FitOf(f->pod_type));
  return JsonResponse(200,
                      PredictionJson(ttft, tpot, NowIso8601(), loaded_at_));
}

HttpResponse LlmdPredictor::PredictBulk(const std::string& body,
                                        bool strict) const {
  const auto start = std::chrono::steady_clock::now();
  Errors errors;
  std::optional<json> list = ListBody(body, "requests", &errors);
  if (!list) return errors.Response();
  const json* reqs = &*list;
  if (reqs->empty() || reqs->size() > kMaxBulkRequests) {
    errors.Add(
        json::array({"body", "requests"}),
        reqs->empty() ? "too_short" : "too_long",
        reqs->empty()
            ? "List should have at least 1 item after validation, not 0"
            : absl::StrCat("List should have at most ", kMaxBulkRequests,
                           " items after validation, not ", reqs->size()));
    return errors.Response();
  }
  std::vector<Features> features;
  features.reserve(reqs->size());
  for (size_t i = 0; i < reqs->size(); ++i) {
    json prefix = json::array({"body", "requests", i});
    std::optional<Features> f =
        ReadFeatures((*reqs)[i], prefix, false, &errors);
    if (f) features.push_back(std::move(*f));
  }
  if (!errors.empty()) return errors.Response();

  std::vector<serving::PodState> states;
  states.reserve(features.size());
  for (const Features& f : features) states.push_back(f.state);
  const std::string now = NowIso8601();
  json predictions = json::array();
  json failures = json::array();
  size_t ok = 0;
  std::map<std::string, serving::LatencyCorrection::Fit> fits;
  auto fit_of = [&](const std::string& key) {
    auto it = fits.find(key);
    if (it == fits.end()) it = fits.emplace(key, correction_.FitOf(key)).first;
    return it->second;
  };
  std::vector<serving::PodLatency> raw;
  absl::Status all = model_.model->PredictMany(states, &raw);
  for (size_t i = 0; i < features.size(); ++i) {
    absl::StatusOr<serving::PodLatency> one =
        all.ok() ? absl::StatusOr<serving::PodLatency>(raw[i])
                 : model_.model->Predict(states[i]);
    if (!one.ok()) {
      if (strict) return Detail(500, "Bulk prediction failed");
      predictions.push_back(nullptr);
      failures.push_back(json{{"index", i},
                              {"error", std::string(one.status().message())},
                              {"request", (*reqs)[i]}});
      continue;
    }
    auto [ttft, tpot] = Corrected(*one, fit_of(features[i].pod_type));
    predictions.push_back(PredictionJson(ttft, tpot, now, loaded_at_));
    ++ok;
  }
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  json out{{"predictions", std::move(predictions)},
           {"total_requests", features.size()},
           {"successful_predictions", ok},
           {"failed_predictions", features.size() - ok},
           {"processing_time_ms", ms}};
  if (!strict) out["errors"] = std::move(failures);
  return JsonResponse(200, out);
}

HttpResponse LlmdPredictor::AddTraining(const std::string& body) const {
  Errors errors;
  std::optional<json> list = ListBody(body, "entries", &errors);
  if (!list) return errors.Response();
  const json* entries = &*list;
  std::vector<Features> features;
  features.reserve(entries->size());
  for (size_t i = 0; i < entries->size(); ++i) {
    json prefix = json::array({"body", "entries", i});
    std::optional<Features> f =
        ReadFeatures((*entries)[i], prefix, true, &errors);
    if (f) features.push_back(std::move(*f));
  }
  if (!errors.empty()) return errors.Response();
  // Each sample's ratio is against the uncorrected model at the state the
  // request saw (the correction must not fit itself).
  std::vector<serving::PodState> states;
  states.reserve(features.size());
  for (const Features& f : features) states.push_back(f.state);
  std::vector<serving::PodLatency> raw;
  if (absl::Status st = model_.model->PredictMany(states, &raw); !st.ok()) {
    return Detail(400, std::string(st.message()));
  }
  for (size_t i = 0; i < features.size(); ++i) {
    correction_.Add(features[i].pod_type, features[i].actual_ttft_ms,
                    raw[i].ttft_seconds * 1e3, features[i].actual_tpot_ms,
                    raw[i].tpot_seconds * 1e3);
  }
  return JsonResponse(
      202, json{{"message", absl::StrCat("Accepted ", features.size(),
                                         " training samples.")}});
}

HttpResponse LlmdPredictor::Status() const {
  const bool ready = ready_.load();
  json pods = json::object();
  for (const auto& [key, f] : correction_.Fits()) {
    pods[key] = json{{"ttft_factor", f.ttft_factor},
                     {"tpot_factor", f.tpot_factor},
                     {"ttft_samples_in_window", f.ttft_samples},
                     {"tpot_samples_in_window", f.tpot_samples},
                     {"ttft_samples_seen", f.ttft_seen},
                     {"tpot_samples_seen", f.tpot_seen}};
  }
  std::string error;
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    error = error_;
  }
  json ridgeline{
      {"error", error},
      {"model", options_.model_id},
      {"hardware", options_.hardware_id},
      {"tensor_parallel", options_.tensor_parallel},
      {"framework", options_.framework},
      {"calibration", ready ? model_.calibration : ""},
      {"calibration_warning", ready ? model_.warning : ""},
      {"kv_capacity_tokens", ready ? model_.model->kv_capacity_tokens() : 0},
      {"max_num_batched_tokens",
       ready ? model_.model->max_num_batched_tokens() : 0},
      {"max_num_seqs", ready ? model_.model->max_num_seqs() : 0},
      {"correction",
       json{{"method",
             "per pod_type: median of measured / predicted over the last "
             "1000 samples of each of TTFT and TPOT (samples with a value "
             "<= 0 carry none); factor 1 until 10 samples"},
            {"pods", pods},
            {"dropped_samples", correction_.dropped()}}},
  };
  return JsonResponse(
      200, json{{"is_ready", ready},
                {"model_type", kModelType},
                {"objective_type", kObjectiveType},
                {"quantile", kQuantile},
                {"last_model_load", ready ? json(loaded_at_) : json(nullptr)},
                {"training_server_url", ""},
                {"models_exist", json{{"ridgeline_pod_model", ready}}},
                {"ensemble_active", false},
                {"ridgeline", ridgeline}});
}

LlmdPredictorServer::LlmdPredictorServer(LlmdPredictorOptions options,
                                         std::string listen,
                                         int64_t max_body_bytes,
                                         double read_timeout_seconds)
    : options_(std::move(options)),
      listen_(std::move(listen)),
      max_body_bytes_(max_body_bytes),
      read_timeout_seconds_(read_timeout_seconds) {}

LlmdPredictorServer::~LlmdPredictorServer() { Stop(); }

absl::StatusOr<int> LlmdPredictorServer::Start() {
  handler_ = std::make_unique<LlmdPredictor>(options_);
  HttpServerOptions server;
  const size_t colon = listen_.rfind(':');
  server.host = listen_.substr(0, colon);
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listen_.substr(colon + 1), &server.port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--llmd-predictor-listen: expected HOST:PORT, got ", listen_));
  }
  if (server.host.size() >= 2 && server.host.front() == '[' &&
      server.host.back() == ']') {
    server.host = server.host.substr(1, server.host.size() - 2);
  }
  server.limits.max_body_bytes = max_body_bytes_;
  server.read_timeout_seconds = read_timeout_seconds_;
  // Bulk predictions are CPU work on a small pool; the gateway sends a few
  // calls at a time, each up to 10,000 predictions.
  server.threads = 2;
  server.max_queued = 64;
  server_ = std::make_unique<HttpServer>(std::move(server), *handler_);
  return server_->Start();
}

absl::Status LlmdPredictorServer::SetBackend(const Backend& backend) {
  absl::StatusOr<Backend::PodModel> model =
      backend.PodLatencyModelFor(options_.model_id, options_.hardware_id,
                                 options_.tensor_parallel, options_.framework);
  if (!model.ok()) {
    handler_->SetError(model.status());
    return model.status();
  }
  handler_->SetModel(*std::move(model));
  return absl::OkStatus();
}

void LlmdPredictorServer::Stop() {
  if (server_ != nullptr) server_->Stop();
}

}  // namespace ridgeline::service

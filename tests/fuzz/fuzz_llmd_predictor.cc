// Fuzz target: the llm-d latency-predictor API (service/src/llmd_predictor.h)
// on arbitrary bodies, against a pod model built from the real plugins and
// profiles as the server builds it. The first byte picks the route (the
// four POSTs, the three GETs); the rest is the body. Every answer must be
// one of the API's statuses with a JSON body.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_backend.h"
#include "llmd_predictor.h"
#include "nlohmann/json.hpp"

namespace {

using ridgeline::service::HttpRequest;
using ridgeline::service::HttpResponse;
using ridgeline::service::LlmdPredictor;

const LlmdPredictor& Predictor() {
  static const LlmdPredictor* predictor = [] {
    auto* p =
        new LlmdPredictor({"llama-3.1-8b", "nvidia-h100-sxm-80gb", 1, "vllm"});
    auto model = ridgeline::fuzz::FuzzBackend().PodLatencyModelFor(
        "llama-3.1-8b", "nvidia-h100-sxm-80gb", 1, "vllm");
    if (!model.ok()) {
      std::fprintf(stderr, "fuzz: no pod model: %s\n",
                   std::string(model.status().message()).c_str());
      std::abort();
    }
    p->SetModel(*std::move(model));
    return p;
  }();
  return *predictor;
}

constexpr const char* kRoutes[][2] = {
    {"POST", "/predict"},
    {"POST", "/predict/bulk"},
    {"POST", "/predict/bulk/strict"},
    {"POST", "/add_training_data_bulk"},
    {"GET", "/status"},
    {"GET", "/readyz"},
    {"GET", "/healthz"},
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)Predictor();  // load plugins and build the model outside the timer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  HttpRequest req;
  const auto& route = kRoutes[data[0] % std::size(kRoutes)];
  req.method = route[0];
  req.target = route[1];
  req.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  const HttpResponse r = Predictor().Handle(req);
  const int ok[] = {200, 202, 400, 422, 500, 503};
  bool known = false;
  for (int s : ok) known = known || r.status == s;
  // 500 is the strict bulk's answer to a model error: none should happen
  // for a validated request.
  if (!known || r.status == 500 ||
      nlohmann::json::parse(r.body, nullptr, false).is_discarded()) {
    std::fprintf(stderr, "fuzz: %s %s answered %d: %.200s\n", route[0],
                 route[1], r.status, r.body.c_str());
    std::abort();
  }
  return 0;
}

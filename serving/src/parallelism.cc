#include "ridgeline/serving/parallelism.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::serving {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view range,
                 int64_t got) {
  return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                                   field, ": must be ", range, "; got ", got)),
                               std::string_view(field.data(), field.size()));
}

// "1, 2, 4, 5, 8, ..." : the divisors of n up to 256.
std::string Divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t k = 1; k <= n && k <= 256; ++k) {
    if (n % k == 0) d.push_back(k);
  }
  return absl::StrJoin(d, ", ");
}

}  // namespace

absl::Status CheckPipelineStages(const engine::ModelConfig& model,
                                 int64_t stages, absl::string_view field) {
  const int64_t layers = model.num_layers;
  if (stages >= 1 && stages <= 256 && layers > 0 && layers % stages == 0) {
    return absl::OkStatus();
  }
  return Bad(field,
             absl::StrCat("in [1, 256] and divide the model's ", layers,
                          " layers (one of ", Divisors(layers), ")"),
             stages);
}

absl::Status CheckExpertParallel(const engine::ModelConfig& model,
                                 int64_t expert_parallel,
                                 absl::string_view field) {
  if (!model.moe.has_value()) {
    if (expert_parallel == 1) return absl::OkStatus();
    return Bad(field,
               absl::StrCat("1 for a dense model (\"", model.id,
                            "\" has no routed experts)"),
               expert_parallel);
  }
  const int64_t experts = model.moe->num_routed_experts;
  if (expert_parallel >= 1 && expert_parallel <= 256 && experts > 0 &&
      experts % expert_parallel == 0) {
    return absl::OkStatus();
  }
  return Bad(field,
             absl::StrCat("in [1, 256] and divide the model's ", experts,
                          " routed experts (one of ", Divisors(experts), ")"),
             expert_parallel);
}

engine::Parallelism ReplicaParallelism(int64_t tensor_parallel,
                                       int64_t pipeline_parallel,
                                       int64_t expert_parallel) {
  engine::Parallelism p;
  p.pipeline_parallel = pipeline_parallel;
  if (expert_parallel > 1) {
    p.tensor_parallel = 1;
    p.expert_parallel = expert_parallel;
    p.attention_data_parallel = true;
  } else {
    p.tensor_parallel = tensor_parallel;
  }
  return p;
}

}  // namespace ridgeline::serving

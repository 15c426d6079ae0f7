// The built-in model catalog. Every number is copied from the config.json
// of the Hugging Face repository named in `source` (and in the comment).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::engine {
namespace {

// Fields shared by the dense decoder-only models; everything else defaults
// to the ModelConfig defaults (RMSNorm, gated FFN, untied, no bias).
struct Dense {
  const char* id;
  const char* display_name;
  const char* architecture;
  const char* source;
  int64_t vocab;
  int64_t hidden;
  int64_t intermediate;
  int64_t layers;
  int64_t heads;
  int64_t kv_heads;
  int64_t head_dim;
  int64_t max_context;
};

ModelConfig Make(const Dense& d) {
  ModelConfig m;
  m.id = d.id;
  m.display_name = d.display_name;
  m.architecture = d.architecture;
  m.source = d.source;
  m.vocab_size = d.vocab;
  m.hidden_size = d.hidden;
  m.intermediate_size = d.intermediate;
  m.num_layers = d.layers;
  m.num_attention_heads = d.heads;
  m.num_kv_heads = d.kv_heads;
  m.head_dim = d.head_dim;
  m.max_context = d.max_context;
  return m;
}

std::vector<ModelConfig> BuildCatalog() {
  std::vector<ModelConfig> c;
  // meta-llama/Llama-2-7b-hf config.json: vocab 32000, hidden 4096,
  // intermediate 11008, 32 layers, 32 heads, 32 kv heads, 4096 positions.
  c.push_back(Make({"llama-2-7b", "Llama-2-7B", "LlamaForCausalLM",
                    "meta-llama/Llama-2-7b-hf", 32000, 4096, 11008, 32, 32,
                    32, 128, 4096}));
  // meta-llama/Meta-Llama-3-8B config.json: vocab 128256, hidden 4096,
  // intermediate 14336, 32 layers, 32 heads, 8 kv heads, 8192 positions.
  c.push_back(Make({"llama-3-8b", "Llama-3-8B", "LlamaForCausalLM",
                    "meta-llama/Meta-Llama-3-8B", 128256, 4096, 14336, 32, 32,
                    8, 128, 8192}));
  std::sort(c.begin(), c.end(),
            [](const ModelConfig& a, const ModelConfig& b) {
              return a.id < b.id;
            });
  return c;
}

}  // namespace

const std::vector<ModelConfig>& BuiltinModels() {
  static const std::vector<ModelConfig>* const kModels =
      new std::vector<ModelConfig>(BuildCatalog());
  return *kModels;
}

absl::StatusOr<ModelConfig> FindModel(std::string_view id) {
  const std::string wanted =
      absl::AsciiStrToLower(absl::string_view(id.data(), id.size()));
  std::vector<std::string> ids;
  for (const ModelConfig& m : BuiltinModels()) {
    // The HF repository id is accepted too ("meta-llama/Llama-2-7b-hf").
    if (m.id == wanted || absl::AsciiStrToLower(m.source) == wanted) return m;
    ids.push_back(m.id);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown model \"", wanted, "\"; closest: ",
                   absl::StrJoin(ClosestNames(wanted, ids), ", ")));
}

}  // namespace ridgeline::engine

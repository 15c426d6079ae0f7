#include "ridgeline/serving/capacity.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/engine/step.h"

namespace ridgeline::serving {
namespace {

constexpr int kWeights = static_cast<int>(engine::OperandClass::kWeights);
constexpr int kKv = static_cast<int>(engine::OperandClass::kKvCache);
constexpr int kAct = static_cast<int>(engine::OperandClass::kActivations);

absl::Status Range(const char* field, double lo, double hi, double v,
                   bool lo_open) {
  if ((lo_open ? v > lo : v >= lo) && v <= hi) return absl::OkStatus();
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(
          "serving.", field, ": must be in ", lo_open ? "(" : "[", lo, ", ",
          hi, "]; got ", v)),
      absl::StrCat("serving.", field));
}

// Device memory: the tiers a runtime allocates its KV cache in. On-chip
// SRAM/caches, host memory over a link and flash are not.
bool IsDeviceMemory(engine::TierKind k) {
  using engine::TierKind;
  return k == TierKind::kHbm || k == TierKind::kGddr ||
         k == TierKind::kLpddr || k == TierKind::kDdr ||
         k == TierKind::kUnified;
}

std::string Gb(double bytes) { return absl::StrFormat("%.1f GB", bytes / 1e9); }

}  // namespace

absl::Status ValidateServingConfig(const ServingConfig& c) {
  RETURN_IF_ERROR(Range("memory_fraction", 0, 1, c.memory_fraction, true));
  RETURN_IF_ERROR(Range("max_num_seqs", 1, 65536,
                        static_cast<double>(c.max_num_seqs), false));
  RETURN_IF_ERROR(Range("max_num_batched_tokens", 1, 10'000'000,
                        static_cast<double>(c.max_num_batched_tokens), false));
  RETURN_IF_ERROR(
      Range("block_size", 1, 1024, static_cast<double>(c.block_size), false));
  if (c.preemption == Preemption::kSwap && c.kv_offload == KvOffload::kOff) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(
            "serving.preemption: swap moves a preempted request's KV to the "
            "first offload tier; set serving.kv_offload to host or all "
            "(got off)"),
        "serving.preemption");
  }
  return absl::OkStatus();
}

absl::StatusOr<KvCapacity> ComputeKvCapacity(const engine::Scenario& scenario,
                                             const ServingConfig& config,
                                             int64_t prompt_tokens,
                                             int64_t generated_tokens) {
  RETURN_IF_ERROR(ValidateServingConfig(config));
  KvCapacity kv;
  engine::Scenario s = scenario;
  s.options.suggestions = false;
  // A serving micro-batch is one step of the budget (the engine's default
  // splits a prefill's activations over one micro-batch per stage).
  s.parallelism.pipeline_micro_batches = 1;
  kv.pipeline_stages = s.parallelism.pipeline_parallel;
  kv.attention_ranks = s.parallelism.attention_data_parallel
                           ? s.parallelism.expert_parallel
                           : 1;
  // One sequence at the full length: weights and its KV (the engine keeps
  // prompt + generated - 1 tokens: the last token is never fed back).
  s.workload = {1, prompt_tokens, std::max<int64_t>(generated_tokens, 1)};
  ASSIGN_OR_RETURN(engine::StepEvaluator seq, engine::StepEvaluator::Create(s));
  kv.weights_bytes = seq.memory().required_bytes[kWeights];
  const int64_t stored = prompt_tokens + std::max<int64_t>(generated_tokens, 1) - 1;
  // The KV that grows with the context, and the recurrent state that does
  // not (engine MemoryFootprint::state_bytes).
  kv.state_bytes_per_sequence = seq.memory().state_bytes;
  double kv_bytes = seq.memory().required_bytes[kKv];
  if (const engine::MemoryFootprint* draft = seq.draft_memory()) {
    // A draft (model or head) keeps its own KV of the same tokens.
    kv.draft_weights_bytes = seq.draft_weights_bytes();
    kv_bytes += draft->required_bytes[kKv];
    kv.state_bytes_per_sequence += draft->state_bytes;
  }
  kv.kv_bytes_per_token =
      (kv_bytes - kv.state_bytes_per_sequence) / static_cast<double>(stored);
  // Activations: the largest step the budget admits (one prefill chunk).
  s.workload = {1, config.max_num_batched_tokens, 1};
  ASSIGN_OR_RETURN(engine::StepEvaluator chunk,
                   engine::StepEvaluator::Create(s));
  kv.activations_bytes = chunk.memory().required_bytes[kAct];

  // The memory the runtime sizes its pool from. With inline ECC on, as the
  // part ships, the driver reports (1 - share) of it (nvidia-smi: 46068 of
  // 49152 MiB on an L40S); the bound keeps the physical figure (ECC can be
  // turned off).
  bool net_of_ecc = false;
  for (const engine::MemoryTier& t : s.hardware.tiers) {
    if (!IsDeviceMemory(t.kind)) continue;
    const double ecc = s.options.pure_roofline ? 0 : t.inline_ecc_share;
    kv.device_memory_bytes += t.capacity_bytes * (1 - ecc);
    net_of_ecc = net_of_ecc || ecc > 0;
  }
  kv.usable_bytes = config.memory_fraction * kv.device_memory_bytes;
  const double free_bytes = kv.usable_bytes - kv.weights_bytes -
                            kv.draft_weights_bytes - kv.activations_bytes;
  const int64_t blocks = config.block_size;
  kv.tokens_per_sequence = (stored + blocks - 1) / blocks * blocks;
  int64_t by_kv = 0;
  const double state = kv.state_bytes_per_sequence;
  if (free_bytes > 0 && state > 0) {
    // Hybrid: a sequence needs its state plus its KV blocks; the state of
    // the sequences that fit is set aside, the rest is KV blocks.
    const double per_sequence =
        kv.kv_bytes_per_token * static_cast<double>(kv.tokens_per_sequence) +
        state;
    by_kv = static_cast<int64_t>(std::floor(free_bytes / per_sequence));
    const int64_t seqs = std::min(by_kv, config.max_num_seqs);
    const double for_kv = free_bytes - state * static_cast<double>(seqs);
    kv.kv_capacity_tokens =
        kv.kv_bytes_per_token > 0
            ? static_cast<int64_t>(
                  std::floor(for_kv / (kv.kv_bytes_per_token * blocks))) *
                  blocks
            : seqs * kv.tokens_per_sequence;  // no KV at all (pure Mamba)
  } else if (free_bytes > 0 && kv.kv_bytes_per_token > 0) {
    const auto whole_blocks = static_cast<int64_t>(
        std::floor(free_bytes / (kv.kv_bytes_per_token * blocks)));
    kv.kv_capacity_tokens = whole_blocks * blocks;
    by_kv = kv.kv_capacity_tokens / kv.tokens_per_sequence;
  }
  kv.max_concurrency = std::min(by_kv, config.max_num_seqs);
  kv.offload_tiers = OffloadTiers(s.hardware, config.kv_offload,
                                  kv.kv_bytes_per_token, blocks);
  kv.limited_by = by_kv < config.max_num_seqs ? "kv_capacity" : "max_num_seqs";
  kv.fits = kv.max_concurrency >= 1;
  if (!kv.fits) {
    kv.not_fitting = absl::StrCat(
        "does not fit: weights ", Gb(kv.weights_bytes),
        kv.draft_weights_bytes > 0 ? absl::StrCat(" + the draft's weights ",
                                                  Gb(kv.draft_weights_bytes))
                                   : "",
        " + activations ", Gb(kv.activations_bytes), " + one sequence's KV ",
        Gb(kv.kv_bytes_per_token * static_cast<double>(kv.tokens_per_sequence) +
           state),
        " per device exceed ", Gb(kv.usable_bytes), " (memory fraction ",
        config.memory_fraction, " of ", Gb(kv.device_memory_bytes),
        net_of_ecc ? ", net of inline ECC's check bits" : "", ")");
  }
  return kv;
}

ServingLimits LimitsOf(const ServingConfig& config, const KvCapacity& kv) {
  ServingLimits l;
  l.max_num_seqs = config.max_num_seqs;
  l.max_num_batched_tokens = config.max_num_batched_tokens;
  l.kv_capacity_tokens = kv.kv_capacity_tokens;
  l.block_size = config.block_size;
  l.pipeline_stages = kv.pipeline_stages;
  l.attention_ranks = kv.attention_ranks;
  l.prefix_caching = config.prefix_caching;
  l.offload_tiers = kv.offload_tiers;
  l.preemption = config.preemption;
  return l;
}

}  // namespace ridgeline::serving

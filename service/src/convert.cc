#include "ridgeline/service/convert.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace ridgeline::service {
namespace {

using engine::MathType;

int Index(MathType t) { return static_cast<int>(t); }

// The engine's names are static string_views: set them without a temporary
// std::string (this runs ~20 times per op on the Analyze hot path).
#define RL_SET_NAME(msg, field, view_expr)    \
  do {                                        \
    const std::string_view v_ = (view_expr);  \
    (msg)->set_##field(v_.data(), v_.size()); \
  } while (0)

}  // namespace

void ToProto(const engine::PerMathType& in, v1::PerMathType* out) {
  out->Clear();
  auto get = [&](MathType t) { return in[Index(t)]; };
  if (auto v = get(MathType::kFp64)) out->set_fp64(*v);
  if (auto v = get(MathType::kFp32)) out->set_fp32(*v);
  if (auto v = get(MathType::kTf32)) out->set_tf32(*v);
  if (auto v = get(MathType::kBf16)) out->set_bf16(*v);
  if (auto v = get(MathType::kFp16)) out->set_fp16(*v);
  if (auto v = get(MathType::kFp8)) out->set_fp8(*v);
  if (auto v = get(MathType::kFp4)) out->set_fp4(*v);
  if (auto v = get(MathType::kInt8)) out->set_int8(*v);
  if (auto v = get(MathType::kInt4)) out->set_int4(*v);
  if (auto v = get(MathType::kFp16Acc16)) out->set_fp16_acc16(*v);
}

void ToProto(const engine::Hardware& in, v1::Hardware* out) {
  out->Clear();
  out->set_id(in.id);
  out->set_display_name(in.display_name);
  out->set_vendor(in.vendor);
  out->set_family(in.family);
  out->set_plugin(in.plugin);
  for (const auto& s : in.sources) out->add_sources(s);
  ToProto(in.peak_ops_per_second, out->mutable_peak_ops_per_second());
  ToProto(in.energy_joules_per_op, out->mutable_energy_joules_per_op());
  out->set_kernel_launch_seconds(in.kernel_launch_seconds);
  for (const auto& t : in.tiers) {
    v1::MemoryTier* pt = out->add_tiers();
    pt->set_name(t.name);
    pt->set_kind(std::string(engine::TierKindName(t.kind)));
    pt->set_capacity_bytes(t.capacity_bytes);
    pt->set_read_bandwidth_bytes_per_second(t.read_bandwidth_bytes_per_second);
    pt->set_write_bandwidth_bytes_per_second(
        t.write_bandwidth_bytes_per_second);
    pt->set_latency_seconds(t.latency_seconds);
    pt->set_inline_ecc_share(t.inline_ecc_share);
    if (t.energy_joules_per_byte) {
      pt->set_energy_joules_per_byte(*t.energy_joules_per_byte);
    }
    if (t.near_memory_compute) {
      v1::NearMemoryCompute* n = pt->mutable_near_memory_compute();
      n->set_internal_bandwidth_bytes_per_second(
          t.near_memory_compute->internal_bandwidth_bytes_per_second);
      ToProto(t.near_memory_compute->peak_ops_per_second,
              n->mutable_peak_ops_per_second());
      if (t.near_memory_compute->energy_joules_per_op) {
        n->set_energy_joules_per_op(
            *t.near_memory_compute->energy_joules_per_op);
      }
    }
  }
  if (in.tdp_watts) out->set_tdp_watts(*in.tdp_watts);
  if (in.idle_watts) out->set_idle_watts(*in.idle_watts);
  if (in.price_usd) out->set_price_usd(*in.price_usd);
  if (in.embodied_kg_co2e) out->set_embodied_kg_co2e(*in.embodied_kg_co2e);
  if (in.interconnect_bytes_per_second) {
    out->set_interconnect_bytes_per_second(*in.interconnect_bytes_per_second);
  }
  if (in.scale_up_latency_seconds) {
    out->set_scale_up_latency_seconds(*in.scale_up_latency_seconds);
  }
  if (in.scale_out_bytes_per_second) {
    out->set_scale_out_bytes_per_second(*in.scale_out_bytes_per_second);
  }
  if (in.scale_out_latency_seconds) {
    out->set_scale_out_latency_seconds(*in.scale_out_latency_seconds);
  }
  if (in.devices_per_node) {
    out->set_devices_per_node(static_cast<int32_t>(*in.devices_per_node));
  }
  out->set_has_efficiency_hook(static_cast<bool>(in.efficiency_hook));
}

void ToProto(const engine::ModelConfig& in, v1::Model* out) {
  out->Clear();
  out->set_id(in.id);
  out->set_display_name(in.display_name);
  out->set_architecture(in.architecture);
  out->set_source(in.source);
  out->set_vocab_size(in.vocab_size);
  out->set_hidden_size(in.hidden_size);
  out->set_intermediate_size(in.intermediate_size);
  out->set_num_layers(in.num_layers);
  out->set_num_attention_heads(in.num_attention_heads);
  out->set_num_kv_heads(in.num_kv_heads);
  out->set_head_dim(in.head_dim);
  out->set_max_context(in.max_context);
  out->set_tie_word_embeddings(in.tie_word_embeddings);
  out->set_qkv_bias(in.qkv_bias);
  out->set_norm(in.norm == engine::NormKind::kRmsNorm ? "rms_norm"
                                                      : "layer_norm");
  out->set_ffn(in.ffn == engine::FfnKind::kGated ? "gated" : "plain");
  switch (in.sliding_layers) {
    case engine::SlidingLayers::kNone:
      out->set_sliding_layers("none");
      break;
    case engine::SlidingLayers::kAll:
      out->set_sliding_layers("all");
      break;
    case engine::SlidingLayers::kEvenLayers:
      out->set_sliding_layers("even_layers");
      break;
  }
  // Per-layer models (Nemotron NAS, Llama 4, gpt-oss) say which layers
  // slide in their own list, not in sliding_layers.
  if (std::any_of(in.layers.begin(), in.layers.end(),
                  [](const engine::LayerSpec& l) { return l.sliding; })) {
    out->set_sliding_layers("per_layer");
  }
  out->set_sliding_window(in.sliding_window);
  out->set_attention_chunk_size(in.attention_chunk_size);
  if (in.mla) {
    v1::MlaDims* m = out->mutable_mla();
    m->set_q_lora_rank(in.mla->q_lora_rank);
    m->set_kv_lora_rank(in.mla->kv_lora_rank);
    m->set_qk_nope_head_dim(in.mla->qk_nope_head_dim);
    m->set_qk_rope_head_dim(in.mla->qk_rope_head_dim);
    m->set_v_head_dim(in.mla->v_head_dim);
  }
  if (in.moe) {
    v1::MoeDims* m = out->mutable_moe();
    m->set_num_routed_experts(in.moe->num_routed_experts);
    m->set_experts_per_token(in.moe->experts_per_token);
    m->set_num_shared_experts(in.moe->num_shared_experts);
    m->set_expert_intermediate_size(in.moe->expert_intermediate_size);
    m->set_shared_expert_intermediate_size(
        in.moe->shared_expert_intermediate_size);
    m->set_first_dense_layers(in.moe->first_dense_layers);
  }
  const engine::ParameterCounts p = engine::CountParameters(in);
  v1::ParameterCounts* pp = out->mutable_parameters();
  pp->set_total(p.total);
  pp->set_active_per_token(p.active_per_token);
  pp->set_embedding(p.embedding);
  pp->set_lm_head(p.lm_head);
  out->set_kv_elements_per_token(engine::KvElementsPerToken(in));
}

void ToProto(const engine::OpResult& op, v1::OpResult* o) {
  RL_SET_NAME(o, kind, engine::OpKindName(op.kind));
  RL_SET_NAME(o, op_class, engine::OpClassName(op.op_class));
  if (!op.layer_group.empty()) RL_SET_NAME(o, layer_group, op.layer_group);
  o->set_layers(op.layers);
  RL_SET_NAME(o, math, engine::MathTypeName(op.math));
  o->set_flops(op.flops);
  for (int c = 0; c < engine::kOperandClassCount; ++c) {
    for (int t = 0; t < engine::kMaxTiers; ++t) {
      const engine::Traffic& tr = op.traffic[c][t];
      if (tr.read == 0 && tr.write == 0) continue;
      v1::TierTraffic* pt = o->add_traffic();
      RL_SET_NAME(
          pt, operand_class,
          engine::OperandClassName(static_cast<engine::OperandClass>(c)));
      pt->set_tier(t);
      pt->set_read_bytes(tr.read);
      pt->set_write_bytes(tr.write);
    }
  }
  o->set_bytes(op.bytes);
  o->set_intensity(op.intensity);
  o->set_compute_seconds(op.compute_seconds);
  o->set_memory_seconds(op.memory_seconds);
  o->set_interconnect_seconds(op.interconnect_seconds);
  o->set_overhead_seconds(op.overhead_seconds);
  o->set_seconds(op.seconds);
  RL_SET_NAME(o, bound, engine::BoundName(op.bound));
  o->set_executed_in_tier(op.executed_in_tier);
  o->set_attained_flops_per_second(op.attained_flops_per_second);
}

void ToProto(const engine::StepResult& in, v1::StepResult* out,
             v1::AnalysisView view) {
  out->Clear();
  RL_SET_NAME(out, phase, engine::PhaseName(in.phase));
  out->set_steps(in.steps);
  out->set_tokens(in.tokens);
  out->set_kv_length(in.kv_length);
  const bool with_ops = view != v1::ANALYSIS_VIEW_BASIC;
  if (with_ops) out->mutable_ops()->Reserve(static_cast<int>(in.ops.size()));
  for (const engine::OpResult& op : in.ops) {
    if (!with_ops) break;
    ToProto(op, out->add_ops());
  }
  v1::StepTotals* t = out->mutable_totals();
  t->set_flops(in.totals.flops);
  t->set_bytes(in.totals.bytes);
  t->set_compute_seconds(in.totals.compute_seconds);
  t->set_memory_seconds(in.totals.memory_seconds);
  t->set_interconnect_seconds(in.totals.interconnect_seconds);
  t->set_seconds(in.totals.seconds);
}

void ToProto(const engine::AnalysisResult& in, v1::AnalysisResult* out,
             v1::AnalysisView view) {
  out->Clear();
  out->set_model_id(in.model_id);
  out->set_hardware_id(in.hardware_id);
  RL_SET_NAME(out, matmul_math, engine::MathTypeName(in.matmul_math));
  out->set_ridge_point_flops_per_byte(in.ridge_point);
  ToProto(in.prefill, out->mutable_prefill(), view);
  ToProto(in.decode, out->mutable_decode(), view);
  ToProto(in.decode_first_step, out->mutable_decode_first_step(), view);
  ToProto(in.decode_last_step, out->mutable_decode_last_step(), view);
  out->set_ttft_seconds(in.ttft_seconds);
  out->set_tpot_mean_seconds(in.tpot_mean_seconds);
  out->set_tpot_first_seconds(in.tpot_first_seconds);
  out->set_tpot_last_seconds(in.tpot_last_seconds);
  out->set_e2e_seconds(in.e2e_seconds);
  out->set_prefill_tokens_per_second(in.prefill_tokens_per_second);
  out->set_decode_tokens_per_second_per_sequence(
      in.decode_tokens_per_second_per_sequence);
  out->set_decode_tokens_per_second_total(in.decode_tokens_per_second_total);
  out->set_devices(in.devices);
  out->set_deployment_prefill_tokens_per_second(
      in.deployment_prefill_tokens_per_second);
  out->set_deployment_decode_tokens_per_second(
      in.deployment_decode_tokens_per_second);
  out->set_pipeline_bubble_fraction(in.pipeline_bubble_fraction);

  v1::MemoryFootprint* m = out->mutable_memory();
  constexpr int kW = static_cast<int>(engine::OperandClass::kWeights);
  constexpr int kKv = static_cast<int>(engine::OperandClass::kKvCache);
  constexpr int kAct = static_cast<int>(engine::OperandClass::kActivations);
  for (const engine::TierUsage& u : in.memory.tiers) {
    v1::TierUsage* pu = m->add_tiers();
    pu->set_tier(u.tier);
    pu->set_name(u.name);
    pu->set_capacity_bytes(u.capacity_bytes);
    pu->set_weights_bytes(u.bytes[kW]);
    pu->set_kv_cache_bytes(u.bytes[kKv]);
    pu->set_activations_bytes(u.bytes[kAct]);
    pu->set_used_bytes(u.used_bytes);
    pu->set_missing_weights_bytes(u.missing_bytes[kW]);
    pu->set_missing_kv_cache_bytes(u.missing_bytes[kKv]);
    pu->set_missing_activations_bytes(u.missing_bytes[kAct]);
  }
  m->set_required_weights_bytes(in.memory.required_bytes[kW]);
  m->set_required_kv_cache_bytes(in.memory.required_bytes[kKv]);
  m->set_required_activations_bytes(in.memory.required_bytes[kAct]);
  m->set_fits(in.memory.fits);
  m->set_not_fitting(in.memory.not_fitting);
  m->set_spilled(in.memory.spilled);
  for (int c = 0; c < engine::kOperandClassCount; ++c) {
    if (in.memory.off_device[c]) {
      m->add_spilled_operands(std::string(
          engine::OperandClassName(static_cast<engine::OperandClass>(c))));
    }
  }
  v1::ParameterCounts* pc = out->mutable_parameters();
  pc->set_total(in.parameters.total);
  pc->set_active_per_token(in.parameters.active_per_token);
  pc->set_embedding(in.parameters.embedding);
  pc->set_lm_head(in.parameters.lm_head);

  v1::Bottleneck* b = out->mutable_bottleneck();
  RL_SET_NAME(b, phase, engine::PhaseName(in.bottleneck.phase));
  RL_SET_NAME(b, op, engine::OpKindName(in.bottleneck.op));
  RL_SET_NAME(b, layer_group, in.bottleneck.layer_group);
  RL_SET_NAME(b, bound, engine::BoundName(in.bottleneck.bound));
  b->set_share_of_phase_time(in.bottleneck.share_of_phase_time);
  b->set_intensity(in.bottleneck.intensity);
  b->set_ridge_point(in.bottleneck.ridge_point);
  b->set_text(in.bottleneck.text);

  for (const engine::Suggestion& s : in.suggestions) {
    v1::Suggestion* ps = out->add_suggestions();
    ps->set_kind(s.kind);
    ps->set_change(s.change);
    ps->set_metric(s.metric);
    ps->set_before(s.before);
    ps->set_after(s.after);
    ps->set_gain(s.gain);
    ps->set_text(s.text);
  }

  v1::Economy* e = out->mutable_economy();
  RL_SET_NAME(e, energy_method,
              engine::EnergyMethodName(in.economy.energy_method));
  if (in.economy.prefill_joules)
    e->set_prefill_joules(*in.economy.prefill_joules);
  if (in.economy.decode_joules) e->set_decode_joules(*in.economy.decode_joules);
  if (in.economy.joules_per_output_token) {
    e->set_joules_per_output_token(*in.economy.joules_per_output_token);
  }
  if (in.economy.usd_per_million_output_tokens) {
    e->set_usd_per_million_output_tokens(
        *in.economy.usd_per_million_output_tokens);
  }
  if (in.economy.g_co2e_per_million_output_tokens) {
    e->set_g_co2e_per_million_output_tokens(
        *in.economy.g_co2e_per_million_output_tokens);
  }
  e->set_note(in.economy.note);
  RL_SET_NAME(e, cost_basis, engine::CostBasisName(in.economy.cost_basis));
  out->set_pure_roofline(in.pure_roofline);
  out->set_compute_roof_known(in.compute_roof_known);
  for (const std::string& w : in.warnings) out->add_warnings(w);
  if (in.speculative.enabled) {
    const engine::SpeculativeSummary& x = in.speculative;
    v1::SpeculativeSummary* o = out->mutable_speculative();
    o->set_method(x.method);
    o->set_accepted_tokens_per_step(x.accepted_tokens_per_step);
    o->set_steps(x.steps);
    o->set_draft_seconds_per_step(x.draft_seconds_per_step);
    o->set_verify_seconds_per_step(x.verify_seconds_per_step);
    o->set_draft_prefill_seconds(x.draft_prefill_seconds);
    o->set_draft_bytes(x.draft_bytes);
    o->set_baseline_tpot_mean_seconds(x.baseline_tpot_mean_seconds);
    o->set_speedup(x.speedup);
  }
  if (in.lora.enabled) {
    v1::LoraSummary* o = out->mutable_lora();
    o->set_adapter_bytes(in.lora.adapter_bytes);
    o->set_resident_bytes(in.lora.resident_bytes);
    o->set_cold_load_seconds(in.lora.cold_load_seconds);
    o->set_ttft_added_seconds(in.lora.ttft_added_seconds);
  }
}

#undef RL_SET_NAME

}  // namespace ridgeline::service

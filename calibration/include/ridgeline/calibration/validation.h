// Evaluating measurement rows against the engine: mapping a row to a
// scenario (or a kernel shape), the pure bound and the calibrated
// prediction in the row's unit, and the summary statistics. Thread-compatible
// free functions; no global state.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/kernel.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::calibration {

// Which part of a run a row measures; it decides which efficiency a row can
// pin down when fitting.
enum class Regime {
  kDecode,           // decode_tok_s, tpot_ms: memory-bound batch-1 steps
  kPrefill,          // prefill_tok_s, ttft_ms
  kMixed,            // throughput_tok_s, e2e_latency_ms: prefill + decode
  kAttentionKernel,  // kernel_us, attention-decode-kernel
  kGemmKernel,       // kernel_us, gemm-kernel
  kMemoryKernel,     // kernel_us, memory-read-kernel / memory-copy-kernel
};
std::string_view RegimeName(Regime r);

// Resolves a hardware id to a description (the plugin registry in the
// product; tests may pass inline hardware).
using HardwareLookup =
    std::function<absl::StatusOr<engine::Hardware>(std::string_view id)>;

// A row mapped onto the engine, ready to predict any number of times.
struct PreparedRow {
  MeasurementRow row;
  Regime regime = Regime::kDecode;
  bool higher_is_faster = true;  // tok/s: true; ms, us: false
  std::string family;            // hardware.family
  std::string memory_technology;  // DeviceMemoryTechnology(hardware)
  std::string framework_key;     // FrameworkKey(row.framework)
  engine::Scenario scenario;     // model rows
  // Prompt tokens per forward pass of a runtime that processes a prompt in
  // fixed-size iterations, each a full pass over the weights (Qualcomm
  // Genie's 128-token prompt processor); 0: one pass for the whole prompt.
  int64_t prompt_iteration_tokens = 0;
  engine::DecodeAttentionShape attention;  // kAttentionKernel
  engine::GemmShape gemm;                  // kGemmKernel
  engine::MemoryKernelShape memory;        // kMemoryKernel
  engine::KernelOptions kernel_options;
};

// "tensorrt-llm-0.6.1" -> "tensorrt-llm", "flashinfer-sm70-experimental" ->
// "flashinfer", "llama.cpp-cuda" stays: version-like parts and what follows
// them are dropped. Profiles are keyed by this.
std::string FrameworkKey(std::string_view framework);

// Maps a usable row; the error message is the reason it is skipped.
absl::StatusOr<PreparedRow> PrepareRow(const MeasurementRow& row,
                                       const HardwareLookup& lookup);

// The row's metric in its unit under `efficiency` (pure: eta = 1, no
// overheads, i.e. the bound).
absl::StatusOr<double> PredictRow(const PreparedRow& row,
                                  const engine::Efficiency& efficiency,
                                  bool pure);

// Kernel rows: the row's kernel under `efficiency` (pure: the bound), with
// its roofs, overheads and shape (tiles, waves, split-KV).
bool IsKernel(Regime r);
absl::StatusOr<engine::KernelCost> KernelCostOf(
    const PreparedRow& row, const engine::Efficiency& efficiency, bool pure);

// Where a row sits at the pure bound: the op class whose efficiency a kernel
// row measures, and compute-roof time / memory-roof time (> 1: compute-bound)
// of the kernel, or of the step its metric is dominated by (the prefill for
// prefill rows, the decode for the others).
struct RowRoofs {
  engine::OpClass op_class = engine::OpClass::kGemv;  // kernel rows only
  double compute_to_memory = 0;
};
absl::StatusOr<RowRoofs> PureRoofs(const PreparedRow& row);

// Seconds per unit of work so fits can treat all rows alike: per decode step
// for decode tok/s and TPOT, the whole prefill for prefill tok/s and TTFT,
// the whole run for throughput and latencies, per call for kernels.
double ToSeconds(const PreparedRow& row, double value_in_unit);

struct RowResult {
  std::string id, metric, unit;
  double measured = 0;
  std::optional<double> predicted, bound, ape;
  std::string status;  // "ok" or why it was skipped
  std::string hardware_id, family, framework, profile;
  bool evaluated = false;
  bool beats_bound = false;  // measured faster than bound by more than 5%
  // A warm-cache kernel row (the benchmark reuses its operands) whose
  // operands fit an on-chip tier (L2) that publishes no bandwidth: the
  // roofline charges device memory, which that tier can beat, so `bound` is
  // empty and the row is left out of soundness.
  bool bound_unknown = false;
  // The profile that predicted the row was fitted on it (its fitted_from
  // lists the row id): the row's error is in-sample, not a forecast.
  bool in_sample = false;
};

// Soundness: a measurement may beat the bound by at most this fraction.
inline constexpr double kSoundnessTolerance = 0.05;
bool BeatsBound(bool higher_is_faster, double measured, double bound);

// Evaluates every row; usable = 0 rows are reported as skipped.
// `profiles` may be null (predicted = bound).
std::vector<RowResult> EvaluateRows(const std::vector<MeasurementRow>& rows,
                                    const HardwareLookup& lookup,
                                    const ProfileStore* profiles);
RowResult EvaluatePrepared(const PreparedRow& row, const ProfileStore* profiles);

struct GroupStats {
  std::string name;
  int evaluated = 0;
  double median_ape = 0;
  double p90_ape = 0;
  double soundness = 1;  // share of rows with a bound that do not beat it
  int bound_known = 0;   // rows soundness is computed over
};
struct Summary {
  int evaluated = 0;
  int skipped = 0;
  int in_sample = 0;  // evaluated rows whose profile was fitted on them
  GroupStats overall;
  // The rows that are not kernel timings (every metric but kernel_us), when
  // both kinds were evaluated: what end-to-end accuracy targets count.
  std::optional<GroupStats> end_to_end;
  std::vector<GroupStats> by_metric, by_family, by_framework;
  std::vector<RowResult> beats_bound;
};
Summary Summarize(const std::vector<RowResult>& results);
// Median and nearest-rank 90th percentile; 0 for an empty list.
double Median(std::vector<double> v);
double Percentile(std::vector<double> v, double p);

void WriteCsv(const std::vector<RowResult>& results, std::ostream& out);
void WriteJson(const std::vector<RowResult>& results, const Summary& summary,
               std::ostream& out);
void WriteTable(const std::vector<RowResult>& results, const Summary& summary,
                std::ostream& out);

}  // namespace ridgeline::calibration

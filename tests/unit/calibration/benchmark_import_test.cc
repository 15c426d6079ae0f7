// ImportBenchmark on the result files of the five benchmark clients
// (tests/fixtures/benchmarks/, sources in its README.md): rows, workload,
// load and the metric mapping of each tool's definitions, and the refusals.
#include "ridgeline/calibration/benchmark_import.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::calibration {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RIDGELINE_TEST_BENCHMARK_DIR) + "/" + name,
                   std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ImportOptions Options(const std::string& from) {
  ImportOptions o;
  o.from = from;
  o.model_id = "llama-3.1-8b";
  o.hardware_id = "nvidia-h100-sxm-80gb";
  o.file_name = "fixture";
  return o;
}

// The one row of `metric` in run `nth` (0-based) of the rows.
const ImportedRow* Find(const std::vector<ImportedRow>& rows,
                        const std::string& metric, int nth = 0) {
  for (const ImportedRow& r : rows) {
    if (r.row.metric == metric && nth-- == 0) return &r;
  }
  return nullptr;
}

TEST(BenchmarkImport, VllmBenchTwoRunsAtInfiniteRateAreMaxLoad) {
  auto rows = ImportBenchmark(Fixture("vllm-bench-max-2runs.jsonl"),
                              Options("vllm-bench"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  // Per run: throughput + {ttft, tpot, itl} x {mean, median, p99} = 10.
  ASSERT_EQ(rows->size(), 20u);
  const ImportedRow* t1 = Find(*rows, "throughput_tok_s", 0);
  const ImportedRow* t2 = Find(*rows, "throughput_tok_s", 1);
  ASSERT_NE(t1, nullptr);
  ASSERT_NE(t2, nullptr);
  EXPECT_DOUBLE_EQ(t1->row.value, 434.40);  // output_throughput, line 1
  EXPECT_DOUBLE_EQ(t2->row.value, 329.86);  // line 2
  // 65536 input / 32 completed = 2048; 65536 output / 32 = 2048.
  EXPECT_EQ(*t1->row.prompt_len, 2048);
  EXPECT_EQ(*t1->row.gen_len, 2048);
  // request_rate "inf" with max_concurrency 32 = num_prompts 32: every
  // request is offered at once.
  EXPECT_EQ(t1->concurrency, "max");
  EXPECT_EQ(t1->row.framework, "vllm");
  EXPECT_EQ(t1->row.id, "vllm-bench-001");
  EXPECT_EQ(*t1->row.tensor_parallel, 1);
  EXPECT_TRUE(t1->row.usable);
  // vLLM's TPOT is per request; its ITL pools every gap: both kept apart.
  EXPECT_DOUBLE_EQ(Find(*rows, "tpot_ms")->row.value, 70.14);
  EXPECT_DOUBLE_EQ(Find(*rows, "tpot_p50_ms")->row.value, 70.23);
  EXPECT_DOUBLE_EQ(Find(*rows, "itl_p50_ms")->row.value, 68.15);
  EXPECT_DOUBLE_EQ(Find(*rows, "itl_p99_ms", 1)->row.value, 97.38);
  EXPECT_DOUBLE_EQ(Find(*rows, "ttft_p99_ms")->row.value, 10999.46);
}

TEST(BenchmarkImport, VllmCapBelowThePromptsIsAClosedLoopAndARateIsARate) {
  auto rows = ImportBenchmark(
      R"({"num_prompts": 100, "request_rate": "inf", "max_concurrency": 8,
          "completed": 100, "total_input_tokens": 1000,
          "total_output_tokens": 500, "output_throughput": 50})"
      "\n",
      Options("vllm-bench"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->front().concurrency, "8");
  rows = ImportBenchmark(
      R"({"request_rate": 2.5, "max_concurrency": null, "completed": 10,
          "total_input_tokens": 1000, "total_output_tokens": 500,
          "output_throughput": 50})",
      Options("vllm-bench"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->front().concurrency, "rate=2.5/s");
  // 1000 / 10 = 100 prompt tokens, 500 / 10 = 50 generated.
  EXPECT_EQ(*rows->front().row.prompt_len, 100);
  EXPECT_EQ(*rows->front().row.gen_len, 50);
}

TEST(BenchmarkImport, SglangBenchRealFileKeepsWhatItMeasured) {
  auto rows = ImportBenchmark(Fixture("sglang-bench-rate2.jsonl"),
                              Options("sglang-bench"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  // throughput, median TTFT, mean and median E2E; median_itl_ms 0.0 (the
  // run streamed nothing) is not a measurement and is left out.
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ(Find(*rows, "itl_p50_ms"), nullptr);
  const ImportedRow* t = Find(*rows, "throughput_tok_s");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->row.value, 831.8340148261185);
  EXPECT_EQ(t->concurrency, "rate=2/s");
  // 342460 / 996 = 343.8 -> 344; 218257 / 996 = 219.1 -> 219.
  EXPECT_EQ(*t->row.prompt_len, 344);
  EXPECT_EQ(*t->row.gen_len, 219);
  EXPECT_EQ(t->row.framework, "sglang");  // the file's "backend"
  EXPECT_DOUBLE_EQ(Find(*rows, "e2e_latency_ms")->row.value,
                   1979.3278399520498);
  EXPECT_DOUBLE_EQ(Find(*rows, "ttft_p50_ms")->row.value, 576.1044789978769);
}

TEST(BenchmarkImport, SglangInfinityTokenIsAnInfiniteRate) {
  // Python's json.dump writes float("inf") as the bare token Infinity.
  auto rows = ImportBenchmark(
      R"({"backend": "sglang", "request_rate": Infinity, "completed": 4,
          "total_input_tokens": 400, "total_output_tokens": 40,
          "output_throughput": 12.5, "mean_ttft_ms": 30, "note": "Infinity"})",
      Options("sglang-bench"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->front().concurrency, "max");
}

TEST(BenchmarkImport, GuidellmInterTokenLatencyIsTpotAndItsTpotIsNotImported) {
  auto rows =
      ImportBenchmark(Fixture("guidellm-benchmarks.json"), Options("guidellm"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  const ImportedRow* sync_tpot = Find(*rows, "tpot_ms", 0);
  const ImportedRow* max_tpot = Find(*rows, "tpot_ms", 1);
  ASSERT_NE(sync_tpot, nullptr);
  ASSERT_NE(max_tpot, nullptr);
  // inter_token_latency_ms means 20 and 40 -> tpot_ms.
  EXPECT_DOUBLE_EQ(sync_tpot->row.value, 20.0);
  EXPECT_DOUBLE_EQ(max_tpot->row.value, 40.0);
  // time_per_output_token_ms (latency / output tokens, TTFT included:
  // 2590 / 128 = 20.234375 and 5980 / 128 = 46.71875) is no row.
  for (const ImportedRow& r : *rows) {
    EXPECT_NE(r.row.value, 20.234375) << r.row.metric;
    EXPECT_NE(r.row.value, 46.71875) << r.row.metric;
  }
  EXPECT_EQ(sync_tpot->concurrency, "1");   // synchronous
  EXPECT_EQ(max_tpot->concurrency, "max");  // throughput
  // request_latency is in seconds: 2.59 s -> 2590 ms.
  EXPECT_DOUBLE_EQ(Find(*rows, "e2e_latency_ms")->row.value, 2590.0);
  EXPECT_EQ(*sync_tpot->row.prompt_len, 512);
  EXPECT_EQ(*sync_tpot->row.gen_len, 128);
  EXPECT_DOUBLE_EQ(Find(*rows, "tpot_p99_ms", 1)->row.value, 50.0);
  EXPECT_EQ(Find(*rows, "tpot_p999_ms"), nullptr);
}

TEST(BenchmarkImport, GenaiPerfInterTokenLatencyIsTpot) {
  auto rows =
      ImportBenchmark(Fixture("genai-perf-profile_export_genai_perf.json"),
                      Options("genai-perf"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_DOUBLE_EQ(Find(*rows, "tpot_ms")->row.value, 1.85);
  EXPECT_DOUBLE_EQ(Find(*rows, "tpot_p99_ms")->row.value, 2.02);
  EXPECT_EQ(Find(*rows, "itl_ms"), nullptr);
  EXPECT_DOUBLE_EQ(Find(*rows, "ttft_ms")->row.value, 16.26);
  EXPECT_DOUBLE_EQ(Find(*rows, "throughput_tok_s")->row.value, 520.87);
  EXPECT_DOUBLE_EQ(Find(*rows, "e2e_latency_p90_ms")->row.value, 526.13);
  // input_sequence_length.avg 550.06 -> 550; output 261.90 -> 262.
  EXPECT_EQ(*rows->front().row.prompt_len, 550);
  EXPECT_EQ(*rows->front().row.gen_len, 262);
  EXPECT_EQ(rows->front().concurrency, "1");
}

TEST(BenchmarkImport, AiperfInterTokenLatencyIsTpot) {
  auto rows = ImportBenchmark(Fixture("aiperf-profile_export_aiperf.json"),
                              Options("aiperf"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_DOUBLE_EQ(Find(*rows, "tpot_ms")->row.value, 11.23);
  EXPECT_DOUBLE_EQ(Find(*rows, "ttft_p99_ms")->row.value, 68.82);
  EXPECT_DOUBLE_EQ(Find(*rows, "throughput_tok_s")->row.value, 10944.03);
  EXPECT_EQ(rows->front().concurrency, "10");
  // 10 input tokens; 42.83 output -> 43.
  EXPECT_EQ(*rows->front().row.prompt_len, 10);
  EXPECT_EQ(*rows->front().row.gen_len, 43);
}

TEST(BenchmarkImport, AiperfNanosecondsBecomeMilliseconds) {
  auto rows = ImportBenchmark(
      R"({"input_sequence_length": {"avg": 100}, "output_sequence_length":
          {"avg": 10}, "output_token_throughput": {"avg": 5},
          "time_to_first_token": {"unit": "ns", "avg": 2500000},
          "input_config": {"loadgen": {"request_rate": 4}}})",
      Options("aiperf"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_DOUBLE_EQ(Find(*rows, "ttft_ms")->row.value, 2.5);  // 2.5e6 ns
  EXPECT_EQ(rows->front().concurrency, "rate=4/s");
}

TEST(BenchmarkImport, AMissingFieldIsRefusedByNameAndNothingIsImported) {
  // Line 1 is whole; line 2 lacks total_output_tokens.
  std::string text = Fixture("vllm-bench-max-2runs.jsonl");
  const size_t line2 = text.find('\n') + 1;
  const size_t at = text.find("\"total_output_tokens\": 65536, ", line2);
  ASSERT_NE(at, std::string::npos);
  text.erase(at, std::string("\"total_output_tokens\": 65536, ").size());
  auto rows = ImportBenchmark(text, Options("vllm-bench"));
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(rows.status()), "total_output_tokens");
  const std::string msg(rows.status().message());
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("total_output_tokens"), std::string::npos) << msg;
}

TEST(BenchmarkImport, RefusalsNameTheField) {
  struct Case {
    std::string from, text, field;
  };
  const std::vector<Case> cases = {
      {"vllm-bench", R"({"completed": 3})", "total_input_tokens"},
      {"vllm-bench",
       R"({"completed": 3, "total_input_tokens": 3, "total_output_tokens": 3,
           "request_rate": "fast", "output_throughput": 1})",
       "request_rate"},
      {"vllm-bench",
       R"({"completed": 3, "total_input_tokens": 3, "total_output_tokens": 3,
           "request_rate": 1})",
       "output_throughput"},
      {"genai-perf",
       R"({"input_sequence_length": {"avg": 5}, "output_sequence_length":
           {"avg": 5}, "output_token_throughput": {"avg": 5}})",
       "input_config.perf_analyzer.stimulus.concurrency"},
      {"aiperf",
       R"({"input_sequence_length": {"avg": 5}, "output_sequence_length":
           {"avg": 5}, "output_token_throughput": {"avg": 5},
           "time_to_first_token": {"unit": "furlongs", "avg": 1},
           "input_config": {"loadgen": {"concurrency": 2}}})",
       "time_to_first_token.unit"},
      {"guidellm", R"({"benchmarks": [{"config": {"strategy":
           {"type_": "trace"}}}]})",
       "benchmarks[0].config.strategy.type_"},
      {"guidellm", R"({"benchmarks": []})", "benchmarks"},
  };
  for (const Case& c : cases) {
    auto rows = ImportBenchmark(c.text, Options(c.from));
    ASSERT_FALSE(rows.ok()) << c.from << " " << c.text;
    EXPECT_EQ(engine::FieldPathOf(rows.status()), c.field)
        << rows.status().message();
  }
}

TEST(BenchmarkImport, BadOptionsAndNonJsonAreRefused) {
  ImportOptions o = Options("nope");
  auto rows = ImportBenchmark("{}", o);
  ASSERT_FALSE(rows.ok());
  const std::string msg(rows.status().message());
  for (const std::string& f : BenchmarkFormats()) {
    EXPECT_NE(msg.find(f), std::string::npos) << msg;
  }
  o = Options("vllm-bench");
  o.model_id = "no-such-model";
  EXPECT_EQ(engine::FieldPathOf(ImportBenchmark("{}", o).status()), "model");
  EXPECT_FALSE(ImportBenchmark("{\"a\":", Options("vllm-bench")).ok());
  EXPECT_FALSE(ImportBenchmark("", Options("vllm-bench")).ok());
  EXPECT_FALSE(ImportBenchmark("[1, 2]", Options("guidellm")).ok());
}

TEST(BenchmarkImport, CsvReadsBackAsTheSameRows) {
  auto rows =
      ImportBenchmark(Fixture("guidellm-benchmarks.json"), Options("guidellm"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::ostringstream csv;
  WriteServingCsv(*rows, csv);
  auto back = ParseMeasurementsCsv(csv.str(), "import.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), rows->size());
  for (size_t i = 0; i < rows->size(); ++i) {
    EXPECT_EQ((*back)[i].id, (*rows)[i].row.id);
    EXPECT_EQ((*back)[i].metric, (*rows)[i].row.metric);
    EXPECT_EQ((*back)[i].value, (*rows)[i].row.value);  // exact digits
    EXPECT_EQ((*back)[i].note, (*rows)[i].row.note);
  }
  EXPECT_NE(csv.str().find(",concurrency\n"), std::string::npos);
}

}  // namespace
}  // namespace ridgeline::calibration

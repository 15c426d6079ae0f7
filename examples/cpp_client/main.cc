// ridgeline_cpp_client TARGET: Analyze, Sweep and a StepTimer against a
// running ridgeline-server, printed one "key value" per line.
#include <chrono>
#include <cstdio>
#include <string>

#include "ridgeline/client/client.h"

namespace {

int Fail(const char* what, const grpc::Status& s) {
  std::fprintf(stderr, "%s: code %d, field \"%s\": %s\n", what,
               static_cast<int>(s.error_code()),
               ridgeline::client::FieldPath(s).c_str(),
               s.error_message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  ridgeline::client::Client client(argv[1]);
  client.set_timeout(std::chrono::seconds(30));
  // A server started just before may still be loading its plugins.
  grpc::Status s = client.WaitReady(std::chrono::seconds(60));
  if (!s.ok()) return Fail("WaitReady", s);
  std::printf("ready\n");

  ridgeline::v1::AnalyzeResponse analysis;
  s = client.Analyze(
      ridgeline::client::AnalyzeRequestFor("llama-3-8b", "nvidia-h100-sxm-80gb",
                                           8, 1024, 128),
      &analysis);
  if (!s.ok()) return Fail("Analyze", s);
  std::printf("analyze.decode_tokens_per_second_total %.17g\n",
              analysis.result().decode_tokens_per_second_total());

  ridgeline::v1::SweepRequest sweep;
  sweep.add_models()->set_catalog_id("llama-3-8b");
  sweep.add_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  for (int b : {1, 8, 64}) sweep.add_batch_sizes(b);
  int points = 0;
  s = client.Sweep(sweep, [&](const ridgeline::v1::SweepPoint& p) {
    std::printf("sweep.%d.batch %lld tokens_per_second %.17g\n",
                static_cast<int>(p.index()),
                static_cast<long long>(p.summary().batch()),
                p.summary().decode_tokens_per_second_total());
    ++points;
    return true;
  });
  if (!s.ok()) return Fail("Sweep", s);
  std::printf("sweep.points %d\n", points);

  // An error names the field: batch 0 is out of range.
  ridgeline::v1::AnalyzeResponse ignored;
  std::string field;
  s = client.Analyze(ridgeline::client::AnalyzeRequestFor(
                         "llama-3-8b", "nvidia-h100-sxm-80gb", 0, 1024, 128),
                     &ignored, &field);
  std::printf("error.code %d field %s\n", static_cast<int>(s.error_code()),
              field.c_str());

  ridgeline::client::StepTimer timer(
      client, ridgeline::client::ScenarioFor("llama-3-8b",
                                             "nvidia-h100-sxm-80gb"));
  double seconds = 0;
  s = timer.Step({{1024, 1}, {0, 512}}, &seconds);
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    std::printf("step UNIMPLEMENTED\n");
    return 0;
  }
  if (!s.ok()) return Fail("StepTimer.Step", s);
  std::printf("step.seconds %.17g\n", seconds);
  s = timer.Step({{1025, 1}, {512, 512}}, &seconds);
  if (!s.ok()) return Fail("StepTimer.Step", s);
  std::printf("step2.seconds %.17g\n", seconds);
  s = timer.Close();
  if (!s.ok()) return Fail("StepTimer.Close", s);
  return 0;
}

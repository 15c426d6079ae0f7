// Request builders and the field path of an error message.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/client/client.h"

namespace ridgeline::client {

v1::AnalyzeRequest AnalyzeRequestFor(std::string_view model,
                                     std::string_view hardware, int64_t batch,
                                     int64_t prompt_tokens,
                                     int64_t generated_tokens) {
  v1::AnalyzeRequest request;
  request.mutable_model()->set_catalog_id(std::string(model));
  request.mutable_hardware()->set_platform_id(std::string(hardware));
  v1::Workload* workload = request.mutable_workload();
  workload->set_batch(batch);
  workload->set_prompt_tokens(prompt_tokens);
  workload->set_generated_tokens(generated_tokens);
  return request;
}

v1::StepScenario ScenarioFor(std::string_view model,
                             std::string_view hardware) {
  v1::StepScenario scenario;
  scenario.mutable_model()->set_catalog_id(std::string(model));
  scenario.mutable_hardware()->set_platform_id(std::string(hardware));
  return scenario;
}

v1::SpeculativeDecoding SpeculativeOf(std::string_view method,
                                      double acceptance_rate) {
  v1::SpeculativeDecoding out;
  out.set_acceptance_rate(acceptance_rate);
  const size_t first = method.find(':');
  const size_t last = method.rfind(':');
  if (first == std::string_view::npos) {
    out.set_method(std::string(method));
    return out;
  }
  out.set_method(std::string(method.substr(0, first)));
  if (last > first) {
    out.set_draft_model(
        std::string(method.substr(first + 1, last - first - 1)));
  }
  int tokens = 0;
  for (char c : method.substr(last + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return out;
    tokens = tokens * 10 + (c - '0');
    if (tokens > 1000) break;  // out of range either way: the server says so
  }
  out.set_tokens(tokens);
  return out;
}

v1::Step StepOf(const std::vector<StepSequence>& sequences) {
  v1::Step step;
  step.mutable_sequences()->Reserve(static_cast<int>(sequences.size()));
  for (const StepSequence& s : sequences) {
    v1::StepSequence* out = step.add_sequences();
    out->set_context_tokens(s.context_tokens);
    out->set_new_tokens(s.new_tokens);
  }
  return step;
}

// The server writes "<path>: <what is wrong>", where a path is identifiers
// joined by '.', each optionally indexed ("hardware[2].tiers[0].kind").
std::string FieldPath(const grpc::Status& status) {
  const std::string& m = status.error_message();
  size_t i = 0;
  auto ident = [&] {
    if (i >= m.size() || !(std::isalpha(static_cast<unsigned char>(m[i])) ||
                           m[i] == '_')) {
      return false;
    }
    while (i < m.size() && (std::isalnum(static_cast<unsigned char>(m[i])) ||
                            m[i] == '_')) {
      ++i;
    }
    while (i < m.size() && m[i] == '[') {
      size_t j = i + 1;
      while (j < m.size() && std::isdigit(static_cast<unsigned char>(m[j]))) ++j;
      if (j == i + 1 || j >= m.size() || m[j] != ']') return false;
      i = j + 1;
    }
    return true;
  };
  if (!ident()) return "";
  while (i < m.size() && m[i] == '.') {
    ++i;
    if (!ident()) return "";
  }
  if (i + 1 < m.size() && m[i] == ':' && m[i + 1] == ' ') return m.substr(0, i);
  return "";
}

std::string FieldPath(const grpc::Status& status,
                      const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("ridgeline-field-path");
  if (it != trailers.end() && it->second.size() > 0) {
    return std::string(it->second.data(), it->second.size());
  }
  return FieldPath(status);
}

}  // namespace ridgeline::client

// StepTimer: one StepTimeStream, one round trip per step.
#include <string>
#include <utility>
#include <vector>

#include "ridgeline/client/client.h"

namespace ridgeline::client {

StepTimer::StepTimer(Client& client, v1::StepScenario scenario)
    : client_(client), scenario_(std::move(scenario)) {}

StepTimer::~StepTimer() { Close().IgnoreError(); }

grpc::Status StepTimer::Open() {
  context_ = client_.NewContext();
  stream_ = client_.stub().StepTimeStream(context_.get());
  sent_scenario_ = false;
  return stream_ ? grpc::Status::OK
                 : grpc::Status(grpc::StatusCode::INTERNAL,
                                "StepTimeStream could not start");
}

grpc::Status StepTimer::Step(const std::vector<StepSequence>& sequences,
                             double* seconds, v1::StepTimeResult* result) {
  if (!stream_) {
    grpc::Status s = Open();
    if (!s.ok()) return s;
  }
  request_.Clear();
  request_.set_id(next_id_++);
  *request_.add_steps() = StepOf(sequences);
  if (!sent_scenario_) *request_.mutable_scenario() = scenario_;
  // A failed write or read means the server ended the stream: its status
  // says why (e.g. INVALID_ARGUMENT for a bad scenario).
  if (!stream_->Write(request_) || !stream_->Read(&response_)) {
    grpc::Status s = stream_->Finish();
    stream_.reset();
    context_.reset();
    if (s.ok()) {
      s = grpc::Status(grpc::StatusCode::INTERNAL,
                       "StepTimeStream ended without an answer");
    }
    return s;
  }
  sent_scenario_ = true;
  if (response_.id() != request_.id() || response_.steps_size() != 1) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "StepTimeStream answered another request");
  }
  const v1::StepTimeResult& r = response_.steps(0);
  if (result != nullptr) *result = r;
  if (r.error_code() != 0) {
    return grpc::Status(static_cast<grpc::StatusCode>(r.error_code()),
                        r.error_message());
  }
  *seconds = r.seconds();
  return grpc::Status::OK;
}

grpc::Status StepTimer::Close() {
  if (!stream_) return grpc::Status::OK;
  stream_->WritesDone();
  v1::StepTimeResponse ignored;
  while (stream_->Read(&ignored)) {
  }
  grpc::Status s = stream_->Finish();
  stream_.reset();
  context_.reset();
  return s;
}

}  // namespace ridgeline::client

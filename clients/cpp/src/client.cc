// Client: unary and server-streaming calls with the client's deadline.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "ridgeline/client/client.h"

namespace ridgeline::client {
namespace {

grpc::Status Finished(const grpc::Status& status,
                      const grpc::ClientContext& context,
                      std::string* field_path) {
  if (field_path != nullptr) {
    *field_path = status.ok() ? "" : FieldPath(status, context);
  }
  return status;
}

}  // namespace

Client::Client(const std::string& target,
               std::shared_ptr<grpc::ChannelCredentials> credentials)
    : Client(grpc::CreateChannel(
          target, credentials ? std::move(credentials)
                              : grpc::InsecureChannelCredentials())) {}

Client::Client(std::shared_ptr<grpc::Channel> channel)
    : channel_(std::move(channel)),
      stub_(v1::RidgelineService::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientContext> Client::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (timeout_.count() > 0) {
    context->set_deadline(std::chrono::system_clock::now() + timeout_);
  }
  return context;
}

grpc::Status Client::Simulate(const v1::SimulateRequest& request,
                              v1::SimulateResponse* response,
                              std::string* field_path) {
  auto context = NewContext();
  return Finished(stub_->Simulate(context.get(), request, response), *context,
                  field_path);
}

grpc::Status Client::Analyze(const v1::AnalyzeRequest& request,
                             v1::AnalyzeResponse* response,
                             std::string* field_path) {
  auto context = NewContext();
  return Finished(stub_->Analyze(context.get(), request, response), *context,
                  field_path);
}

grpc::Status Client::Sweep(
    const v1::SweepRequest& request,
    const std::function<bool(const v1::SweepPoint&)>& on_point,
    std::string* field_path) {
  auto context = NewContext();
  auto reader = stub_->Sweep(context.get(), request);
  v1::SweepPoint point;
  while (reader->Read(&point)) {
    if (!on_point(point)) {
      context->TryCancel();
      while (reader->Read(&point)) {
      }
      reader->Finish().IgnoreError();
      return Finished(grpc::Status::OK, *context, field_path);
    }
  }
  return Finished(reader->Finish(), *context, field_path);
}

grpc::Status Client::StepTime(const v1::StepTimeRequest& request,
                              v1::StepTimeResponse* response,
                              std::string* field_path) {
  auto context = NewContext();
  return Finished(stub_->StepTime(context.get(), request, response), *context,
                  field_path);
}

grpc::Status Client::WaitReady(std::chrono::milliseconds timeout) {
  constexpr auto kPoll = std::chrono::milliseconds(100);
  const auto deadline = std::chrono::system_clock::now() + timeout;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(std::min(deadline, std::chrono::system_clock::now() +
                                                std::chrono::seconds(5)));
    v1::ListHardwareResponse response;
    const grpc::Status s =
        stub_->ListHardware(&context, v1::ListHardwareRequest(), &response);
    const bool starting = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                          s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (!starting || std::chrono::system_clock::now() + kPoll >= deadline) {
      return s;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

grpc::Status Client::ListHardware(std::string_view family,
                                  v1::ListHardwareResponse* response,
                                  std::string* field_path) {
  v1::ListHardwareRequest request;
  request.set_family(std::string(family));
  auto context = NewContext();
  return Finished(stub_->ListHardware(context.get(), request, response),
                  *context, field_path);
}

grpc::Status Client::GetHardware(std::string_view id, v1::Hardware* hardware,
                                 std::string* field_path) {
  v1::GetHardwareRequest request;
  request.set_id(std::string(id));
  v1::GetHardwareResponse response;
  auto context = NewContext();
  grpc::Status s = stub_->GetHardware(context.get(), request, &response);
  if (s.ok()) hardware->Swap(response.mutable_hardware());
  return Finished(s, *context, field_path);
}

grpc::Status Client::ListModels(v1::ListModelsResponse* response,
                                std::string* field_path) {
  auto context = NewContext();
  return Finished(
      stub_->ListModels(context.get(), v1::ListModelsRequest(), response),
      *context, field_path);
}

grpc::Status Client::GetModel(std::string_view id, v1::Model* model,
                              std::string* field_path) {
  v1::GetModelRequest request;
  request.set_id(std::string(id));
  v1::GetModelResponse response;
  auto context = NewContext();
  grpc::Status s = stub_->GetModel(context.get(), request, &response);
  if (s.ok()) model->Swap(response.mutable_model());
  return Finished(s, *context, field_path);
}

}  // namespace ridgeline::client

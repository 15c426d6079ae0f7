// Client: unary and server-streaming calls with the client's deadline.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ridgeline/client/client.h"

namespace ridgeline::client {

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

grpc::Status Client::Analyze(const v1::AnalyzeRequest& request,
                             v1::AnalyzeResponse* response) {
  return stub_->Analyze(NewContext().get(), request, response);
}

grpc::Status Client::Sweep(
    const v1::SweepRequest& request,
    const std::function<bool(const v1::SweepPoint&)>& on_point) {
  auto context = NewContext();
  auto reader = stub_->Sweep(context.get(), request);
  v1::SweepPoint point;
  while (reader->Read(&point)) {
    if (!on_point(point)) {
      context->TryCancel();
      while (reader->Read(&point)) {
      }
      reader->Finish().IgnoreError();
      return grpc::Status::OK;
    }
  }
  return reader->Finish();
}

grpc::Status Client::StepTime(const v1::StepTimeRequest& request,
                              v1::StepTimeResponse* response) {
  return stub_->StepTime(NewContext().get(), request, response);
}

grpc::Status Client::ListHardware(std::string_view family,
                                  v1::ListHardwareResponse* response) {
  v1::ListHardwareRequest request;
  request.set_family(std::string(family));
  return stub_->ListHardware(NewContext().get(), request, response);
}

grpc::Status Client::GetHardware(std::string_view id, v1::Hardware* hardware) {
  v1::GetHardwareRequest request;
  request.set_id(std::string(id));
  v1::GetHardwareResponse response;
  grpc::Status s = stub_->GetHardware(NewContext().get(), request, &response);
  if (s.ok()) hardware->Swap(response.mutable_hardware());
  return s;
}

grpc::Status Client::ListModels(v1::ListModelsResponse* response) {
  return stub_->ListModels(NewContext().get(), v1::ListModelsRequest(),
                           response);
}

grpc::Status Client::GetModel(std::string_view id, v1::Model* model) {
  v1::GetModelRequest request;
  request.set_id(std::string(id));
  v1::GetModelResponse response;
  grpc::Status s = stub_->GetModel(NewContext().get(), request, &response);
  if (s.ok()) model->Swap(response.mutable_model());
  return s;
}

}  // namespace ridgeline::client

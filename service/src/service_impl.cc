// RidgelineServiceImpl: admission, the work pool hand-off and every RPC's
// handler over the current Backend.
#include "ridgeline/service/server.h"

#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "google/protobuf/arena.h"
#include "grpc/support/time.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/message_allocator.h"
#include "ridgeline/service/auth.h"
#include "ridgeline/service/auth_policy.h"
#include "ridgeline/service/status.h"
#include "stream_limits.h"
#include "work_pool.h"

namespace ridgeline::service {
namespace {

grpc::Status NotReady() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, kNotReadyMessage);
}

using Deadline = std::chrono::system_clock::time_point;

// The call's deadline. ServerContext::deadline() overflows past the year
// 2262 (std::chrono's nanoseconds), and a client may send up to
// "grpc-timeout: 99999999H" (11,400 years): that deadline came out in the
// past and the call ended DEADLINE_EXCEEDED at once (issue 26). One past
// 2106 (2^32 s) is none.
std::chrono::system_clock::time_point DeadlineOf(
    const grpc::ServerContextBase* ctx) {
  const gpr_timespec t =
      gpr_convert_clock_type(ctx->raw_deadline(), GPR_CLOCK_REALTIME);
  if (t.tv_sec >= (int64_t{1} << 32)) {
    return std::chrono::system_clock::time_point::max();
  }
  return ctx->deadline();
}

bool Expired(const grpc::ServerContextBase* ctx) {
  return std::chrono::system_clock::now() >= DeadlineOf(ctx);
}

// The client went away or the call's deadline passed: long work stops.
// `deadline`: the call's (a unary call's may be the server's default, see
// UnaryDeadline).
bool Stopped(const grpc::ServerContextBase* ctx, Deadline deadline) {
  return ctx->IsCancelled() || std::chrono::system_clock::now() >= deadline;
}
bool Stopped(const grpc::ServerContextBase* ctx) {
  return Stopped(ctx, DeadlineOf(ctx));
}

// The status of a call that stopped early: DEADLINE_EXCEEDED once the
// deadline has passed (clients retry on it, not on CANCELLED), else
// CANCELLED. `what` names the call in the message.
grpc::Status StoppedStatus(Deadline deadline, std::string_view what) {
  if (std::chrono::system_clock::now() >= deadline) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        std::string(what) + " stopped: the deadline passed");
  }
  return grpc::Status(grpc::StatusCode::CANCELLED,
                      std::string(what) + " stopped: the client cancelled");
}
grpc::Status StoppedStatus(const grpc::ServerContextBase* ctx,
                           std::string_view what) {
  return StoppedStatus(DeadlineOf(ctx), what);
}

}  // namespace

template <typename Request, typename Response>
class ArenaMessageAllocator final
    : public grpc::MessageAllocator<Request, Response> {
 public:
  ~ArenaMessageAllocator() override {
    for (Holder* h : free_) delete h;
  }

  grpc::MessageHolder<Request, Response>* AllocateMessages() override {
    Holder* h = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        h = free_.back();
        free_.pop_back();
      }
    }
    if (h == nullptr) h = new Holder(this);
    h->Create();
    return h;
  }

 private:
  // A FULL Analyze response (4 steps x 14 ops) takes ~40 KB of arena; the
  // first block is inline so a recycled holder allocates nothing.
  static constexpr size_t kInitialBlock = 64 << 10;
  // Idle holders kept for reuse; more than this are freed (bounded memory
  // after a burst).
  static constexpr size_t kMaxFree = 256;

  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    explicit Holder(ArenaMessageAllocator* owner)
        : owner_(owner), arena_(Options(block_.get())) {}
    void Create() {
      this->set_request(
          google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(
          google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override {
      // Frees every block but the inline first one, and runs destructors.
      arena_.Reset();
      owner_->Recycle(this);
    }

   private:
    static google::protobuf::ArenaOptions Options(char* block) {
      google::protobuf::ArenaOptions o;
      o.initial_block = block;
      o.initial_block_size = kInitialBlock;
      return o;
    }
    ArenaMessageAllocator* owner_;
    std::unique_ptr<char[]> block_{new char[kInitialBlock]};
    google::protobuf::Arena arena_;
  };

  void Recycle(Holder* h) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() < kMaxFree) {
        free_.push_back(h);
        return;
      }
    }
    delete h;
  }

  std::mutex mu_;
  std::vector<Holder*> free_;  // guarded by mu_
};

RidgelineServiceImpl::RidgelineServiceImpl(Metrics* metrics,
                                           ServiceRuntime runtime)
    : metrics_(metrics),
      runtime_(runtime),
      analyze_allocator_(
          std::make_unique<ArenaMessageAllocator<v1::AnalyzeRequest,
                                                 v1::AnalyzeResponse>>()) {
  SetMessageAllocatorFor_Analyze(analyze_allocator_.get());
}

RidgelineServiceImpl::~RidgelineServiceImpl() = default;

std::chrono::system_clock::time_point RidgelineServiceImpl::UnaryDeadline(
    const grpc::ServerContextBase* ctx) const {
  const Deadline d = DeadlineOf(ctx);
  // gRPC reports "no deadline" as the latest time point.
  if (d != Deadline::max() || runtime_.default_timeout_seconds <= 0) return d;
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<Deadline::duration>(
             std::chrono::duration<double>(runtime_.default_timeout_seconds));
}

grpc::Status RidgelineServiceImpl::Admit(grpc::ServerContextBase* ctx,
                                         std::string_view method) const {
  if (draining_.load()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "the server is shutting down; retry on another "
                        "replica");
  }
  if (Expired(ctx)) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "the call's deadline passed before it started");
  }
  if (runtime_.auth != nullptr && runtime_.auth->enabled()) {
    const auto& md = ctx->client_metadata();
    const auto it = md.find("authorization");
    const std::string_view value =
        it == md.end() ? std::string_view()
                       : std::string_view(it->second.data(), it->second.size());
    if (absl::Status s =
            Authorize(runtime_.auth, RidgelineMethod(method), value);
        !s.ok()) {
      return ToGrpcStatus(s);
    }
  }
  return grpc::Status::OK;
}

void RidgelineServiceImpl::Offload(grpc::ServerUnaryReactor* reactor,
                                   std::function<void()> work) {
  in_flight_.fetch_add(1);
  if (runtime_.pool == nullptr) {
    work();
    return;
  }
  if (!runtime_.pool->TrySubmit(work)) {
    reactor->Finish(grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("the server is busy: ", runtime_.pool->max_queued(),
                     " calls already wait for its ", runtime_.pool->threads(),
                     " work threads (--max-queued-calls); retry with "
                     "backoff")));
    Done();
  }
}

namespace {

// Runs one unary call to completion on the calling (callback) thread.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* Unary(const RidgelineServiceImpl* impl,
                                std::string_view method,
                                grpc::CallbackServerContext* ctx,
                                const Backend* backend, Response* resp,
                                Call call) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (grpc::Status s = impl->Admit(ctx, method); !s.ok()) {
    reactor->Finish(s);
    return reactor;
  }
  if (backend == nullptr) {
    reactor->Finish(NotReady());
    return reactor;
  }
  absl::StatusOr<Response> r = call(*backend);
  if (r.ok()) *resp = std::move(*r);
  reactor->Finish(ToGrpcStatus(r.status(), ctx));
  return reactor;
}

}  // namespace

namespace {

// An engine-bound unary call: admitted on the callback thread, computed on
// the work pool. A call whose deadline passes or whose client goes away
// while it waits is answered without running the engine.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* Offloaded(RidgelineServiceImpl* impl,
                                    std::string_view method,
                                    grpc::CallbackServerContext* ctx,
                                    Deadline deadline, const Backend* backend,
                                    Response* resp, Call call) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (grpc::Status s = impl->Admit(ctx, method); !s.ok()) {
    reactor->Finish(s);
    return reactor;
  }
  if (backend == nullptr) {
    reactor->Finish(NotReady());
    return reactor;
  }
  impl->Offload(reactor, [impl, ctx, deadline, backend, resp, reactor, call] {
    if (std::chrono::system_clock::now() >= deadline) {
      reactor->Finish(
          grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                       "the call's deadline passed while it waited for a "
                       "work thread"));
    } else if (ctx->IsCancelled()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                                   "the client cancelled the call"));
    } else {
      absl::Status s = call(*backend);
      if (!s.ok()) resp->Clear();
      // CANCELLED comes only from the call's should_stop: the engine
      // stopped a running analysis at the deadline or the client's cancel.
      reactor->Finish(absl::IsCancelled(s) ? StoppedStatus(deadline, "analysis")
                                           : ToGrpcStatus(s, ctx));
    }
    impl->Done();
  });
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* RidgelineServiceImpl::Analyze(
    grpc::CallbackServerContext* ctx, const v1::AnalyzeRequest* req,
    v1::AnalyzeResponse* resp) {
  const Deadline deadline = UnaryDeadline(ctx);
  return Offloaded(this, "Analyze", ctx, deadline, backend_.load(), resp,
                   [req, resp, ctx, deadline](const Backend& b) {
                     return b.Analyze(*req, resp, [ctx, deadline] {
                       return Stopped(ctx, deadline);
                     });
                   });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::AnalyzeKernel(
    grpc::CallbackServerContext* ctx, const v1::AnalyzeKernelRequest* req,
    v1::AnalyzeKernelResponse* resp) {
  const Deadline deadline = UnaryDeadline(ctx);
  return Offloaded(this, "AnalyzeKernel", ctx, deadline, backend_.load(), resp,
                   [req, resp, ctx, deadline](const Backend& b) {
                     return b.AnalyzeKernel(*req, resp, [ctx, deadline] {
                       return Stopped(ctx, deadline);
                     });
                   });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::ListHardware(
    grpc::CallbackServerContext* ctx, const v1::ListHardwareRequest* req,
    v1::ListHardwareResponse* resp) {
  return Unary(this, "ListHardware", ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.ListHardware(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::GetHardware(
    grpc::CallbackServerContext* ctx, const v1::GetHardwareRequest* req,
    v1::GetHardwareResponse* resp) {
  return Unary(this, "GetHardware", ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.GetHardware(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::ListModels(
    grpc::CallbackServerContext* ctx, const v1::ListModelsRequest* req,
    v1::ListModelsResponse* resp) {
  return Unary(this, "ListModels", ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.ListModels(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::GetModel(
    grpc::CallbackServerContext* ctx, const v1::GetModelRequest* req,
    v1::GetModelResponse* resp) {
  return Unary(this, "GetModel", ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.GetModel(*req); });
}

namespace {

// A stream's slot in its method's limiter (none without one), or the
// refusal.
absl::StatusOr<std::optional<StreamLimiter::Stream>> AdmitStream(
    StreamLimiter* limiter, grpc::ServerContextBase* ctx) {
  std::optional<StreamLimiter::Stream> slot;
  if (limiter == nullptr) return slot;
  absl::StatusOr<StreamLimiter::Stream> admitted = limiter->Admit(ctx);
  if (!admitted.ok()) return admitted.status();
  slot.emplace(*std::move(admitted));
  return slot;
}

StreamLimiter::Stream* SlotOf(std::optional<StreamLimiter::Stream>& slot) {
  return slot.has_value() ? &*slot : nullptr;
}

}  // namespace

grpc::Status RidgelineServiceImpl::Sweep(
    grpc::ServerContext* ctx, const v1::SweepRequest* req,
    grpc::ServerWriter<v1::SweepPoint>* writer) {
  if (grpc::Status s = Admit(ctx, "Sweep"); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  auto slot = AdmitStream(runtime_.sweep_streams, ctx);
  if (!slot.ok()) return ToGrpcStatus(slot.status(), ctx);
  StreamLimiter::Stream* stream = SlotOf(*slot);
  absl::Status s = b->Sweep(*req, [&](const v1::SweepPoint& p) {
    // Checked between points so a cancelled or expired sweep stops within
    // one point's engine time.
    if (Stopped(ctx)) return false;
    // A client that stops reading blocks Write once its flow-control window
    // is full; the watchdog cancels it after --sweep-write-timeout-seconds.
    if (!Waiting(stream, [&] { return writer->Write(p); })) return false;
    if (metrics_ != nullptr) metrics_->OnSweepPointSent();
    return true;
  });
  if (absl::IsCancelled(s)) return StoppedStatus(ctx, "sweep");
  return ToGrpcStatus(s, ctx);
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::StepTime(
    grpc::CallbackServerContext* ctx, const v1::StepTimeRequest* req,
    v1::StepTimeResponse* resp) {
  // Polled while the scenario is prepared and between steps.
  const Deadline deadline = UnaryDeadline(ctx);
  return Offloaded(this, "StepTime", ctx, deadline, backend_.load(), resp,
                   [req, resp, ctx, deadline](const Backend& b) {
                     return b.StepTime(*req, resp, [ctx, deadline] {
                       return Stopped(ctx, deadline);
                     });
                   });
}

// The first message carries the scenario (a bad one ends the stream with
// its error); every message's steps are answered in order, a bad step in
// its own result. Ends when the client half-closes, cancels or the
// deadline passes, or after --stream-idle-timeout-seconds without a message
// read or an answer taken by the client.
grpc::Status RidgelineServiceImpl::StepTimeStream(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::StepTimeResponse, v1::StepTimeStreamRequest>*
        stream) {
  if (grpc::Status s = Admit(ctx, "StepTimeStream"); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  auto slot = AdmitStream(runtime_.step_streams, ctx);
  if (!slot.ok()) return ToGrpcStatus(slot.status(), ctx);
  StreamLimiter::Stream* limited = SlotOf(*slot);
  auto stopped = [ctx] { return StoppedStatus(ctx, "step stream"); };
  v1::StepTimeStreamRequest req;
  auto read = [&] {
    return Waiting(limited, [&] { return stream->Read(&req); });
  };
  if (!read()) {
    return ctx->IsCancelled() ? stopped() : grpc::Status::OK;
  }
  if (!req.has_scenario()) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "scenario: must be set in the stream's first message; got unset"));
  }
  // Polled while the scenario is prepared and before every step; the
  // lambda lives as long as the session (this handler).
  const std::function<bool()> should_stop = [ctx] { return Stopped(ctx); };
  absl::StatusOr<std::unique_ptr<Backend::StepSession>> session =
      b->OpenStepSession(req.scenario(), should_stop);
  if (absl::IsCancelled(session.status())) return stopped();
  if (!session.ok()) return ToGrpcStatus(session.status(), ctx);
  v1::StepTimeResponse resp;
  bool first = true;
  do {
    if (Stopped(ctx)) return stopped();
    resp.Clear();
    if (!first && req.has_scenario()) {
      // Only the first message sets the scenario; this one is refused in
      // its answer and the stream goes on.
      resp.set_id(req.id());
      v1::StepTimeResult* r = resp.add_steps();
      r->set_error_code(static_cast<int32_t>(absl::StatusCode::kInvalidArgument));
      r->set_error_message(
          "scenario: must be unset after the stream's first message; got set");
    } else if (first && req.steps_size() == 0) {
      first = false;
      continue;  // the scenario alone: nothing to answer yet
    } else {
      (*session)->Answer(req, &resp);
      // Stopped during the message: its later steps say CANCELLED; the
      // stream ends with the reason.
      if (Stopped(ctx)) return stopped();
    }
    first = false;
    if (!Waiting(limited, [&] { return stream->Write(resp); })) {
      return stopped();
    }
  } while (read());
  return ctx->IsCancelled() ? stopped() : grpc::Status::OK;
}

grpc::Status RidgelineServiceImpl::Explore(
    grpc::ServerContext* ctx, const v1::ExploreRequest* req,
    grpc::ServerWriter<v1::ExploreResponse>* writer) {
  if (grpc::Status s = Admit(ctx, "Explore"); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  auto slot = AdmitStream(runtime_.explore_streams, ctx);
  if (!slot.ok()) return ToGrpcStatus(slot.status(), ctx);
  StreamLimiter::Stream* stream = SlotOf(*slot);
  auto stop = [ctx] { return Stopped(ctx); };
  absl::Status s = b->Explore(
      *req,
      [&](const v1::ExploreResponse& m) {
        if (stop()) return false;
        // A client that stops reading is cancelled after
        // --stream-idle-timeout-seconds.
        return Waiting(stream, [&] { return writer->Write(m); });
      },
      stop);
  if (absl::IsCancelled(s)) return StoppedStatus(ctx, "explore");
  return ToGrpcStatus(s, ctx);
}

grpc::Status RidgelineServiceImpl::Plan(grpc::ServerContext* ctx,
                                        const v1::PlanRequest* req,
                                        v1::PlanResponse* resp) {
  if (grpc::Status s = Admit(ctx, "Plan"); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  // Polled by the simulations.
  const Deadline deadline = UnaryDeadline(ctx);
  absl::StatusOr<v1::PlanResponse> r =
      b->Plan(*req, [ctx, deadline] { return Stopped(ctx, deadline); });
  if (absl::IsCancelled(r.status())) {
    return StoppedStatus(deadline, "plan");
  }
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status(), ctx);
}

grpc::Status RidgelineServiceImpl::Simulate(grpc::ServerContext* ctx,
                                            const v1::SimulateRequest* req,
                                            v1::SimulateResponse* resp) {
  if (grpc::Status s = Admit(ctx, "Simulate"); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  const Deadline deadline = UnaryDeadline(ctx);
  absl::StatusOr<v1::SimulateResponse> r =
      b->Simulate(*req, [ctx, deadline] { return Stopped(ctx, deadline); });
  if (absl::IsCancelled(r.status())) {
    return StoppedStatus(deadline, "simulate");
  }
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status(), ctx);
}

grpc::Status RidgelineServiceImpl::ExploreSensitivity(
    grpc::ServerContext* ctx, const v1::ExploreSensitivityRequest* req,
    v1::ExploreSensitivityResponse* resp) {
  if (grpc::Status s = Admit(ctx, "ExploreSensitivity"); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  absl::StatusOr<v1::ExploreSensitivityResponse> r = b->ExploreSensitivity(*req);
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status(), ctx);
}

}  // namespace ridgeline::service

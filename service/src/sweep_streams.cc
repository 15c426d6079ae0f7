#include "sweep_streams.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ridgeline::service {

SweepStreams::SweepStreams(
    SweepStreamLimits limits,
    std::function<void(const std::string& client)> on_timeout)
    : limits_(limits), on_timeout_(std::move(on_timeout)) {
  watchdog_ = std::thread([this] { Watch(); });
}

SweepStreams::~SweepStreams() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  watchdog_.join();
}

std::string SweepStreams::ClientOf(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  const size_t first = peer.find(':');
  // "unix:/path" and addresses without a port stay whole.
  if (colon == std::string::npos || colon == first) return peer;
  return peer.substr(0, colon);
}

absl::StatusOr<SweepStreams::Stream> SweepStreams::Admit(
    grpc::ServerContext* ctx) {
  const std::string client = ClientOf(ctx->peer());
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int64_t>(streams_.size()) >= limits_.max_streams) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sweep: the server already runs ", streams_.size(),
        " Sweep streams, its limit (--max-sweep-streams=", limits_.max_streams,
        "); retry later"));
  }
  int64_t& mine = per_client_[client];
  if (mine >= limits_.max_streams_per_client) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sweep: this client (", client, ") already has ", mine,
        " Sweep streams open, the per-client limit "
        "(--max-sweep-streams-per-client=",
        limits_.max_streams_per_client,
        "); read or cancel them before opening more"));
  }
  ++mine;
  const uint64_t id = next_id_++;
  streams_.emplace(id, Entry{ctx, client, {}, false, false});
  return Stream(this, id);
}

int64_t SweepStreams::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(streams_.size());
}

void SweepStreams::Release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  if (--per_client_[it->second.client] <= 0) {
    per_client_.erase(it->second.client);
  }
  streams_.erase(it);
}

SweepStreams::Stream::Stream(Stream&& other) noexcept
    : owner_(other.owner_), id_(other.id_) {
  other.owner_ = nullptr;
}

SweepStreams::Stream::~Stream() {
  if (owner_ != nullptr) owner_->Release(id_);
}

void SweepStreams::Stream::BeginWrite() {
  std::lock_guard<std::mutex> lock(owner_->mu_);
  Entry& e = owner_->streams_.at(id_);
  e.writing = true;
  e.write_since = std::chrono::steady_clock::now();
}

void SweepStreams::Stream::EndWrite() {
  std::lock_guard<std::mutex> lock(owner_->mu_);
  owner_->streams_.at(id_).writing = false;
}

void SweepStreams::Watch() {
  const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(limits_.write_timeout_seconds));
  // Checks a few times per timeout, at most every second.
  const auto period = std::min<std::chrono::nanoseconds>(
      std::chrono::seconds(1), std::max<std::chrono::nanoseconds>(
                                   timeout / 4, std::chrono::milliseconds(10)));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stopping_; })) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::string> timed_out;
    for (auto& [id, e] : streams_) {
      if (e.writing && !e.cancelled && now - e.write_since > timeout) {
        // TryCancel makes the blocked Write return false; the handler then
        // ends and releases its thread.
        e.cancelled = true;
        e.ctx->TryCancel();
        timed_out.push_back(e.client);
      }
    }
    lock.unlock();
    for (const std::string& client : timed_out) {
      if (on_timeout_) on_timeout_(client);
    }
    lock.lock();
  }
}

}  // namespace ridgeline::service

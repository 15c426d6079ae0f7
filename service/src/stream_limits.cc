#include "stream_limits.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ridgeline::service {

StreamLimiter::StreamLimiter(
    StreamLimits limits,
    std::function<void(const std::string& client)> on_timeout)
    : limits_(std::move(limits)), on_timeout_(std::move(on_timeout)) {
  watchdog_ = std::thread([this] { Watch(); });
}

StreamLimiter::~StreamLimiter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  watchdog_.join();
}

std::string StreamLimiter::ClientOf(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  const size_t first = peer.find(':');
  // "unix:/path" and addresses without a port stay whole.
  if (colon == std::string::npos || colon == first) return peer;
  return peer.substr(0, colon);
}

absl::StatusOr<StreamLimiter::Stream> StreamLimiter::Admit(
    grpc::ServerContextBase* ctx) {
  const std::string client = ClientOf(ctx->peer());
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int64_t>(streams_.size()) >= limits_.max_streams) {
    return absl::ResourceExhaustedError(absl::StrCat(
        limits_.method, ": the server already runs ", streams_.size(), " ",
        limits_.method, " streams, its limit (", limits_.max_streams_flag, "=",
        limits_.max_streams, "); retry later"));
  }
  int64_t& mine = per_client_[client];
  if (mine >= limits_.max_streams_per_client) {
    return absl::ResourceExhaustedError(absl::StrCat(
        limits_.method, ": this client (", client, ") already has ", mine, " ",
        limits_.method, " streams open, the per-client limit (",
        limits_.per_client_flag, "=", limits_.max_streams_per_client,
        "); read or cancel them before opening more"));
  }
  ++mine;
  const uint64_t id = next_id_++;
  streams_.emplace(id, Entry{ctx, client, {}, false, false});
  return Stream(this, id);
}

int64_t StreamLimiter::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(streams_.size());
}

void StreamLimiter::Release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  if (--per_client_[it->second.client] <= 0) {
    per_client_.erase(it->second.client);
  }
  streams_.erase(it);
}

StreamLimiter::Stream::Stream(Stream&& other) noexcept
    : owner_(other.owner_), id_(other.id_) {
  other.owner_ = nullptr;
}

StreamLimiter::Stream::~Stream() {
  if (owner_ != nullptr) owner_->Release(id_);
}

void StreamLimiter::Stream::BeginWait() {
  std::lock_guard<std::mutex> lock(owner_->mu_);
  Entry& e = owner_->streams_.at(id_);
  e.waiting = true;
  e.wait_since = std::chrono::steady_clock::now();
}

void StreamLimiter::Stream::EndWait() {
  std::lock_guard<std::mutex> lock(owner_->mu_);
  owner_->streams_.at(id_).waiting = false;
}

void StreamLimiter::Watch() {
  const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(limits_.idle_timeout_seconds));
  // Checks a few times per timeout, at most every second.
  const auto period = std::min<std::chrono::nanoseconds>(
      std::chrono::seconds(1), std::max<std::chrono::nanoseconds>(
                                   timeout / 4, std::chrono::milliseconds(10)));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stopping_; })) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::string> timed_out;
    for (auto& [id, e] : streams_) {
      if (e.waiting && !e.cancelled && now - e.wait_since > timeout) {
        // TryCancel makes the blocked Read or Write return false; the
        // handler then ends and releases its thread.
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

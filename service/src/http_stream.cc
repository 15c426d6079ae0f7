#include "http_stream.h"

#include <utility>

namespace ridgeline::service {

StreamRelay::StreamRelay(size_t capacity,
                         std::function<absl::Status(const Emit&)> produce)
    : capacity_(capacity < 1 ? 1 : capacity) {
  thread_ = std::thread([this, produce = std::move(produce)] {
    absl::Status s = produce([this](std::string line) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock,
               [this] { return cancelled_ || lines_.size() < capacity_; });
      if (cancelled_) return false;
      lines_.push_back(std::move(line));
      cv_.notify_all();
      std::function<void()> wake = wake_;
      lock.unlock();
      if (wake) wake();
      return true;
    });
    std::unique_lock<std::mutex> lock(mu_);
    status_ = std::move(s);
    done_ = true;
    cv_.notify_all();
    std::function<void()> wake = std::move(wake_);
    lock.unlock();
    if (wake) wake();
  });
}

StreamRelay::~StreamRelay() {
  Cancel();
  if (thread_.joinable()) thread_.join();
}

absl::Status StreamRelay::WaitFirst() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_ || !lines_.empty(); });
  return lines_.empty() ? status_ : absl::OkStatus();
}

bool StreamRelay::Next(std::string* line) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_ || !lines_.empty(); });
  if (lines_.empty()) return false;
  *line = std::move(lines_.front());
  lines_.pop_front();
  cv_.notify_all();  // room for the producer
  return true;
}

bool StreamRelay::TryNext(std::string* line, bool* ended) {
  std::lock_guard<std::mutex> lock(mu_);
  *ended = lines_.empty() && done_;
  if (lines_.empty()) return false;
  *line = std::move(lines_.front());
  lines_.pop_front();
  cv_.notify_all();  // room for the producer
  return true;
}

void StreamRelay::SetWakeup(std::function<void()> wake) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!done_) wake_ = std::move(wake);
}

absl::Status StreamRelay::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void StreamRelay::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  cv_.notify_all();
}

}  // namespace ridgeline::service

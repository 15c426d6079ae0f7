// The relay between a streaming Backend call and the HTTP writer: one run
// of the call, its lines in order, its status before any line when it fails
// first, and a bounded queue that a cancel unblocks.
#include "http_stream.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ridgeline::service {
namespace {

TEST(StreamRelayTest, LinesInOrderThenTheStatus) {
  std::atomic<int> runs{0};
  StreamRelay relay(2, [&](const StreamRelay::Emit& emit) {
    ++runs;
    for (int i = 0; i < 5; ++i) {
      if (!emit(std::to_string(i))) return absl::CancelledError("stopped");
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(relay.WaitFirst().ok());
  std::vector<std::string> got;
  for (std::string line; relay.Next(&line);) got.push_back(line);
  EXPECT_EQ(got, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  EXPECT_TRUE(relay.status().ok());
  EXPECT_EQ(runs.load(), 1);  // the call ran once, not once more per peek
}

TEST(StreamRelayTest, AFailureBeforeAnyLineIsWaitFirstsAnswer) {
  StreamRelay relay(4, [](const StreamRelay::Emit&) {
    return absl::InvalidArgumentError("batch_sizes[0]: must be >= 1");
  });
  const absl::Status first = relay.WaitFirst();
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(first.message(), "batch_sizes[0]: must be >= 1");
  std::string line;
  EXPECT_FALSE(relay.Next(&line));
}

TEST(StreamRelayTest, AFailureAfterLinesComesAfterThem) {
  StreamRelay relay(4, [](const StreamRelay::Emit& emit) {
    emit("a");
    return absl::DeadlineExceededError("late");
  });
  EXPECT_TRUE(relay.WaitFirst().ok());
  std::string line;
  ASSERT_TRUE(relay.Next(&line));
  EXPECT_EQ(line, "a");
  EXPECT_FALSE(relay.Next(&line));
  EXPECT_EQ(relay.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(StreamRelayTest, AFullQueueHoldsTheCallAndCancelReleasesIt) {
  std::atomic<int> emitted{0};
  auto relay = std::make_unique<StreamRelay>(
      3, [&](const StreamRelay::Emit& emit) {
        for (int i = 0; i < 1000000; ++i) {
          if (!emit("x")) return absl::CancelledError("consumer gone");
          ++emitted;
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(relay->WaitFirst().ok());
  std::string line;
  ASSERT_TRUE(relay->Next(&line));  // one taken: at most 3 + 1 emitted
  relay->Cancel();
  relay.reset();  // joins the call: it saw the cancel
  EXPECT_LE(emitted.load(), 4);
  EXPECT_GE(emitted.load(), 1);
}

}  // namespace
}  // namespace ridgeline::service

// The server's cache of hosted hook answers (plugin_host/src/hook_cache.h):
// exact keys, faults kept, the `near` hint that makes a repeated decode's
// lookups sequential, a full cache storing nothing more, and readers that
// never see a half-written answer while the writer appends.
#include "hook_cache.h"

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ridgeline::plugin_host {
namespace {

using engine::MathType;
using engine::OpClass;
using engine::OpShape;

// Decode step `i` of one attention op: FLOPs and bytes grow with the KV.
OpShape Step(int64_t i, OpClass c = OpClass::kAttention) {
  return OpShape{c, MathType::kBf16, 1, 1e6 + 4096.0 * static_cast<double>(i),
                 2e6 + 8192.0 * static_cast<double>(i)};
}

HookAnswer Value(double c, double m) {
  return HookAnswer{engine::OpEfficiency{c, m}, absl::OkStatus()};
}

TEST(HookCache, FindsWhatWasStoredByExactShape) {
  HookCache cache(1024);
  HookAnswer got;
  EXPECT_FALSE(cache.Find(0, Step(0), &got, nullptr));
  EXPECT_EQ(cache.Insert(0, Step(0), Value(0.5, 0.75)), 0u);
  ASSERT_TRUE(cache.Find(0, Step(0), &got, nullptr));
  ASSERT_TRUE(got.value.has_value());
  EXPECT_EQ(got.value->compute, 0.5);
  EXPECT_EQ(got.value->memory, 0.75);
  EXPECT_TRUE(got.fault.ok());
  // Another platform, class, math, token count or one bit of FLOPs: others.
  EXPECT_FALSE(cache.Find(1, Step(0), &got, nullptr));
  EXPECT_FALSE(cache.Find(0, Step(0, OpClass::kGemm), &got, nullptr));
  OpShape s = Step(0);
  s.math = MathType::kFp8;
  EXPECT_FALSE(cache.Find(0, s, &got, nullptr));
  s = Step(0);
  s.tokens = 2;
  EXPECT_FALSE(cache.Find(0, s, &got, nullptr));
  s = Step(0);
  s.flops = std::nextafter(s.flops, 2 * s.flops);
  EXPECT_FALSE(cache.Find(0, s, &got, nullptr));
  // No opinion and a fault are answers too.
  EXPECT_EQ(cache.Insert(0, Step(1), HookAnswer{}), 1u);
  EXPECT_EQ(cache.Insert(0, Step(2),
                         HookAnswer{std::nullopt,
                                    absl::InternalError("hook returned NaN")}),
            2u);
  ASSERT_TRUE(cache.Find(0, Step(1), &got, nullptr));
  EXPECT_FALSE(got.value.has_value());
  EXPECT_TRUE(got.fault.ok());
  ASSERT_TRUE(cache.Find(0, Step(2), &got, nullptr));
  EXPECT_FALSE(got.value.has_value());
  EXPECT_EQ(got.fault.message(), "hook returned NaN");
  EXPECT_EQ(cache.size(), 3u);
}

// Two ops of a decode step stored in step order (entries 0, 1, 2, ...:
// attention of step i at 2i, the other op at 2i + 1). Asked again in that
// order, each op's `near` moves two entries on per step; a wrong or stale
// hint still finds the answer through the index.
TEST(HookCache, NearFollowsAnOpStepByStep) {
  HookCache cache(1024);
  for (int64_t i = 0; i < 100; ++i) {
    ASSERT_EQ(cache.Insert(0, Step(i), Value(0.5, 0.5)),
              static_cast<uint32_t>(2 * i));
    ASSERT_EQ(cache.Insert(0, Step(i, OpClass::kElementwise), Value(1, 1)),
              static_cast<uint32_t>(2 * i + 1));
  }
  uint32_t attention = HookCache::kNoEntry, other = HookCache::kNoEntry;
  HookAnswer got;
  for (int64_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(cache.Find(0, Step(i), &got, &attention));
    EXPECT_EQ(attention, static_cast<uint32_t>(2 * i));
    ASSERT_TRUE(cache.Find(0, Step(i, OpClass::kElementwise), &got, &other));
    EXPECT_EQ(other, static_cast<uint32_t>(2 * i + 1));
    EXPECT_EQ(got.value->compute, 1);
  }
  // Past the last entry, far behind, or the last step again: the index.
  for (uint32_t hint : {199u, 150u, 0u, 5000u}) {
    uint32_t near = hint;
    ASSERT_TRUE(cache.Find(0, Step(10), &got, &near)) << hint;
    EXPECT_EQ(near, 20u) << hint;
    EXPECT_EQ(got.value->compute, 0.5);
  }
  uint32_t near = 198;
  EXPECT_FALSE(cache.Find(0, Step(100), &got, &near));
  EXPECT_EQ(near, 198u);  // unchanged on a miss
}

// Room for the 1,024 entries asked (the smallest cache): the 1,025th is
// not stored, and is then simply not found.
TEST(HookCache, AFullCacheStoresNothingMore) {
  HookCache cache(1);
  for (int64_t i = 0; i < 1024; ++i) {
    ASSERT_NE(cache.Insert(0, Step(i), Value(0.5, 0.5)), HookCache::kNoEntry)
        << i;
  }
  EXPECT_EQ(cache.Insert(0, Step(1024), Value(0.5, 0.5)), HookCache::kNoEntry);
  HookAnswer got;
  EXPECT_FALSE(cache.Find(0, Step(1024), &got, nullptr));
  EXPECT_TRUE(cache.Find(0, Step(1023), &got, nullptr));
  EXPECT_EQ(cache.size(), 1024u);
}

// One writer appends while readers look up: whatever a reader finds is the
// answer stored for that shape (compute = the step's own number), never a
// half-written entry; after the writer, every shape is found.
TEST(HookCache, ReadersSeeOnlyWholeAnswersWhileTheWriterAppends) {
  constexpr int64_t kShapes = 20000;
  HookCache cache(kShapes);
  auto answer = [](int64_t i) {
    return Value(static_cast<double>(i + 1) / kShapes, 0.5);
  };
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0}, found{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      uint32_t near = HookCache::kNoEntry;
      HookAnswer got;
      while (!done.load()) {
        for (int64_t i = t; i < kShapes; i += 7) {
          if (!cache.Find(0, Step(i), &got, &near)) continue;
          found.fetch_add(1);
          if (!got.value.has_value() ||
              got.value->compute != answer(i).value->compute ||
              got.value->memory != 0.5) {
            wrong.fetch_add(1);
          }
        }
      }
    });
  }
  for (int64_t i = 0; i < kShapes; ++i) {
    ASSERT_NE(cache.Insert(0, Step(i), answer(i)), HookCache::kNoEntry);
  }
  done.store(true);
  for (std::thread& r : readers) r.join();
  EXPECT_EQ(wrong.load(), 0);
  HookAnswer got;
  for (int64_t i = 0; i < kShapes; ++i) {
    ASSERT_TRUE(cache.Find(0, Step(i), &got, nullptr)) << i;
    EXPECT_EQ(got.value->compute, answer(i).value->compute);
  }
}

}  // namespace
}  // namespace ridgeline::plugin_host

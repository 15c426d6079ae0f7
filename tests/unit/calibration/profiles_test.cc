#include "ridgeline/calibration/profiles.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ridgeline::calibration {
namespace {

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

TEST(ProfileJson, RoundTrip) {
  Profile p;
  p.name = "nvidia.llama.cpp-cuda";
  p.family = "nvidia";
  p.framework = "llama.cpp-cuda";
  p.efficiency.memory.fill(0.75);
  p.efficiency.compute[0] = 0.5;
  p.efficiency.per_step_overhead_seconds = 0.002;
  p.efficiency.per_request_overhead_seconds = 0.005;
  p.fp16_accumulation = true;
  p.fitted_from = "unit test";
  auto back = ParseProfileJson(ProfileToJson(p), "x.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, p.name);
  EXPECT_EQ(back->family, "nvidia");
  EXPECT_EQ(back->efficiency.memory, p.efficiency.memory);
  EXPECT_EQ(back->efficiency.compute, p.efficiency.compute);
  EXPECT_EQ(back->efficiency.per_step_overhead_seconds, 0.002);
  EXPECT_EQ(back->efficiency.per_request_overhead_seconds, 0.005);
  EXPECT_TRUE(back->fp16_accumulation);
  EXPECT_EQ(back->efficiency.profile_name, p.name);
  // The link share is written only where fitted (serving profiles).
  EXPECT_EQ(back->efficiency.link, 1);
  EXPECT_EQ(ProfileToJson(p).find("\"link\""), std::string::npos);
  p.efficiency.link = 0.3;
  auto linked = ParseProfileJson(ProfileToJson(p), "x.json");
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ(linked->efficiency.link, 0.3);
  // So is the cost per collective call.
  EXPECT_EQ(ProfileToJson(p).find("collective_call_seconds"), std::string::npos);
  p.efficiency.collective_call_seconds = 40e-6;
  auto called = ParseProfileJson(ProfileToJson(p), "x.json");
  ASSERT_TRUE(called.ok()) << called.status();
  EXPECT_EQ(called->efficiency.collective_call_seconds, 40e-6);
  auto bad_link = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"nvidia",
          "efficiency":{"link":1.5}})",
      "l.json");
  ASSERT_EQ(bad_link.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Msg(bad_link.status()).find("efficiency.link"), std::string::npos)
      << bad_link.status();
  EXPECT_NE(Msg(bad_link.status()).find("(0, 1]"), std::string::npos);
}

TEST(ProfileJson, PowerExponentAndDequantisedSharesRoundTrip) {
  Profile p;
  p.name = "nvidia.llama.cpp-cuda";
  p.family = "nvidia";
  p.framework = "llama.cpp-cuda";
  // Written only where fitted: a plain profile has none of the keys.
  EXPECT_EQ(ProfileToJson(p).find("compute_power_exponent"), std::string::npos);
  EXPECT_EQ(ProfileToJson(p).find("dequantized_compute_share"), std::string::npos);
  EXPECT_EQ(ProfileToJson(p).find("inline_ecc"), std::string::npos);
  p.efficiency.compute_power_exponent = 0.45;
  p.efficiency.inline_ecc = true;
  p.efficiency.dequantized_compute_share = 0.8;
  p.efficiency.dequantized_compute_share_by_format = {{"gguf-q4_0", 0.9},
                                                      {"gguf-q4_k_m", 0.75}};
  auto back = ParseProfileJson(ProfileToJson(p), "x.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->efficiency.compute_power_exponent, 0.45);
  EXPECT_TRUE(back->efficiency.inline_ecc);
  EXPECT_EQ(back->efficiency.dequantized_compute_share, 0.8);
  EXPECT_EQ(back->efficiency.dequantized_compute_share_by_format,
            p.efficiency.dequantized_compute_share_by_format);
  EXPECT_EQ(back->efficiency.DequantizedComputeShare("gguf-q4_k_m"), 0.75);
  EXPECT_EQ(back->efficiency.DequantizedComputeShare("gguf-q8_0"), 0.8);
  // Out of range: the field, its range and the value are named.
  for (const auto& [text, field, range] :
       {std::tuple{R"("compute_power_exponent":1.5)",
                   "efficiency.compute_power_exponent", "[0, 1]"},
        std::tuple{R"("dequantized_compute_share":0)",
                   "efficiency.dequantized_compute_share", "(0, 1]"},
        std::tuple{R"("dequantized_compute_share_by_format":{"gguf-q4_0":2})",
                   "efficiency.dequantized_compute_share_by_format.gguf-q4_0",
                   "(0, 1]"},
        std::tuple{R"("inline_ecc":1)", "efficiency.inline_ecc",
                   "true or false"}}) {
    auto bad = ParseProfileJson(
        absl::StrCat(R"({"format_version":1,"name":"a","family":"nvidia",)",
                     R"("efficiency":{)", text, "}}"),
        "b.json");
    ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(Msg(bad.status()).find(field), std::string::npos) << bad.status();
    EXPECT_NE(Msg(bad.status()).find(range), std::string::npos) << bad.status();
  }
}

TEST(ProfileJson, KernelModelRoundTripsEveryField) {
  // Every field away from its default, each a different value, so a key
  // the writer or the reader forgets (or swaps) fails here.
  Profile p;
  p.name = "nvidia-h100-sxm-80gb.tensorrt-llm";
  p.hardware_id = "nvidia-h100-sxm-80gb";
  p.framework = "tensorrt-llm";
  engine::KernelModel& m = p.efficiency.kernel;
  m.present = true;
  m.per_call_seconds = {2.5e-6, 7.5e-6, 1.5e-6, 0.5e-6};
  m.gemm.compute = {0.91, 0.92, 0.93};
  m.gemm.memory = {0.81, 0.82, 0.83};
  m.gemm_fp8.compute = {0.71, 0.72, 0.73};
  m.gemm_fp8.memory = {0.61, 0.62, 0.63};
  m.gemm_fp8_fitted = true;
  m.fp8_quantization_seconds = 9.6e-6;
  m.wave_quantization = 0.25;
  m.gemm_seconds_per_k_step = 88e-9;
  m.gemm_split_k_depth_bytes = 4096;
  m.attention_compute = 0.55;
  m.attention_memory = 0.82;
  m.attention_cta_bandwidth_share = 2;
  m.attention_seconds_per_cta = 7.6e-9;
  m.attention_seconds_per_query_head = 0.55e-9;
  m.attention_split_merge_seconds = 4.6e-6;
  m.attention_max_shared_group = 32;
  m.attention_group_reread_share = 0.4;
  m.attention_8bit_kv_per_call_seconds = 5.5e-6;
  m.attention_8bit_kv_fitted = true;
  m.elementwise_memory = 0.66;
  m.l2_resident_speedup = 2.2;
  absl::StatusOr<Profile> back = ParseProfileJson(ProfileToJson(p), "k.json");
  ASSERT_TRUE(back.ok()) << back.status();
  const engine::KernelModel& b = back->efficiency.kernel;
  EXPECT_TRUE(b.present);
  EXPECT_EQ(b.per_call_seconds, m.per_call_seconds);
  EXPECT_EQ(b.gemm.compute, m.gemm.compute);
  EXPECT_EQ(b.gemm.memory, m.gemm.memory);
  EXPECT_EQ(b.gemm_fp8.compute, m.gemm_fp8.compute);
  EXPECT_EQ(b.gemm_fp8.memory, m.gemm_fp8.memory);
  EXPECT_TRUE(b.gemm_fp8_fitted);
  EXPECT_EQ(b.fp8_quantization_seconds, m.fp8_quantization_seconds);
  EXPECT_EQ(b.wave_quantization, m.wave_quantization);
  EXPECT_EQ(b.gemm_seconds_per_k_step, m.gemm_seconds_per_k_step);
  EXPECT_EQ(b.gemm_split_k_depth_bytes, m.gemm_split_k_depth_bytes);
  EXPECT_EQ(b.attention_compute, m.attention_compute);
  EXPECT_EQ(b.attention_memory, m.attention_memory);
  EXPECT_EQ(b.attention_cta_bandwidth_share, m.attention_cta_bandwidth_share);
  EXPECT_EQ(b.attention_seconds_per_cta, m.attention_seconds_per_cta);
  EXPECT_EQ(b.attention_seconds_per_query_head, m.attention_seconds_per_query_head);
  EXPECT_EQ(b.attention_split_merge_seconds, m.attention_split_merge_seconds);
  EXPECT_EQ(b.attention_max_shared_group, m.attention_max_shared_group);
  EXPECT_EQ(b.attention_group_reread_share, m.attention_group_reread_share);
  EXPECT_EQ(b.attention_8bit_kv_per_call_seconds, m.attention_8bit_kv_per_call_seconds);
  EXPECT_TRUE(b.attention_8bit_kv_fitted);
  EXPECT_EQ(b.elementwise_memory, m.elementwise_memory);
  EXPECT_EQ(b.l2_resident_speedup, m.l2_resident_speedup);
  // Out of range: named with its range and value.
  std::string text = ProfileToJson(p);
  const std::string key = "\"l2_resident_speedup\": 2.2";
  ASSERT_NE(text.find(key), std::string::npos) << text;
  text.replace(text.find(key), key.size(), "\"l2_resident_speedup\": 0.5");
  absl::StatusOr<Profile> bad = ParseProfileJson(text, "k.json");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Msg(bad.status()).find("kernel_model.l2_resident_speedup: must be in [1, 1000], got 0.5"),
            std::string::npos)
      << bad.status();
}

TEST(ProfileJson, ErrorsNameFileFieldRangeAndValue) {
  auto bad = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"nvidia",
          "efficiency":{"memory":{"gemv":1.5}}})",
      "dir/a.json");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Msg(bad.status()).find("dir/a.json"), std::string::npos) << bad.status();
  EXPECT_NE(Msg(bad.status()).find("efficiency.memory.gemv"), std::string::npos);
  EXPECT_NE(Msg(bad.status()).find("(0, 1]"), std::string::npos);
  EXPECT_NE(Msg(bad.status()).find("1.5"), std::string::npos);

  auto version = ParseProfileJson(R"({"format_version":2,"name":"a","family":"x"})", "v.json");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(Msg(version.status()).find("v.json: format_version"), std::string::npos);

  auto cls = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"x","efficiency":{"compute":{"conv":1}}})",
      "c.json");
  ASSERT_FALSE(cls.ok());
  EXPECT_NE(Msg(cls.status()).find("efficiency.compute.conv"), std::string::npos);

  auto overhead = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"x","efficiency":{"per_step_overhead_seconds":-1}})",
      "o.json");
  ASSERT_FALSE(overhead.ok());
  EXPECT_NE(Msg(overhead.status()).find("efficiency.per_step_overhead_seconds"),
            std::string::npos);

  auto request = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"x","efficiency":{"per_request_overhead_seconds":2}})",
      "r.json");
  ASSERT_FALSE(request.ok());
  EXPECT_NE(Msg(request.status()).find("r.json: efficiency.per_request_overhead_seconds"),
            std::string::npos)
      << request.status();
  EXPECT_NE(Msg(request.status()).find("[0, 1]"), std::string::npos);

  auto acc = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"x","fp16_accumulation":"yes"})", "f.json");
  ASSERT_FALSE(acc.ok());
  EXPECT_NE(Msg(acc.status()).find("f.json: fp16_accumulation"), std::string::npos)
      << acc.status();

  auto keyless = ParseProfileJson(R"({"format_version":1,"name":"a"})", "k.json");
  ASSERT_FALSE(keyless.ok());
  auto junk = ParseProfileJson("{", "j.json");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(Msg(junk.status()).find("j.json"), std::string::npos);
}

Profile Make(std::string name, std::string id, std::string family, std::string fw) {
  Profile p;
  p.name = std::move(name);
  p.hardware_id = std::move(id);
  p.family = std::move(family);
  p.framework = std::move(fw);
  return p;
}

TEST(ProfileStore, MatchPrecedence) {
  auto store = ProfileStore::FromProfiles({
      Make("id-fw", "nvidia-l40s", "", "tensorrt-llm"),
      Make("family-fw", "", "nvidia", "tensorrt-llm"),
      Make("fw-only", "", "", "tensorrt-llm"),
      Make("id-any", "nvidia-l40s", "", ""),
      Make("family-any", "", "nvidia", ""),
      Make("family-other-fw", "", "nvidia", "vllm"),
  });
  auto name = [&](std::string_view id, std::string_view fam, std::string_view fw) {
    const Profile* p = store->Match(id, fam, fw);
    return p ? p->name : std::string("none");
  };
  // 1. exact id + framework (by prefix: "tensorrt-llm-0.6.1").
  EXPECT_EQ(name("nvidia-l40s", "nvidia", "tensorrt-llm-0.6.1"), "id-fw");
  // 2. family + framework.
  EXPECT_EQ(name("nvidia-h100-sxm-80gb", "nvidia", "tensorrt-llm-0.5"), "family-fw");
  // 3. framework alone for another family.
  EXPECT_EQ(name("amd-mi300x", "amd", "tensorrt-llm"), "fw-only");
  // 4. id with any framework, framework-less profile first.
  EXPECT_EQ(name("nvidia-l40s", "nvidia", "llama.cpp-cuda"), "id-any");
  // 5. family with any framework.
  EXPECT_EQ(name("nvidia-a40", "nvidia", "llama.cpp-cuda"), "family-any");
  // Nothing for an unknown family and framework.
  EXPECT_EQ(name("apple-m2-10c", "apple", "llama.cpp-metal"), "none");
  // Prefix matching stops at separators: "tensorrt-llmx" is another framework.
  EXPECT_EQ(name("amd-mi300x", "amd", "tensorrt-llmx"), "none");
}

// "--framework vllm": the same runtime built for the hardware
// ("vllm-rocm") is that framework; on other hardware of the family it still
// wins over another framework on this very hardware; and how it matched is
// said in words.
TEST(ProfileStore, AskedFrameworkMatchesItsHardwareBuildsFirst) {
  auto store = ProfileStore::FromProfiles({
      Make("amd-mi300x.aiter-ck", "amd-mi300x", "", "aiter-ck"),
      Make("amd-mi300x.vllm-rocm", "amd-mi300x", "", "vllm-rocm"),
      Make("amd.vllm-rocm", "", "amd", "vllm-rocm"),
      Make("nvidia-l40s.flashinfer", "nvidia-l40s", "", "flashinfer"),
      Make("nvidia.vllm", "", "nvidia", "vllm"),
  });
  auto name = [&](std::string_view id, std::string_view fam, std::string_view fw) {
    const Profile* p = store->Match(id, fam, fw);
    return p ? p->name : std::string("none");
  };
  EXPECT_EQ(name("amd-mi300x", "amd", "vllm"), "amd-mi300x.vllm-rocm");
  EXPECT_EQ(name("amd-mi325x", "amd", "vllm"), "amd.vllm-rocm");
  // Family + vllm beats this hardware's flashinfer profile.
  EXPECT_EQ(name("nvidia-l40s", "nvidia", "vllm"), "nvidia.vllm");
  // "vllmx" is not vllm, and "vllm" does not reach "vllmrocm"-like keys.
  EXPECT_EQ(name("nvidia-l40s", "nvidia", "vllmx"), "nvidia-l40s.flashinfer");
  EXPECT_TRUE(SameFramework("vllm-rocm", "vllm"));
  EXPECT_TRUE(SameFramework("tensorrt-llm", "tensorrt-llm-0.6.1"));
  EXPECT_FALSE(SameFramework("vllm", "vllmx"));

  const Profile* p = store->Match("amd-mi300x", "amd", "vllm");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(DescribeMatch(*p, "amd-mi300x", "vllm"),
            "hardware \"amd-mi300x\" + framework \"vllm-rocm\" (asked \"vllm\")");
  p = store->Match("amd-mi325x", "amd", "vllm-rocm");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(DescribeMatch(*p, "amd-mi325x", "vllm-rocm"),
            "other hardware of family \"amd\" + framework \"vllm-rocm\"");
  p = store->Match("amd-mi300x", "amd", "sglang");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "amd-mi300x.aiter-ck");
  EXPECT_EQ(DescribeMatch(*p, "amd-mi300x", "sglang"),
            "hardware \"amd-mi300x\" only: fitted with framework \"aiter-ck\", "
            "not the \"sglang\" asked for (no profile for it on amd-mi300x, its "
            "family or any hardware)");
}

TEST(ProfileStore, FindListsCloseNames) {
  auto store = ProfileStore::FromProfiles({Make("nvidia.vllm", "", "nvidia", "vllm")});
  ASSERT_TRUE(store->Find("nvidia.vllm").ok());
  auto missing = store->Find("nvidia.vlm");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(Msg(missing.status()).find("nvidia.vllm"), std::string::npos);
}

TEST(ProfileStore, LoadDirectoryNamesTheBadFile) {
  auto dir = std::filesystem::temp_directory_path() /
             ("ridgeline_profiles_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Profile good = Make("good", "", "nvidia", "vllm");
  ASSERT_TRUE(WriteProfiles(dir, {good}).ok());
  auto loaded = ProfileStore::LoadDirectory(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->profiles().size(), 1u);
  {
    std::ofstream bad(dir / "bad.json");
    bad << R"({"format_version":1,"name":"bad","family":"x","efficiency":{"memory":{"gemm":0}}})";
  }
  auto broken = ProfileStore::LoadDirectory(dir);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(Msg(broken.status()).find("bad.json"), std::string::npos);
  EXPECT_NE(Msg(broken.status()).find("efficiency.memory.gemm"), std::string::npos);
  std::filesystem::remove_all(dir);
  // A missing directory the caller asked for is NOT_FOUND naming it (a typo
  // must not silently mean "no calibration"); as the mere default, empty.
  auto missing = ProfileStore::LoadDirectory(dir);
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(Msg(missing.status()).find(dir.string()), std::string::npos)
      << missing.status();
  auto empty = ProfileStore::LoadDirectory(dir, ProfileStore::IfMissing::kEmpty);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE((*empty)->profiles().empty());
}

TEST(ProfileStore, ShippedProfilesLoad) {
  auto store = ProfileStore::LoadDirectory(RIDGELINE_TEST_PROFILES);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_FALSE((*store)->profiles().empty());
  EXPECT_TRUE(std::filesystem::exists(DefaultProfileDir()));
}

}  // namespace
}  // namespace ridgeline::calibration

namespace ridgeline::calibration {
namespace {

TEST(ProfileStore, MemoryTechnologyLevelRanksBetweenIdAndFamily) {
  Profile hbm;
  hbm.name = "nvidia-hbm.llama.cpp-cuda";
  hbm.family = "nvidia";
  hbm.framework = "llama.cpp-cuda";
  hbm.memory = "hbm";
  Profile family;
  family.name = "nvidia.llama.cpp-cuda";
  family.family = "nvidia";
  family.framework = "llama.cpp-cuda";
  Profile id;
  id.name = "nvidia-a100-pcie-80gb.llama.cpp-cuda";
  id.hardware_id = "nvidia-a100-pcie-80gb";
  id.framework = "llama.cpp-cuda";
  auto store = ProfileStore::FromProfiles({hbm, family, id});
  auto name = [&](std::string_view hw, std::string_view memory) {
    const Profile* p = store->Match(hw, "nvidia", "llama.cpp-cuda", memory);
    return p ? p->name : std::string("none");
  };
  EXPECT_EQ(name("nvidia-a100-pcie-80gb", "hbm"), "nvidia-a100-pcie-80gb.llama.cpp-cuda");
  EXPECT_EQ(name("nvidia-h200-sxm-141gb", "hbm"), "nvidia-hbm.llama.cpp-cuda");
  EXPECT_EQ(name("nvidia-rtx-4090", "gddr"), "nvidia.llama.cpp-cuda");
  EXPECT_EQ(name("nvidia-rtx-4090", ""), "nvidia.llama.cpp-cuda");
  const Profile* p = store->Match("nvidia-h200-sxm-141gb", "nvidia", "llama.cpp-cuda", "hbm");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(DescribeMatch(*p, "nvidia-h200-sxm-141gb", "llama.cpp-cuda"),
            "other hardware of family \"nvidia\" with hbm memory + framework "
            "\"llama.cpp-cuda\"");
  // The field round-trips; it is only allowed on family profiles and only
  // with a known technology.
  auto back = ParseProfileJson(ProfileToJson(hbm), "m.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->memory, "hbm");
  auto bad = ParseProfileJson(
      R"({"format_version":1,"name":"a","family":"nvidia","memory":"sram"})", "b.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("b.json: memory"), std::string::npos)
      << bad.status().message();
  bad = ParseProfileJson(
      R"({"format_version":1,"name":"a","hardware_id":"x","memory":"hbm"})", "c.json");
  EXPECT_FALSE(bad.ok());
}

TEST(ProfileStore, DeviceMemoryTechnologySkipsOnChipAndLinkedTiers) {
  engine::Hardware hw;
  engine::MemoryTier t;
  t.kind = engine::TierKind::kSram;
  hw.tiers.push_back(t);
  t.kind = engine::TierKind::kGddr;
  hw.tiers.push_back(t);
  t.kind = engine::TierKind::kHostLink;
  hw.tiers.push_back(t);
  EXPECT_EQ(DeviceMemoryTechnology(hw), "gddr");
  hw.tiers.erase(hw.tiers.begin() + 1);
  EXPECT_EQ(DeviceMemoryTechnology(hw), "");
}

}  // namespace
}  // namespace ridgeline::calibration

/*
 * Ridgeline hardware plugin "google": Google TPUs.
 *
 * Pure data behind the C ABI in ridgeline/plugin/ridgeline_plugin.h, built
 * exactly as a vendor plugin is. Every number comes from
 * ../shared/data/hardware_specs.csv (the row named above each platform) or a
 * citation next to it; [R]/[K]/[D] is the sheet's provenance code (R stated
 * in the cited source, K vendor value as commonly published, D derived: the
 * formula is given). Units: ops/s (TFLOPS x 1e12), bytes (GB x 1e9), bytes/s.
 * A field left out is 0, which the ABI defines as "unknown / not published".
 * Dense rates only; 2:4 sparse headline figures are never used.
 *
 * Platforms for which no source gives any compute rate are written out in
 * full but not exported: ABI 1.0 requires at least one peak rate per
 * platform (see docs/hardware.md, "Held back").
 *
 * Thread safety: all descriptors are immutable static data; init() only
 * builds the index of exported platforms, once, before any other call.
 */
#include <stddef.h>

#define RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
#include "ridgeline/plugin/ridgeline_plugin.h"


/* ---- google-tpu-v5e: Google TPU v5e (AI accelerator) ----
 * Sources: cloud.google.com/tpu/docs/v5e (several revisions)
 * Provenance: R: all filled
 * Notes: One revision of the Google page says 800 GiBps HBM BW and 394 int8
 * TOPS; another says 819 GBps / 393. Revisions of the Google page disagree on
 * units for HBM BW and ICI.
 * Sparsity: dense (dense rates only here).
 */

static const RidgelineMemoryTier kGoogleTpuV5eTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 16 [R] */
     .capacity_bytes = 16e9,
     /* mem_bw_gbs 819 [R] */
     .read_bandwidth_bytes_per_second = 819e9,
    },
};

/* ---- google-tpu-v5p: Google TPU v5p (AI accelerator) ----
 * Sources: cloud.google.com/tpu/docs/v5p
 * Provenance: R: all filled
 * Sparsity: dense (dense rates only here).
 */

static const RidgelineMemoryTier kGoogleTpuV5pTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 95 [R] */
     .capacity_bytes = 95e9,
     /* mem_bw_gbs 2765 [R] */
     .read_bandwidth_bytes_per_second = 2765e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* google-tpu-v5e */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "google-tpu-v5e",
     .display_name = "Google TPU v5e",
     .vendor = "Google",
     .sources = "hardware_specs.csv row google-tpu-v5e\n"
         "cloud.google.com/tpu/docs/v5e (several revisions)",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 197 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 197e12,
             /* int8_tops_dense 393 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 393e12,
         },
     .tiers = kGoogleTpuV5eTiers,
     .tier_count = sizeof(kGoogleTpuV5eTiers) / sizeof(kGoogleTpuV5eTiers[0]),
     /* ICI 400 GB/s bidirectional per chip [R] */
     .interconnect_bytes_per_second = 400e9,
    },
    /* google-tpu-v5p */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "google-tpu-v5p",
     .display_name = "Google TPU v5p",
     .vendor = "Google",
     .sources = "hardware_specs.csv row google-tpu-v5p\n"
         "cloud.google.com/tpu/docs/v5p",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 459 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 459e12,
         },
     .tiers = kGoogleTpuV5pTiers,
     .tier_count = sizeof(kGoogleTpuV5pTiers) / sizeof(kGoogleTpuV5pTiers[0]),
     /* D: ICI 4800 Gbps per chip [R] = 600 GB/s per direction (v5e page: 1600 Gbps = 400 GB/s bidirectional, so Google Gbps figures are per direction) x 2 = 1200 GB/s */
     .interconnect_bytes_per_second = 1200e9,
    },
};

enum { kPlatformCount = sizeof(kPlatforms) / sizeof(kPlatforms[0]) };

/* Indices into kPlatforms of the exported platforms (those with at least
 * one published peak rate). Written once by init(), read-only afterwards. */
static size_t g_exported[kPlatformCount];
static size_t g_exported_count = 0;

static int HasAnyRate(const RidgelinePlatform* p) {
  for (int i = 0; i < RIDGELINE_MATH_SLOTS; ++i) {
    if (p->peak_ops_per_second[i] > 0) return 1;
  }
  return 0;
}

static RidgelinePluginError* Init(void) {
  g_exported_count = 0;
  for (size_t i = 0; i < (size_t)kPlatformCount; ++i) {
    if (HasAnyRate(&kPlatforms[i])) g_exported[g_exported_count++] = i;
  }
  if (g_exported_count == 0) {
    return ridgeline_error_new(RIDGELINE_CODE_FAILED_PRECONDITION,
                               "plugin google: no platform has a peak rate");
  }
  return NULL;
}

static size_t PlatformCount(void) { return g_exported_count; }

static RidgelinePluginError* GetPlatform(size_t index,
                                         const RidgelinePlatform** out) {
  if (out == NULL) {
    return ridgeline_error_new(RIDGELINE_CODE_INVALID_ARGUMENT,
                               "plugin google: get_platform: out is NULL");
  }
  if (index >= g_exported_count) {
    return ridgeline_error_new(
        RIDGELINE_CODE_OUT_OF_RANGE,
        "plugin google: get_platform: index must be in [0, %zu), got %zu",
        g_exported_count, index);
  }
  *out = &kPlatforms[g_exported[index]];
  return NULL;
}

static const RidgelinePluginTable kTable = {
    .struct_size = sizeof(RidgelinePluginTable),
    .abi_major = RIDGELINE_PLUGIN_ABI_MAJOR,
    .abi_minor = RIDGELINE_PLUGIN_ABI_MINOR,
    .family = "google",
    .plugin_version = "1.0.0",
    .init = Init,
    .platform_count = PlatformCount,
    .get_platform = GetPlatform,
    .efficiency = NULL, /* no per-op model: the engine's defaults apply */
    .error_code = ridgeline_error_code,
    .error_message = ridgeline_error_message,
    .error_free = ridgeline_error_free,
};

RIDGELINE_PLUGIN_EXPORT const RidgelinePluginTable* ridgeline_plugin_entry(
    void) {
  return &kTable;
}

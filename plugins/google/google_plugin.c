/*
 * Ridgeline hardware plugin "google": Google TPUs.
 *
 * Pure data behind the C ABI in ridgeline/plugin/ridgeline_plugin.h, built
 * exactly as a vendor plugin is. Every number comes from
 * ../shared/data/hardware_specs.csv (the row named above each platform) or a
 * citation next to it; [R]/[K]/[D] is the sheet's provenance code (R stated
 * in the cited source, K vendor value as commonly published, D derived: the
 * formula is given). Units: ops/s (TFLOPS x 1e12), capacities in GiB
 * (memory_gb x RL_GIB = 2^30 bytes: the sheet's memory_unit), bytes/s (GB/s x 1e9).
 * A field left out is 0, which the ABI defines as "unknown / not published".
 * Dense rates only; 2:4 sparse headline figures are never used.
 *
 * A platform for which no source gives any compute rate keeps all peaks at
 * 0: "compute roof unknown" (ABI 1.0, clarified in CHANGELOG.md); the host
 * then bounds only memory-bound metrics for it. Every platform is exported.
 *
 * Thread safety: all descriptors are immutable static data; init() has
 * nothing to do, and every function may be called from any thread.
 */
#include <stddef.h>

#define RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
#include "ridgeline/plugin/ridgeline_plugin.h"
#include "ridgeline_static_plugin.h" /* in-tree init/table/entry */
#include "ridgeline_platform_common.h" /* in-tree shared numbers (RL_GIB) */


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
     /* memory_gb 16 [R], memory_unit GiB */
     .capacity_bytes = 16 * RL_GIB,
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
     /* memory_gb 95 [R], memory_unit GiB */
     .capacity_bytes = 95 * RL_GIB,
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
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: all filled (INT8 394 from the higher revision and stas00); R: memory_unit GiB (vLLM's TPU backend sets the v5e HBM limit to 16 * 1024**3 B)\n"
         "cloud.google.com/tpu/docs/v5e (several revisions)",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 197 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 197e12,
             /* int8_tops_dense 394 TOPS [R: all filled (INT8 394 from the
              * higher revision and stas00)] */
             [RIDGELINE_MATH_INT8] = 394e12,
         },
     .tiers = kGoogleTpuV5eTiers,
     .tier_count = sizeof(kGoogleTpuV5eTiers) / sizeof(kGoogleTpuV5eTiers[0]),
     /* scale-up link, hardware_specs.csv interconnect: ICI 400 GB/s bidirectional per chip [R] */
     .interconnect_bytes_per_second = 400e9,
    },
    /* google-tpu-v5p */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "google-tpu-v5p",
     .display_name = "Google TPU v5p",
     .vendor = "Google",
     .sources = "hardware_specs.csv row google-tpu-v5p\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: all filled (INT8 918 via stas00 citing the Google v5p page); R: memory_unit GiB (vLLM's TPU backend sets the v5p HBM limit to 95 * 1024**3 B)\n"
         "cloud.google.com/tpu/docs/v5p",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 459 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 459e12,
             /* int8_tops_dense 918 TOPS [R: all filled (INT8 918 via stas00
              * citing the Google v5p page)] */
             [RIDGELINE_MATH_INT8] = 918e12,
         },
     .tiers = kGoogleTpuV5pTiers,
     .tier_count = sizeof(kGoogleTpuV5pTiers) / sizeof(kGoogleTpuV5pTiers[0]),
     /* scale-up link, hardware_specs.csv interconnect: D: ICI 4800 Gbps per chip [R] = 600 GB/s per direction (v5e page: 1600 Gbps = 400 GB/s bidirectional, so Google Gbps figures are per direction) x 2 = 1200 GB/s */
     .interconnect_bytes_per_second = 1200e9,
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("google", "1.0.0", kPlatforms);

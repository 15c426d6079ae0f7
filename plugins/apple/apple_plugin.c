/*
 * Ridgeline hardware plugin "apple": Apple silicon SoCs (GPU and unified memory).
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


/* ---- apple-m1-max-32c: Apple M1 Max (SoC (unified memory)) ----
 * Sources: Apple newsroom Oct 2021; notebookcheck description quoted on
 * calendar-uk.co.uk (32-core GPU, 4096 ALUs, up to 10.4 TFLOPS, LPDDR5-6400
 * 512-bit, 400 GB/s)
 * Provenance: R (secondary): 400 GB/s, 10.4 TFLOPS FP32, LPDDR5; K: 64 GB
 * max, Neural Engine 11 TOPS
 * Notes: Memory = max config. No separate FP16/matrix rate published. Neural
 * Engine 11 TOPS (precision unspecified). About 70-78% of unified memory is
 * GPU-addressable by default (XiongjieDai README).
 */

static const RidgelineMemoryTier kAppleM1Max32cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 64 [K] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 64 * RL_GIB,
     /* mem_bw_gbs 400 [R] */
     .read_bandwidth_bytes_per_second = 400e9,
    },
};

/* ---- apple-m2-max-38c: Apple M2 Max (SoC) ----
 * Sources: Apple press release Jan 2023 as reported by moneycontrol.com /
 * news18.com (up to 38-core GPU, 400GB/s, up to 96GB); llama.cpp discussion
 * #4167 summary table (400 GB/s)
 * Provenance: R: 400 GB/s, 96 GB; K: 13.6 TFLOPS FP32 (38-core), Neural
 * Engine 15.8 TOPS
 * Notes: Memory = max config. The 30-core bin is apple-m2-max-30c.
 */

static const RidgelineMemoryTier kAppleM2Max38cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 96 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 96 * RL_GIB,
     /* mem_bw_gbs 400 [R] */
     .read_bandwidth_bytes_per_second = 400e9,
    },
};

/* ---- apple-m3-max-40c: Apple M3 Max (SoC) ----
 * Sources: macmegasite.com (states: M3 Max 40-core GPU, 400 GB/s); Apple
 * newsroom Oct 2023
 * Provenance: R: 400 GB/s; K: 300 GB/s bin, 128 GB, NE
 * Notes: Memory = max config; BW 400 GB/s for 16-CPU/40-GPU bin, 300 GB/s for
 * 14/30 bin; Neural Engine 18 TOPS. Apple did not publish GPU TFLOPS for M3.
 */

static const RidgelineMemoryTier kAppleM3Max40cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 128 [K] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 128 * RL_GIB,
     /* mem_bw_gbs 400 [R] */
     .read_bandwidth_bytes_per_second = 400e9,
    },
};

/* ---- apple-m4-max-40c: Apple M4 Max (SoC) ----
 * Sources: macrumors.com 2024-10-30 (128GB, 546GB/s, N3E, 40-core GPU); Ars
 * Technica M4 comparison table as mirrored (M4 Max 32-core 410GB/s, 40-core
 * 546GB/s); llama.cpp discussion #4167 summary table
 * Provenance: R: 546 GB/s (40-core bin), 410 GB/s (32-core bin), 128 GB, N3E;
 * K: Neural Engine 38 TOPS
 * Notes: Memory = max config; BW 546 GB/s for 16/40 bin, 410 GB/s for 14/32
 * bin; Neural Engine 38 TOPS.
 */

static const RidgelineMemoryTier kAppleM4Max40cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 128 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 128 * RL_GIB,
     /* mem_bw_gbs 546 [R] */
     .read_bandwidth_bytes_per_second = 546e9,
    },
};

/* ---- apple-m2-ultra-76c: Apple M2 Ultra (SoC (2x M2 Max via UltraFusion)) ----
 * Sources: llama.cpp discussion #4167 summary table (800 GB/s);
 * gamebastion/wccftech (192GB, 800GB/s); myapplechat.com (60 or 76 GPU cores,
 * 800GB/s, up to 192GB, Neural Engine 31.6 TOPS); Apple newsroom Jun 2023
 * Provenance: R: 800 GB/s, 192 GB, Neural Engine 31.6 TOPS; K: 27.2 TFLOPS
 * FP32 (76-core)
 * Notes: Memory = max config. The 60-core bin is apple-m2-ultra-60c (same
 * bandwidth).
 */

static const RidgelineMemoryTier kAppleM2Ultra76cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 192 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 192 * RL_GIB,
     /* mem_bw_gbs 800 [R] */
     .read_bandwidth_bytes_per_second = 800e9,
    },
};

/* ---- apple-m3-ultra-80c: Apple M3 Ultra (SoC) ----
 * Sources: research note transcribing apple.com/mac-studio/specs ("M3 Ultra
 * 819 GB/s", "192-512 GB"); apple.com/mac-studio/specs
 * Provenance: R (secondary): 819 GB/s, 512 GB; K: cores, node
 * Notes: Memory = max config. Both GPU bins have 819 GB/s. No published GPU
 * TFLOPS.
 */

static const RidgelineMemoryTier kAppleM3Ultra80cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 512 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 512 * RL_GIB,
     /* mem_bw_gbs 819 [R] */
     .read_bandwidth_bytes_per_second = 819e9,
    },
};

/* ---- apple-m1-7c: Apple M1 (7-core GPU) (SoC (unified memory)) ----
 * Sources: XiongjieDai/GPU-Benchmarks-on-LLM-Inference (M1 8GB MacBook Air,
 * 7-core GPU); notebookcheck description quoted on calendar-uk.co.uk (entry
 * MacBook Air M1 GPU has 7 cores, 1 disabled); Apple newsroom Nov 2020
 * Provenance: D: BW, FP32; K: 16 GB max
 * Notes: D: BW = 4266 MT/s x 16 B = 68.3 GB/s (llama.cpp #4167 lists 68).
 * FP32 = 7 x 128 ALUs x 2 x 1.278 GHz (clock implied by Apple's 2.6 TFLOPS
 * for the 8-core M1). Memory = max config (measured machine: 8 GB). Neural
 * Engine 11 TOPS.
 */

static const RidgelineMemoryTier kAppleM17cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR4X-4266 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 16 [K] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 16 * RL_GIB,
     /* mem_bw_gbs 68.3 [D]: 4266 MT/s x 16 B */
     .read_bandwidth_bytes_per_second = 68.3e9,
    },
};

/* ---- apple-m1-8c: Apple M1 (8-core GPU) (SoC (unified memory)) ----
 * Sources: llama.cpp discussion #4167 summary table (M1 68 GB/s, 8 GPU
 * cores); Apple newsroom Nov 2020 (2.6 TFLOPS)
 * Provenance: R (secondary): 68 GB/s; D: 68.3 GB/s; K: 2.6 TFLOPS, 16 GB max
 * Notes: D: BW = 4266 MT/s x 16 B. Memory = max config. Neural Engine 11
 * TOPS.
 */

static const RidgelineMemoryTier kAppleM18cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR4X-4266 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 16 [K] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 16 * RL_GIB,
     /* mem_bw_gbs 68.3 [D]: 4266 MT/s x 16 B */
     .read_bandwidth_bytes_per_second = 68.3e9,
    },
};

/* ---- apple-m1-ultra-64c: Apple M1 Ultra (64-core GPU) (SoC (2x M1 Max via UltraFusion)) ----
 * Sources: notebookcheck.net M1 Ultra (up to 64-core GPU, 800 GB/s, 128 GB,
 * 32-core Neural Engine 22 TOPS); cpu-monkey.com (64-core GPU 21.2 TFLOPS
 * FP32; 2.5 TB/s interface)
 * Provenance: R: 800 GB/s, 128 GB, 21.2 TFLOPS FP32, Neural Engine 22 TOPS
 * Notes: Memory = max config. 48-core bin: 15.9 TFLOPS, same bandwidth.
 */

static const RidgelineMemoryTier kAppleM1Ultra64cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5-6400 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 128 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 128 * RL_GIB,
     /* mem_bw_gbs 800 [R] */
     .read_bandwidth_bytes_per_second = 800e9,
    },
};

/* ---- apple-m2-10c: Apple M2 (10-core GPU) (SoC (unified memory)) ----
 * Sources: Apple M2 Pro/Max press release ('200GB/s ... twice that of M2',
 * via news18/moneycontrol); Ars Technica M-series table as mirrored (M2
 * 10-core, 8/16/24GB, 102.4GB/s); hmc-tech.com (10-core M2: 1280 shaders,
 * 1398 MHz, 3.58 TFLOPS FP32)
 * Provenance: R: 100 GB/s, 24 GB, 3.58 TFLOPS FP32
 * Notes: Memory = max config. Exact BW = 6400 MT/s x 16 B = 102.4 GB/s; Apple
 * quotes 100. 8-core bin has the same BW.
 */

static const RidgelineMemoryTier kAppleM210cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5-6400 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 24 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 24 * RL_GIB,
     /* mem_bw_gbs 100 [R] */
     .read_bandwidth_bytes_per_second = 100e9,
    },
};

/* ---- apple-m2-pro-16c: Apple M2 Pro (16-core GPU) (SoC (unified memory)) ----
 * Sources: Apple press release Jan 2023 via moneycontrol.com / news18.com
 * (200GB/s, up to 32GB, up to 19-core GPU)
 * Provenance: R: 200 GB/s, 32 GB; D: FP32
 * Notes: D: FP32 = 16 x 128 ALUs x 2 x 1.398 GHz (M2-family GPU clock).
 * 19-core bin: same BW. Memory = max config.
 */

static const RidgelineMemoryTier kAppleM2Pro16cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5-6400 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 32 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 32 * RL_GIB,
     /* mem_bw_gbs 200 [R] */
     .read_bandwidth_bytes_per_second = 200e9,
    },
};

/* ---- apple-m2-max-30c: Apple M2 Max (30-core GPU) (SoC (unified memory)) ----
 * Sources: Apple press release Jan 2023 via moneycontrol.com / news18.com
 * (400GB/s, up to 96GB); llama.cpp discussion #4167 summary table (M2 Max
 * 30-core, 400 GB/s)
 * Provenance: R: 400 GB/s, 96 GB; D: FP32
 * Notes: D: FP32 = 13.6 TF (38-core, K) x 30/38 = 10.74 (= 30 x 256 x 1.398
 * GHz). Memory = max config.
 */

static const RidgelineMemoryTier kAppleM2Max30cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5-6400 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 96 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 96 * RL_GIB,
     /* mem_bw_gbs 400 [R] */
     .read_bandwidth_bytes_per_second = 400e9,
    },
};

/* ---- apple-m2-ultra-60c: Apple M2 Ultra (60-core GPU) (SoC (2x M2 Max via UltraFusion)) ----
 * Sources: myapplechat.com (60 or 76 GPU cores, 800GB/s, up to 192GB, Neural
 * Engine 31.6 TOPS); llama.cpp discussion #4167 summary table
 * Provenance: R: 800 GB/s, 192 GB; D: FP32
 * Notes: D: FP32 = 27.2 TF (76-core, K) x 60/76 = 21.47. Memory = max config.
 */

static const RidgelineMemoryTier kAppleM2Ultra60cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5-6400 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 192 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 192 * RL_GIB,
     /* mem_bw_gbs 800 [R] */
     .read_bandwidth_bytes_per_second = 800e9,
    },
};

/* ---- apple-m3-pro-18c: Apple M3 Pro (18-core GPU) (SoC (unified memory)) ----
 * Sources: Ars Technica M-series table as mirrored (M3 Pro 18-core, 18/36GB,
 * 153.6GB/s); macrumors.com M4 Pro article (273GB/s is '75% more than M3
 * Pro'); llama.cpp discussion #4167 summary table (150 GB/s)
 * Provenance: R: 150 GB/s, 36 GB
 * Notes: Apple quotes 150 GB/s; 6400 MT/s x 24 B = 153.6. Apple publishes no
 * GPU TFLOPS for M3. Memory = max config.
 */

static const RidgelineMemoryTier kAppleM3Pro18cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5-6400 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 36 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 36 * RL_GIB,
     /* mem_bw_gbs 150 [R] */
     .read_bandwidth_bytes_per_second = 150e9,
    },
};

/* ---- apple-m4-10c: Apple M4 (10-core GPU) (SoC (unified memory)) ----
 * Sources: Ars Technica M4 comparison table as mirrored (M4 10-core,
 * 16/24/32GB, 120GB/s)
 * Provenance: R: 120 GB/s, 32 GB
 * Notes: Memory = max config. Apple publishes no GPU TFLOPS for M4. Neural
 * Engine 38 TOPS.
 */

static const RidgelineMemoryTier kAppleM410cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X-7500 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 32 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 32 * RL_GIB,
     /* mem_bw_gbs 120 [R] */
     .read_bandwidth_bytes_per_second = 120e9,
    },
};

/* ---- apple-m4-pro-20c: Apple M4 Pro (20-core GPU) (SoC (unified memory)) ----
 * Sources: macrumors.com 2024-10-29 (up to 20-core GPU, up to 64GB, 273GB/s,
 * Thunderbolt 5); techmoran.com; hmc-tech.com (16-core M4 Pro: 2048 shaders,
 * 1470 MHz, 6.02 TFLOPS FP32)
 * Provenance: R: 273 GB/s, 64 GB; D: FP32
 * Notes: D: FP32 = 2560 ALUs x 2 x 1.47 GHz (clock from the 16-core bin of
 * the same die). Memory = max config.
 */

static const RidgelineMemoryTier kAppleM4Pro20cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X-8533 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 64 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 64 * RL_GIB,
     /* mem_bw_gbs 273 [R] */
     .read_bandwidth_bytes_per_second = 273e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* apple-m1-max-32c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m1-max-32c",
     .display_name = "Apple M1 Max",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m1-max-32c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R (secondary): 400 GB/s, LPDDR5 (Apple 10.4 TFLOPS superseded by D 10.62); K: 64 GB max, Neural Engine 11 TOPS; D: GPU FP32 10.62 and FP16 10.62 (cores x 256 x 1.296 GHz); R: memory_unit GiB (recommendedMaxWorkingSetSize 21845.34 MB = 2/3 x 32 GiB)\n"
         "Apple newsroom Oct 2021\n"
         "notebookcheck description quoted on calendar-uk.co.uk (32-core GPU, 4096 ALUs, up to 10.4 TFLOPS, LPDDR5-6400 512-bit, 400 GB/s)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 10.62 TFLOPS [R (secondary): 400 GB/s,
              * LPDDR5 (Apple 10.4 TFLOPS superseded by D 10.62); D: GPU FP32
              * 10.62 and FP16 10.62 (cores x 256 x 1.296 GHz)] */
             [RIDGELINE_MATH_FP32] = 10.62e12,
             /* fp16_bf16_tflops_dense 10.62 TFLOPS [R (secondary): 400 GB/s,
              * LPDDR5 (Apple 10.4 TFLOPS superseded by D 10.62); D: GPU FP32
              * 10.62 and FP16 10.62 (cores x 256 x 1.296 GHz)] */
             [RIDGELINE_MATH_BF16] = 10.62e12,
             /* fp16_bf16_tflops_dense 10.62 TFLOPS [R (secondary): 400 GB/s,
              * LPDDR5 (Apple 10.4 TFLOPS superseded by D 10.62); D: GPU FP32
              * 10.62 and FP16 10.62 (cores x 256 x 1.296 GHz)] */
             [RIDGELINE_MATH_FP16] = 10.62e12,
         },
     .tiers = kAppleM1Max32cTiers,
     .tier_count = sizeof(kAppleM1Max32cTiers) / sizeof(kAppleM1Max32cTiers[0]),
    },
    /* apple-m2-max-38c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m2-max-38c",
     .display_name = "Apple M2 Max",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m2-max-38c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 400 GB/s, 96 GB; R: 13.6 TFLOPS FP32 (metal-benchmarks 13600 GFLOPS), Neural Engine 15.8 TOPS; D: GPU FP16 13.6 (= FP32 rate; cores x 256 x 1.398 GHz); R: memory_unit GiB (recommendedMaxWorkingSetSize 73728 MB = 0.75 x 96 GiB)\n"
         "Apple press release Jan 2023 as reported by moneycontrol.com / news18.com (up to 38-core GPU, 400GB/s, up to 96GB)\n"
         "llama.cpp discussion #4167 summary table (400 GB/s)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 13.6 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 13.6e12,
             /* fp16_bf16_tflops_dense 13.6 TFLOPS [R: 13.6 TFLOPS FP32
              * (metal-benchmarks 13600 GFLOPS), Neural Engine 15.8 TOPS; D:
              * GPU FP16 13.6 (= FP32 rate] */
             [RIDGELINE_MATH_BF16] = 13.6e12,
             /* fp16_bf16_tflops_dense 13.6 TFLOPS [R: 13.6 TFLOPS FP32
              * (metal-benchmarks 13600 GFLOPS), Neural Engine 15.8 TOPS; D:
              * GPU FP16 13.6 (= FP32 rate] */
             [RIDGELINE_MATH_FP16] = 13.6e12,
         },
     .tiers = kAppleM2Max38cTiers,
     .tier_count = sizeof(kAppleM2Max38cTiers) / sizeof(kAppleM2Max38cTiers[0]),
    },
    /* apple-m3-max-40c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m3-max-40c",
     .display_name = "Apple M3 Max",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m3-max-40c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 400 GB/s; K: 300 GB/s bin, 128 GB, NE; D: GPU FP32 14.13 and FP16 14.13 (cores x 256 x 1.380 GHz); R: memory_unit GiB (hw.memsize 137438953472)\n"
         "macmegasite.com (states: M3 Max 40-core GPU, 400 GB/s)\n"
         "Apple newsroom Oct 2023",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 14.13 TFLOPS [D: GPU FP32 14.13 and FP16
              * 14.13 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_FP32] = 14.13e12,
             /* fp16_bf16_tflops_dense 14.13 TFLOPS [D: GPU FP32 14.13 and FP16
              * 14.13 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_BF16] = 14.13e12,
             /* fp16_bf16_tflops_dense 14.13 TFLOPS [D: GPU FP32 14.13 and FP16
              * 14.13 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_FP16] = 14.13e12,
         },
     .tiers = kAppleM3Max40cTiers,
     .tier_count = sizeof(kAppleM3Max40cTiers) / sizeof(kAppleM3Max40cTiers[0]),
    },
    /* apple-m4-max-40c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m4-max-40c",
     .display_name = "Apple M4 Max",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m4-max-40c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 546 GB/s (40-core bin), 410 GB/s (32-core bin), 128 GB, N3E; K: Neural Engine 38 TOPS; D: GPU FP32 16.16 and FP16 16.16 (cores x 256 x 1.578 GHz); R: memory_unit GiB (hw.memsize 137438953472)\n"
         "macrumors.com 2024-10-30 (128GB, 546GB/s, N3E, 40-core GPU)\n"
         "Ars Technica M4 comparison table as mirrored (M4 Max 32-core 410GB/s, 40-core 546GB/s)\n"
         "llama.cpp discussion #4167 summary table",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 16.16 TFLOPS [D: GPU FP32 16.16 and FP16
              * 16.16 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_FP32] = 16.16e12,
             /* fp16_bf16_tflops_dense 16.16 TFLOPS [D: GPU FP32 16.16 and FP16
              * 16.16 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_BF16] = 16.16e12,
             /* fp16_bf16_tflops_dense 16.16 TFLOPS [D: GPU FP32 16.16 and FP16
              * 16.16 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_FP16] = 16.16e12,
         },
     .tiers = kAppleM4Max40cTiers,
     .tier_count = sizeof(kAppleM4Max40cTiers) / sizeof(kAppleM4Max40cTiers[0]),
    },
    /* apple-m2-ultra-76c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m2-ultra-76c",
     .display_name = "Apple M2 Ultra",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m2-ultra-76c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 800 GB/s, 192 GB, Neural Engine 31.6 TOPS; D: 27.2 TFLOPS FP32 (76 x 256 x 1.398 GHz); D: GPU FP16 27.2 (= FP32 rate; cores x 256 x 1.398 GHz); D: memory_unit GiB (family evidence)\n"
         "llama.cpp discussion #4167 summary table (800 GB/s)\n"
         "gamebastion/wccftech (192GB, 800GB/s)\n"
         "myapplechat.com (60 or 76 GPU cores, 800GB/s, up to 192GB, Neural Engine 31.6 TOPS)\n"
         "Apple newsroom Jun 2023",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 27.2 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 27.2e12,
             /* fp16_bf16_tflops_dense 27.2 TFLOPS [D: 27.2 TFLOPS FP32 (76 x
              * 256 x 1.398 GHz); D: GPU FP16 27.2 (= FP32 rate] */
             [RIDGELINE_MATH_BF16] = 27.2e12,
             /* fp16_bf16_tflops_dense 27.2 TFLOPS [D: 27.2 TFLOPS FP32 (76 x
              * 256 x 1.398 GHz); D: GPU FP16 27.2 (= FP32 rate] */
             [RIDGELINE_MATH_FP16] = 27.2e12,
         },
     .tiers = kAppleM2Ultra76cTiers,
     .tier_count = sizeof(kAppleM2Ultra76cTiers) / sizeof(kAppleM2Ultra76cTiers[0]),
    },
    /* apple-m3-ultra-80c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m3-ultra-80c",
     .display_name = "Apple M3 Ultra",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m3-ultra-80c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R (secondary): 819 GB/s, 512 GB; K: cores, node; D: GPU FP32 28.26 and FP16 28.26 (cores x 256 x 1.380 GHz); D: memory_unit GiB (family evidence)\n"
         "research note transcribing apple.com/mac-studio/specs (\"M3 Ultra 819 GB/s\", \"192-512 GB\")\n"
         "apple.com/mac-studio/specs",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 28.26 TFLOPS [D: GPU FP32 28.26 and FP16
              * 28.26 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_FP32] = 28.26e12,
             /* fp16_bf16_tflops_dense 28.26 TFLOPS [D: GPU FP32 28.26 and FP16
              * 28.26 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_BF16] = 28.26e12,
             /* fp16_bf16_tflops_dense 28.26 TFLOPS [D: GPU FP32 28.26 and FP16
              * 28.26 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_FP16] = 28.26e12,
         },
     .tiers = kAppleM3Ultra80cTiers,
     .tier_count = sizeof(kAppleM3Ultra80cTiers) / sizeof(kAppleM3Ultra80cTiers[0]),
    },
    /* apple-m1-7c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m1-7c",
     .display_name = "Apple M1 (7-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m1-7c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): D: BW, FP32; K: 16 GB max; D: GPU FP16 2.29 (= FP32 rate; cores x 256 x 1.278 GHz); R: memory_unit GiB (hw.memsize 8589934592)\n"
         "XiongjieDai/GPU-Benchmarks-on-LLM-Inference (M1 8GB MacBook Air, 7-core GPU)\n"
         "notebookcheck description quoted on calendar-uk.co.uk (entry MacBook Air M1 GPU has 7 cores, 1 disabled)\n"
         "Apple newsroom Nov 2020",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 2.29 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP32] = 2.29e12,
             /* fp16_bf16_tflops_dense 2.29 TFLOPS [D: GPU FP16 2.29 (= FP32
              * rate] */
             [RIDGELINE_MATH_BF16] = 2.29e12,
             /* fp16_bf16_tflops_dense 2.29 TFLOPS [D: GPU FP16 2.29 (= FP32
              * rate] */
             [RIDGELINE_MATH_FP16] = 2.29e12,
         },
     .tiers = kAppleM17cTiers,
     .tier_count = sizeof(kAppleM17cTiers) / sizeof(kAppleM17cTiers[0]),
    },
    /* apple-m1-8c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m1-8c",
     .display_name = "Apple M1 (8-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m1-8c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R (secondary): 68 GB/s; D: 68.3 GB/s; K: Apple 2.6 TFLOPS (superseded by D 2.62), 16 GB max; D: GPU FP32 2.62 and FP16 2.62 (cores x 256 x 1.278 GHz); R: memory_unit GiB (hw.memsize 8589934592)\n"
         "llama.cpp discussion #4167 summary table (M1 68 GB/s, 8 GPU cores)\n"
         "Apple newsroom Nov 2020 (2.6 TFLOPS)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 2.62 TFLOPS [K: Apple 2.6 TFLOPS
              * (superseded by D 2.62), 16 GB max; D: GPU FP32 2.62 and FP16
              * 2.62 (cores x 256 x 1.278 GHz)] */
             [RIDGELINE_MATH_FP32] = 2.62e12,
             /* fp16_bf16_tflops_dense 2.62 TFLOPS [K: Apple 2.6 TFLOPS
              * (superseded by D 2.62), 16 GB max; D: GPU FP32 2.62 and FP16
              * 2.62 (cores x 256 x 1.278 GHz)] */
             [RIDGELINE_MATH_BF16] = 2.62e12,
             /* fp16_bf16_tflops_dense 2.62 TFLOPS [K: Apple 2.6 TFLOPS
              * (superseded by D 2.62), 16 GB max; D: GPU FP32 2.62 and FP16
              * 2.62 (cores x 256 x 1.278 GHz)] */
             [RIDGELINE_MATH_FP16] = 2.62e12,
         },
     .tiers = kAppleM18cTiers,
     .tier_count = sizeof(kAppleM18cTiers) / sizeof(kAppleM18cTiers[0]),
    },
    /* apple-m1-ultra-64c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m1-ultra-64c",
     .display_name = "Apple M1 Ultra (64-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m1-ultra-64c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 800 GB/s, 128 GB (cpu-monkey 21.2 TFLOPS FP32 superseded by D 21.23), Neural Engine 22 TOPS; D: GPU FP32 21.23 and FP16 21.23 (cores x 256 x 1.296 GHz); D: memory_unit GiB (family evidence)\n"
         "notebookcheck.net M1 Ultra (up to 64-core GPU, 800 GB/s, 128 GB, 32-core Neural Engine 22 TOPS)\n"
         "cpu-monkey.com (64-core GPU 21.2 TFLOPS FP32; 2.5 TB/s interface)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 21.23 TFLOPS [R: 800 GB/s, 128 GB
              * (cpu-monkey 21.2 TFLOPS FP32 superseded by D 21.23), Neural
              * Engine 22 TOPS; D: GPU FP32 21.23 and FP16 21.23 (cores x 256 x
              * 1.296 GHz)] */
             [RIDGELINE_MATH_FP32] = 21.23e12,
             /* fp16_bf16_tflops_dense 21.23 TFLOPS [R: 800 GB/s, 128 GB
              * (cpu-monkey 21.2 TFLOPS FP32 superseded by D 21.23), Neural
              * Engine 22 TOPS; D: GPU FP32 21.23 and FP16 21.23 (cores x 256 x
              * 1.296 GHz)] */
             [RIDGELINE_MATH_BF16] = 21.23e12,
             /* fp16_bf16_tflops_dense 21.23 TFLOPS [R: 800 GB/s, 128 GB
              * (cpu-monkey 21.2 TFLOPS FP32 superseded by D 21.23), Neural
              * Engine 22 TOPS; D: GPU FP32 21.23 and FP16 21.23 (cores x 256 x
              * 1.296 GHz)] */
             [RIDGELINE_MATH_FP16] = 21.23e12,
         },
     .tiers = kAppleM1Ultra64cTiers,
     .tier_count = sizeof(kAppleM1Ultra64cTiers) / sizeof(kAppleM1Ultra64cTiers[0]),
    },
    /* apple-m2-10c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m2-10c",
     .display_name = "Apple M2 (10-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m2-10c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 100 GB/s, 24 GB, 3.58 TFLOPS FP32; D: GPU FP16 3.58 (= FP32 rate; cores x 256 x 1.398 GHz); D: memory_unit GiB (family evidence)\n"
         "Apple M2 Pro/Max press release ('200GB/s ... twice that of M2', via news18/moneycontrol)\n"
         "Ars Technica M-series table as mirrored (M2 10-core, 8/16/24GB, 102.4GB/s)\n"
         "hmc-tech.com (10-core M2: 1280 shaders, 1398 MHz, 3.58 TFLOPS FP32)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 3.58 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 3.58e12,
             /* fp16_bf16_tflops_dense 3.58 TFLOPS [R: 100 GB/s, 24 GB, 3.58
              * TFLOPS FP32; D: GPU FP16 3.58 (= FP32 rate] */
             [RIDGELINE_MATH_BF16] = 3.58e12,
             /* fp16_bf16_tflops_dense 3.58 TFLOPS [R: 100 GB/s, 24 GB, 3.58
              * TFLOPS FP32; D: GPU FP16 3.58 (= FP32 rate] */
             [RIDGELINE_MATH_FP16] = 3.58e12,
         },
     .tiers = kAppleM210cTiers,
     .tier_count = sizeof(kAppleM210cTiers) / sizeof(kAppleM210cTiers[0]),
    },
    /* apple-m2-pro-16c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m2-pro-16c",
     .display_name = "Apple M2 Pro (16-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m2-pro-16c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 200 GB/s, 32 GB; D: FP32; D: GPU FP16 5.73 (= FP32 rate; cores x 256 x 1.398 GHz); D: memory_unit GiB (family evidence)\n"
         "Apple press release Jan 2023 via moneycontrol.com / news18.com (200GB/s, up to 32GB, up to 19-core GPU)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 5.73 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP32] = 5.73e12,
             /* fp16_bf16_tflops_dense 5.73 TFLOPS [D: GPU FP16 5.73 (= FP32
              * rate] */
             [RIDGELINE_MATH_BF16] = 5.73e12,
             /* fp16_bf16_tflops_dense 5.73 TFLOPS [D: GPU FP16 5.73 (= FP32
              * rate] */
             [RIDGELINE_MATH_FP16] = 5.73e12,
         },
     .tiers = kAppleM2Pro16cTiers,
     .tier_count = sizeof(kAppleM2Pro16cTiers) / sizeof(kAppleM2Pro16cTiers[0]),
    },
    /* apple-m2-max-30c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m2-max-30c",
     .display_name = "Apple M2 Max (30-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m2-max-30c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 400 GB/s, 96 GB; D: FP32; D: GPU FP16 10.74 (= FP32 rate; cores x 256 x 1.398 GHz); R: memory_unit GiB (recommendedMaxWorkingSetSize 73728 MB = 0.75 x 96 GiB)\n"
         "Apple press release Jan 2023 via moneycontrol.com / news18.com (400GB/s, up to 96GB)\n"
         "llama.cpp discussion #4167 summary table (M2 Max 30-core, 400 GB/s)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 10.74 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP32] = 10.74e12,
             /* fp16_bf16_tflops_dense 10.74 TFLOPS [D: GPU FP16 10.74 (= FP32
              * rate] */
             [RIDGELINE_MATH_BF16] = 10.74e12,
             /* fp16_bf16_tflops_dense 10.74 TFLOPS [D: GPU FP16 10.74 (= FP32
              * rate] */
             [RIDGELINE_MATH_FP16] = 10.74e12,
         },
     .tiers = kAppleM2Max30cTiers,
     .tier_count = sizeof(kAppleM2Max30cTiers) / sizeof(kAppleM2Max30cTiers[0]),
    },
    /* apple-m2-ultra-60c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m2-ultra-60c",
     .display_name = "Apple M2 Ultra (60-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m2-ultra-60c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 800 GB/s, 192 GB; D: FP32; D: GPU FP16 21.47 (= FP32 rate; cores x 256 x 1.398 GHz); D: memory_unit GiB (family evidence)\n"
         "myapplechat.com (60 or 76 GPU cores, 800GB/s, up to 192GB, Neural Engine 31.6 TOPS)\n"
         "llama.cpp discussion #4167 summary table",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 21.47 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP32] = 21.47e12,
             /* fp16_bf16_tflops_dense 21.47 TFLOPS [D: GPU FP16 21.47 (= FP32
              * rate] */
             [RIDGELINE_MATH_BF16] = 21.47e12,
             /* fp16_bf16_tflops_dense 21.47 TFLOPS [D: GPU FP16 21.47 (= FP32
              * rate] */
             [RIDGELINE_MATH_FP16] = 21.47e12,
         },
     .tiers = kAppleM2Ultra60cTiers,
     .tier_count = sizeof(kAppleM2Ultra60cTiers) / sizeof(kAppleM2Ultra60cTiers[0]),
    },
    /* apple-m3-pro-18c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m3-pro-18c",
     .display_name = "Apple M3 Pro (18-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m3-pro-18c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 150 GB/s, 36 GB; D: GPU FP32 6.36 and FP16 6.36 (cores x 256 x 1.380 GHz); R: memory_unit GiB (hw.memsize 38654705664)\n"
         "Ars Technica M-series table as mirrored (M3 Pro 18-core, 18/36GB, 153.6GB/s)\n"
         "macrumors.com M4 Pro article (273GB/s is '75% more than M3 Pro')\n"
         "llama.cpp discussion #4167 summary table (150 GB/s)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 6.36 TFLOPS [D: GPU FP32 6.36 and FP16
              * 6.36 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_FP32] = 6.36e12,
             /* fp16_bf16_tflops_dense 6.36 TFLOPS [D: GPU FP32 6.36 and FP16
              * 6.36 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_BF16] = 6.36e12,
             /* fp16_bf16_tflops_dense 6.36 TFLOPS [D: GPU FP32 6.36 and FP16
              * 6.36 (cores x 256 x 1.380 GHz)] */
             [RIDGELINE_MATH_FP16] = 6.36e12,
         },
     .tiers = kAppleM3Pro18cTiers,
     .tier_count = sizeof(kAppleM3Pro18cTiers) / sizeof(kAppleM3Pro18cTiers[0]),
    },
    /* apple-m4-10c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m4-10c",
     .display_name = "Apple M4 (10-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m4-10c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 120 GB/s, 32 GB; D: GPU FP32 4.04 and FP16 4.04 (cores x 256 x 1.578 GHz); D: memory_unit GiB (family evidence)\n"
         "Ars Technica M4 comparison table as mirrored (M4 10-core, 16/24/32GB, 120GB/s)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 4.04 TFLOPS [D: GPU FP32 4.04 and FP16
              * 4.04 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_FP32] = 4.04e12,
             /* fp16_bf16_tflops_dense 4.04 TFLOPS [D: GPU FP32 4.04 and FP16
              * 4.04 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_BF16] = 4.04e12,
             /* fp16_bf16_tflops_dense 4.04 TFLOPS [D: GPU FP32 4.04 and FP16
              * 4.04 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_FP16] = 4.04e12,
         },
     .tiers = kAppleM410cTiers,
     .tier_count = sizeof(kAppleM410cTiers) / sizeof(kAppleM410cTiers[0]),
    },
    /* apple-m4-pro-20c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "apple-m4-pro-20c",
     .display_name = "Apple M4 Pro (20-core GPU)",
     .vendor = "Apple",
     .sources = "hardware_specs.csv row apple-m4-pro-20c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 273 GB/s, 64 GB; D: GPU FP32 8.08 and FP16 8.08 (cores x 256 x 1.578 GHz); D: memory_unit GiB (family evidence)\n"
         "macrumors.com 2024-10-29 (up to 20-core GPU, up to 64GB, 273GB/s, Thunderbolt 5)\n"
         "techmoran.com\n"
         "hmc-tech.com (16-core M4 Pro: 2048 shaders, 1470 MHz, 6.02 TFLOPS FP32)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 8.08 TFLOPS [D: GPU FP32 8.08 and FP16
              * 8.08 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_FP32] = 8.08e12,
             /* fp16_bf16_tflops_dense 8.08 TFLOPS [D: GPU FP32 8.08 and FP16
              * 8.08 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_BF16] = 8.08e12,
             /* fp16_bf16_tflops_dense 8.08 TFLOPS [D: GPU FP32 8.08 and FP16
              * 8.08 (cores x 256 x 1.578 GHz)] */
             [RIDGELINE_MATH_FP16] = 8.08e12,
         },
     .tiers = kAppleM4Pro20cTiers,
     .tier_count = sizeof(kAppleM4Pro20cTiers) / sizeof(kAppleM4Pro20cTiers[0]),
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("apple", "1.0.0", kPlatforms);

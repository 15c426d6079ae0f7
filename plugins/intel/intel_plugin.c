/*
 * Ridgeline hardware plugin "intel": Intel Gaudi accelerators and Xeon CPUs.
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
#include "ridgeline_platform_common.h" /* in-tree shared numbers */

/* ---- intel-gaudi2: Intel Gaudi 2 (HL-225H) (AI accelerator) ----
 * Sources: pcguia.pt Gaudi 3 article (states: Gaudi 2 96 GB HBM2e, 2.45 TB/s,
 * 432 TFLOPS BF16, 600 W, 24 TPCs); y-ic.de (states: 24 TPCs, 2 MMEs);
 * gigazine (states: 7nm); intel.com Gaudi 2 model-performance page (HL-225H)
 * Provenance: R: mem, BW, BF16, TDP, TPC/MME, 7nm; K: SRAM 48 MB, 24x100GbE
 * Notes: BF16 value is MME matrix rate. AMBIGUOUS FP8: sources disagree (835
 * vs 865 TFLOPS) - left blank.
 * Sparsity: no sparsity figures (dense rates only here).
 */

static const RidgelineMemoryTier kIntelGaudi2Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 96 [R], memory_unit GiB */
     .capacity_bytes = 96 * RL_GIB,
     /* mem_bw_gbs 2460 [R: stas00/ml-engineering 2.46 TB/s; pcguia.pt 2.45;
      * the higher is the bound] */
     .read_bandwidth_bytes_per_second = 2460e9,
    },
};

/* ---- intel-gaudi3: Intel Gaudi 3 (HL-325L OAM) (AI accelerator) ----
 * Sources: pcguia.pt (states: 128 GB, 3.7 TB/s, 96 MB SRAM 12.8 TB/s, 1835
 * TFLOPS FP8/BF16, 900 W); y-ic.de (states: 3.67 TB/s, 28.7 vector BF16,
 * 24x200GbE); yobitel.com (states: TSMC 5nm, 900 W)
 * Provenance: R: all filled
 * Notes: BW: Intel material says 3.7 TB/s and 3.67 TB/s; BF16/FP8 are MME
 * matrix rates; vector BF16 28.7 TF; TDP 900 W OAM (PCIe add-in card 600 W).
 * y-ic.de quotes 1,856 TFLOPS in one place; Intel white paper figure is
 * 1,835. Reported ~$15.6k/chip from an 8-chip $125k kit (y-ic.de) - not a
 * list price, so left blank.
 * Sparsity: no sparsity figures; FP8 = BF16 rate (not 2x) (dense rates only
 * here).
 */

static const RidgelineMemoryTier kIntelGaudi3Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "SRAM",
     .kind = RIDGELINE_TIER_SRAM,
     /* onchip_cache "SRAM 96 MB" [R], MB taken as 10^6 bytes */
     .capacity_bytes = 96e6,
     /* onchip_bw "SRAM 12.8 TB/s" [R] */
     .read_bandwidth_bytes_per_second = 12.8e12,
    },
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 128 [R], memory_unit GiB */
     .capacity_bytes = 128 * RL_GIB,
     /* mem_bw_gbs 3700 [R] */
     .read_bandwidth_bytes_per_second = 3700e9,
    },
};

/* ---- intel-xeon-platinum-8480p: Intel Xeon Platinum 8480+ (Sapphire Rapids) (server CPU (AMX)) ----
 * Sources: intel-extension-for-transformers release_data.md (states: "8480+
 * @3.8GHz, 56 cores/socket", DDR5 4800); intel.com Gaudi 3 page (states:
 * "Xeon Platinum 8480+ CPUs at 2.0 GHz"); ark.intel.com
 * Provenance: R: 56 cores, 3.8 GHz turbo, 2.0 GHz base, DDR5-4800; D: BW; K:
 * LLC, TDP, price, UPI/PCIe
 * Notes: mem_bw is DERIVED (8 ch x 4800 MT/s x 8 B), theoretical per socket.
 * Memory capacity is platform-dependent (up to 4 TB/socket).
 * Sparsity: Intel does not publish per-SKU AMX TFLOPS; AMX = 1024 BF16
 * FLOP/cycle/core and 2048 INT8 OP/cycle/core (architecture figure) x 56
 * cores x AMX clock (not published) (dense rates only here).
 */

static const RidgelineMemoryTier kIntelXeonPlatinum8480pTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "DDR5-4800, 8 channels",
     .kind = RIDGELINE_TIER_DDR,
     /* ASSUMPTION: platform-dependent (sheet blank) */
     .capacity_bytes = RL_XEON_DRAM_BYTES,
     /* mem_bw_gbs 307.2 [D]: 8 channels x 4800 MT/s x 8 B */
     .read_bandwidth_bytes_per_second = 307.2e9,
    },
};

/* ---- intel-xeon-w9-3475x: Intel Xeon w9-3475X (Sapphire Rapids) (workstation CPU (AMX)) ----
 * Sources: techpowerup.com 2024-02-06 (W9-3475X 36-core/72-thread);
 * sweclockers.com (Xeon W-3400: 8 DDR5-4800 channels = 307.2 GB/s, up to 4
 * TB); ark.intel.com
 * Provenance: R: 36 cores, 8-channel DDR5-4800 = 307.2 GB/s; D: BW; K: 300 W,
 * RCP $3,739, base 2.2 / turbo 4.8 GHz
 * Notes: mem_bw DERIVED (8 ch x 4800 MT/s x 8 B), theoretical. The measured
 * system capped the clock at 2.2 GHz and used 8-16 threads.
 * Sparsity: Intel publishes no per-SKU AMX TFLOPS; AMX = 1024 BF16
 * FLOP/cycle/core and 2048 INT8 OP/cycle/core (architecture figure) (dense
 * rates only here).
 */

static const RidgelineMemoryTier kIntelXeonW93475xTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "DDR5-4800, 8 channels",
     .kind = RIDGELINE_TIER_DDR,
     /* ASSUMPTION: platform-dependent (sheet blank) */
     .capacity_bytes = RL_XEON_DRAM_BYTES,
     /* mem_bw_gbs 307.2 [R] */
     .read_bandwidth_bytes_per_second = 307.2e9,
    },
};

/* ---- intel-xeon-platinum-8481c: Intel Xeon Platinum 8481C (GCP C3, Sapphire Rapids) (server CPU (AMX), cloud-only SKU) ----
 * Sources: llama.cpp issue #34 thread (GCP c3-highcpu-44, 4th-gen Xeon
 * Sapphire Rapids, 22 threads); the 8481C SKU name is an assumption (C3
 * instances report it; not verified here)
 * Provenance: D: BW per socket
 * Notes: Cloud-only SKU (not on ark.intel.com); SKU name, core count and
 * clocks not verified. A c3-highcpu-44 VM is a 22-core slice whose share of
 * socket bandwidth is unknown, so this row is only an upper bound.
 * Sparsity: no per-SKU AMX TFLOPS published (dense rates only here).
 */

static const RidgelineMemoryTier kIntelXeonPlatinum8481cTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "DDR5-4800, 8 channels",
     .kind = RIDGELINE_TIER_DDR,
     /* ASSUMPTION: platform-dependent (sheet blank) */
     .capacity_bytes = RL_XEON_DRAM_BYTES,
     /* mem_bw_gbs 307.2 [D]: 8 channels x 4800 MT/s x 8 B */
     .read_bandwidth_bytes_per_second = 307.2e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* intel-gaudi2 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "intel-gaudi2",
     .display_name = "Intel Gaudi 2 (HL-225H)",
     .vendor = "Intel (Habana)",
     .sources = "hardware_specs.csv row intel-gaudi2\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: mem, BW 2460 (stas00; 2450 pcguia), BF16, FP8 865 (stas00; 835 pcguia), TDP, TPC/MME, 7nm; K: SRAM 48 MB, 24x100GbE; R: memory_unit GiB (hl-smi reports 98304 MiB)\n"
         "pcguia.pt Gaudi 3 article (states: Gaudi 2 96 GB HBM2e, 2.45 TB/s, 432 TFLOPS BF16, 600 W, 24 TPCs)\n"
         "y-ic.de (states: 24 TPCs, 2 MMEs)\n"
         "gigazine (states: 7nm)\n"
         "intel.com Gaudi 2 model-performance page (HL-225H)",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 432 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 432e12,
             /* fp16_bf16_tflops_dense 432 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 432e12,
             /* fp8_tflops_dense 865 TFLOPS [R: 2450 pcguia), BF16, FP8 865
              * (stas00] */
             [RIDGELINE_MATH_FP8] = 865e12,
         },
     .tiers = kIntelGaudi2Tiers,
     .tier_count = sizeof(kIntelGaudi2Tiers) / sizeof(kIntelGaudi2Tiers[0]),
     .tdp_watts = 600, /* tdp_w 600 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: D: 24 x 100 GbE [K] = 2400 Gb/s = 300 GB/s per direction x 2 = 600 GB/s */
     .interconnect_bytes_per_second = 600e9,
    },
    /* intel-gaudi3 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "intel-gaudi3",
     .display_name = "Intel Gaudi 3 (HL-325L OAM)",
     .vendor = "Intel (Habana)",
     .sources = "hardware_specs.csv row intel-gaudi3\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: all filled; R: memory_unit GiB (hl-smi reports 131072 MiB)\n"
         "pcguia.pt (states: 128 GB, 3.7 TB/s, 96 MB SRAM 12.8 TB/s, 1835 TFLOPS FP8/BF16, 900 W)\n"
         "y-ic.de (states: 3.67 TB/s, 28.7 vector BF16, 24x200GbE)\n"
         "yobitel.com (states: TSMC 5nm, 900 W)",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 1835 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 1835e12,
             /* fp16_bf16_tflops_dense 1835 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 1835e12,
             /* fp8_tflops_dense 1835 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 1835e12,
         },
     .tiers = kIntelGaudi3Tiers,
     .tier_count = sizeof(kIntelGaudi3Tiers) / sizeof(kIntelGaudi3Tiers[0]),
     .tdp_watts = 900, /* tdp_w 900 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: D: 24 x 200 GbE = 4.8 Tb/s [R] = 600 GB/s per direction x 2 = 1200 GB/s */
     .interconnect_bytes_per_second = 1200e9,
    },
    /* intel-xeon-platinum-8480p */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "intel-xeon-platinum-8480p",
     .display_name = "Intel Xeon Platinum 8480+ (Sapphire Rapids)",
     .vendor = "Intel",
     .sources = "hardware_specs.csv row intel-xeon-platinum-8480p\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 56 cores, 3.8 GHz turbo, 2.0 GHz base, DDR5-4800; D: BW; K: LLC, TDP, price, UPI/PCIe; D: AMX BF16/INT8 and AVX-512 FP32 (per-core rates x cores x 2.0 GHz)\n"
         "intel-extension-for-transformers release_data.md (states: \"8480+ @3.8GHz, 56 cores/socket\", DDR5 4800)\n"
         "intel.com Gaudi 3 page (states: \"Xeon Platinum 8480+ CPUs at 2.0 GHz\")\n"
         "ark.intel.com",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 7.17 TFLOPS [D: AMX BF16/INT8 and AVX-512
              * FP32 (per-core rates x cores x 2.0 GHz)] */
             [RIDGELINE_MATH_FP32] = 7.17e12,
             /* fp16_bf16_tflops_dense 114.7 TFLOPS [D: AMX BF16/INT8 and
              * AVX-512 FP32 (per-core rates x cores x 2.0 GHz)] */
             [RIDGELINE_MATH_BF16] = 114.7e12,
             /* int8_tops_dense 229.4 TOPS [D: AMX BF16/INT8 and AVX-512 FP32
              * (per-core rates x cores x 2.0 GHz)] */
             [RIDGELINE_MATH_INT8] = 229.4e12,
         },
     .tiers = kIntelXeonPlatinum8480pTiers,
     .tier_count = sizeof(kIntelXeonPlatinum8480pTiers) / sizeof(kIntelXeonPlatinum8480pTiers[0]),
     .tdp_watts = 350, /* tdp_w 350 W [K] */
     .price_usd = 10710, /* launch_price_usd $10710 [K] */
    },
    /* intel-xeon-w9-3475x */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "intel-xeon-w9-3475x",
     .display_name = "Intel Xeon w9-3475X (Sapphire Rapids)",
     .vendor = "Intel",
     .sources = "hardware_specs.csv row intel-xeon-w9-3475x\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 36 cores, 8-channel DDR5-4800 = 307.2 GB/s; D: BW; K: 300 W, RCP $3,739, base 2.2 / turbo 4.8 GHz; D: AMX BF16/INT8 and AVX-512 FP32 (per-core rates x cores x 2.2 GHz)\n"
         "techpowerup.com 2024-02-06 (W9-3475X 36-core/72-thread)\n"
         "sweclockers.com (Xeon W-3400: 8 DDR5-4800 channels = 307.2 GB/s, up to 4 TB)\n"
         "ark.intel.com",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 5.07 TFLOPS [D: AMX BF16/INT8 and AVX-512
              * FP32 (per-core rates x cores x 2.2 GHz)] */
             [RIDGELINE_MATH_FP32] = 5.07e12,
             /* fp16_bf16_tflops_dense 81.1 TFLOPS [D: AMX BF16/INT8 and
              * AVX-512 FP32 (per-core rates x cores x 2.2 GHz)] */
             [RIDGELINE_MATH_BF16] = 81.1e12,
             /* int8_tops_dense 162.2 TOPS [D: AMX BF16/INT8 and AVX-512 FP32
              * (per-core rates x cores x 2.2 GHz)] */
             [RIDGELINE_MATH_INT8] = 162.2e12,
         },
     .tiers = kIntelXeonW93475xTiers,
     .tier_count = sizeof(kIntelXeonW93475xTiers) / sizeof(kIntelXeonW93475xTiers[0]),
     .tdp_watts = 300, /* tdp_w 300 W [K] */
     .price_usd = 3739, /* launch_price_usd $3739 [K] */
    },
    /* intel-xeon-platinum-8481c */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "intel-xeon-platinum-8481c",
     .display_name = "Intel Xeon Platinum 8481C (GCP C3, Sapphire Rapids)",
     .vendor = "Intel",
     .sources = "hardware_specs.csv row intel-xeon-platinum-8481c\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): D: BW per socket; D: AMX BF16/INT8 and AVX-512 FP32 (per-core rates x cores x 3.0 GHz)\n"
         "llama.cpp issue #34 thread (GCP c3-highcpu-44, 4th-gen Xeon Sapphire Rapids, 22 threads)\n"
         "the 8481C SKU name is an assumption (C3 instances report it; not verified here)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 4.22 TFLOPS [D: AMX BF16/INT8 and AVX-512
              * FP32 (per-core rates x cores x 3.0 GHz)] */
             [RIDGELINE_MATH_FP32] = 4.22e12,
             /* fp16_bf16_tflops_dense 67.58 TFLOPS [D: AMX BF16/INT8 and
              * AVX-512 FP32 (per-core rates x cores x 3.0 GHz)] */
             [RIDGELINE_MATH_BF16] = 67.58e12,
             /* int8_tops_dense 135.2 TOPS [D: AMX BF16/INT8 and AVX-512 FP32
              * (per-core rates x cores x 3.0 GHz)] */
             [RIDGELINE_MATH_INT8] = 135.2e12,
         },
     .tiers = kIntelXeonPlatinum8481cTiers,
     .tier_count = sizeof(kIntelXeonPlatinum8481cTiers) / sizeof(kIntelXeonPlatinum8481cTiers[0]),
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("intel", "1.0.0", kPlatforms);

/*
 * Ridgeline hardware plugin "npu": mobile and laptop SoCs (Qualcomm, MediaTek).
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

/* ---- qualcomm-snapdragon-8-gen-2: Qualcomm Snapdragon 8 Gen 2 (mobile SoC) ----
 * Sources: github omnimind-ai/OmniInfer PR #66 (states: SM8550 CPU topology);
 * mllm issue #212 (states: 8 Gen 2 = Hexagon v73); qualcomm.com product brief
 * (not checked against a copy)
 * Provenance: R: CPU topology, v73; K: LPDDR5X speed, node; D: BW
 * Notes: mem_bw DERIVED from LPDDR5X data rate x 64-bit bus. Derived BW =
 * data rate x 8 bytes; no sustained-BW measurement found.
 * Sparsity: NPU TOPS not officially published (dense rates only here).
 */

static const RidgelineMemoryTier kQualcommSnapdragon8Gen2Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X-4200",
     .kind = RIDGELINE_TIER_LPDDR,
     /* ASSUMPTION: phone configuration (sheet blank) */
     .capacity_bytes = RL_PHONE_LPDDR_BYTES,
     /* mem_bw_gbs 67.2 [D]: LPDDR data rate x 64-bit bus / 8 (theoretical; phones sustain less) */
     .read_bandwidth_bytes_per_second = 67.2e9,
    },
    RL_PHONE_UFS4_FLASH_TIER,
};

/* ---- qualcomm-snapdragon-8-gen-3: Qualcomm Snapdragon 8 Gen 3 (mobile SoC) ----
 * Sources: mllm issue #212 (states: QNN v75 = Snapdragon 8 Gen 3 Hexagon);
 * qualcomm.com product brief (not checked against a copy)
 * Provenance: R: Hexagon v75; K: memory speed, node; D: BW
 * Notes: mem_bw DERIVED from LPDDR5X data rate x 64-bit bus.
 * Sparsity: NPU TOPS not officially published (dense rates only here).
 */

static const RidgelineMemoryTier kQualcommSnapdragon8Gen3Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X-4800",
     .kind = RIDGELINE_TIER_LPDDR,
     /* ASSUMPTION: phone configuration (sheet blank) */
     .capacity_bytes = RL_PHONE_LPDDR_BYTES,
     /* mem_bw_gbs 76.8 [D]: LPDDR data rate x 64-bit bus / 8 (theoretical; phones sustain less) */
     .read_bandwidth_bytes_per_second = 76.8e9,
    },
    RL_PHONE_UFS4_FLASH_TIER,
};

/* ---- qualcomm-snapdragon-8-elite: Qualcomm Snapdragon 8 Elite (mobile SoC) ----
 * Sources: hi-tech.ua 2024-10-23 (3nm, dual-channel LPDDR5X-5300, Adreno 830,
 * 2 prime + 6 performance Oryon cores); qualcomm.com product brief
 * Provenance: R: LPDDR5X-5300, 3nm, CPU/GPU config; D: BW
 * Notes: mem_bw DERIVED: 10.6 Gbps x 64-bit / 8 = 84.8 GB/s (Qualcomm quotes
 * the LPDDR5X speed as 5300 MHz, i.e. 10.6 Gbps, same convention as 4800 MHz
 * = 9.6 Gbps on 8 Gen 3). An earlier revision of this table used 10.7 Gbps /
 * 85.3 GB/s.
 * Sparsity: NPU TOPS not officially published (dense rates only here).
 */

static const RidgelineMemoryTier kQualcommSnapdragon8EliteTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X",
     .kind = RIDGELINE_TIER_LPDDR,
     /* ASSUMPTION: phone configuration (sheet blank) */
     .capacity_bytes = RL_PHONE_LPDDR_BYTES,
     /* mem_bw_gbs 84.8 [D]: LPDDR data rate x 64-bit bus / 8 (theoretical; phones sustain less) */
     .read_bandwidth_bytes_per_second = 84.8e9,
    },
    RL_PHONE_UFS4_FLASH_TIER,
};

/* ---- mediatek-dimensity-9300: MediaTek Dimensity 9300 (mobile SoC) ----
 * Sources: mediatek.com Dimensity 9300 page (not checked against a copy);
 * arXiv 2410.03613 (states: Dimensity 9300 in Vivo Pad3 Pro fastest llama.cpp
 * CPU prefill/decode among tested SoCs)
 * Provenance: K: all; D: BW
 * Notes: mem_bw DERIVED from LPDDR5T data rate x 64-bit bus. Recalled;
 * verify.
 * Sparsity: APU 790 TOPS not officially published as a single number (dense
 * rates only here).
 */

static const RidgelineMemoryTier kMediatekDimensity9300Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5T-9600",
     .kind = RIDGELINE_TIER_LPDDR,
     /* ASSUMPTION: phone configuration (sheet blank) */
     .capacity_bytes = RL_PHONE_LPDDR_BYTES,
     /* mem_bw_gbs 76.8 [D]: LPDDR data rate x 64-bit bus / 8 (theoretical; phones sustain less) */
     .read_bandwidth_bytes_per_second = 76.8e9,
    },
    RL_PHONE_UFS4_FLASH_TIER,
};

/* ---- qualcomm-snapdragon-8-elite-gen-5: Qualcomm Snapdragon 8 Elite Gen 5 (mobile SoC) ----
 * Sources: lowyat.net (up to 24GB LPDDR5x at up to 5,300MHz; TOPS not
 * stated); technetbooks.com / themobileindian.com (3nm, CPU 2+6 at 4.6/3.62
 * GHz, Adreno 840 1.2 GHz 18 MB, NPU +37% vs 8 Elite)
 * Provenance: R: memory speed/capacity, 3nm, CPU/GPU config; D: BW
 * Notes: mem_bw DERIVED: 10.6 Gbps x 64-bit / 8 = 84.8 GB/s (theoretical;
 * phones sustain much less).
 * Sparsity: NPU TOPS not officially published (dense rates only here).
 */

static const RidgelineMemoryTier kQualcommSnapdragon8EliteGen5Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X",
     .kind = RIDGELINE_TIER_LPDDR,
     /* memory_gb 24 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 24 * RL_GIB,
     /* mem_bw_gbs 84.8 [D]: LPDDR data rate x 64-bit bus / 8 (theoretical; phones sustain less) */
     .read_bandwidth_bytes_per_second = 84.8e9,
    },
    RL_PHONE_UFS4_FLASH_TIER,
};

/* ---- qualcomm-snapdragon-x-elite: Qualcomm Snapdragon X Elite (X1E) (laptop SoC) ----
 * Sources: notebookcheck.net X1E-84-100 (12 Oryon cores, 4.6 TFLOPS Adreno
 * X1-85, 45 TOPS NPU, LPDDR5x-8448); tweaktown.com (up to 64GB LPDDR5X-8533,
 * 136 GB/s, 4nm); smartphonecrunch.com SKU table (X1E-84-100 4.6 TFLOPS;
 * X1E-80-100/78-100 3.8 TFLOPS)
 * Provenance: R: memory type/capacity, NPU 45 TOPS, CPU/GPU config, 4nm; D:
 * BW
 * Notes: mem_bw DERIVED: 8448 MT/s x 16 B = 135.2 GB/s (136.5 at 8533). GPU
 * FP32 4.6 TF on X1E-84-100, 3.8 TF on X1E-80-100/-78-100; the SKU in the
 * measured CRD is not stated, so fp32 is left blank.
 * Sparsity: NPU 45 TOPS (Qualcomm; precision not stated in what was cited)
 * (dense rates only here).
 */

static const RidgelineMemoryTier kQualcommSnapdragonXEliteTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X-8533",
     .kind = RIDGELINE_TIER_LPDDR,
     /* memory_gb 64 [R] (maximum configuration of the chip), memory_unit GiB */
     .capacity_bytes = 64 * RL_GIB,
     /* mem_bw_gbs 136.5 [D]: 8533 MT/s x 16 B (announced LPDDR5X-8533;
      * shipping 8448 gives 135.2, the higher is the bound) */
     .read_bandwidth_bytes_per_second = 136.5e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* qualcomm-snapdragon-8-gen-2 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "qualcomm-snapdragon-8-gen-2",
     .display_name = "Qualcomm Snapdragon 8 Gen 2",
     .vendor = "Qualcomm",
     .sources = "hardware_specs.csv row qualcomm-snapdragon-8-gen-2\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: CPU topology, v73; K: LPDDR5X speed, node; D: BW\n"
         "github omnimind-ai/OmniInfer PR #66 (states: SM8550 CPU topology)\n"
         "mllm issue #212 (states: 8 Gen 2 = Hexagon v73)\n"
         "qualcomm.com product brief (not checked against a copy)\n"
         "Samsung UFS 4.0 announcement, May 2022 (4,200 MB/s read, 2,800 MB/s write)",
     /* No compute rate in the sheet or a citable source: peaks left 0
      * (compute roof unknown). */
     .tiers = kQualcommSnapdragon8Gen2Tiers,
     .tier_count = sizeof(kQualcommSnapdragon8Gen2Tiers) / sizeof(kQualcommSnapdragon8Gen2Tiers[0]),
    },
    /* qualcomm-snapdragon-8-gen-3 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "qualcomm-snapdragon-8-gen-3",
     .display_name = "Qualcomm Snapdragon 8 Gen 3",
     .vendor = "Qualcomm",
     .sources = "hardware_specs.csv row qualcomm-snapdragon-8-gen-3\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: Hexagon v75; K: memory speed, node; D: BW; R (secondary, low confidence): NPU INT8 45\n"
         "mllm issue #212 (states: QNN v75 = Snapdragon 8 Gen 3 Hexagon)\n"
         "qualcomm.com product brief (not checked against a copy)\n"
         "Samsung UFS 4.0 announcement, May 2022 (4,200 MB/s read, 2,800 MB/s write)",
     .peak_ops_per_second =
         {
             /* FP16 (QNN w4a16/w8a16: int16 activations on the Hexagon NPU) 45
              * TOPS: the sheet's NPU INT8 rating (R (secondary, low
              * confidence): NPU INT8 45); Qualcomm publishes no FP16/int16
              * rate, and the matrix unit runs 16-bit activations at no more
              * than its INT8 rate, so INT8 bounds it [D: upper bound] */
             [RIDGELINE_MATH_FP16] = 45e12,
             /* int8_tops_dense 45 TOPS [R (secondary, low confidence): NPU
              * INT8 45] */
             [RIDGELINE_MATH_INT8] = 45e12,
         },
     .tiers = kQualcommSnapdragon8Gen3Tiers,
     .tier_count = sizeof(kQualcommSnapdragon8Gen3Tiers) / sizeof(kQualcommSnapdragon8Gen3Tiers[0]),
    },
    /* qualcomm-snapdragon-8-elite */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "qualcomm-snapdragon-8-elite",
     .display_name = "Qualcomm Snapdragon 8 Elite",
     .vendor = "Qualcomm",
     .sources = "hardware_specs.csv row qualcomm-snapdragon-8-elite\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: LPDDR5X-5300, 3nm, CPU/GPU config; D: BW; R (secondary, low confidence): NPU INT8 80\n"
         "hi-tech.ua 2024-10-23 (3nm, dual-channel LPDDR5X-5300, Adreno 830, 2 prime + 6 performance Oryon cores)\n"
         "qualcomm.com product brief\n"
         "Samsung UFS 4.0 announcement, May 2022 (4,200 MB/s read, 2,800 MB/s write)",
     .peak_ops_per_second =
         {
             /* FP16 (QNN w4a16/w8a16: int16 activations on the Hexagon NPU) 80
              * TOPS: the sheet's NPU INT8 rating (R (secondary, low
              * confidence): NPU INT8 80); Qualcomm publishes no FP16/int16
              * rate, and the matrix unit runs 16-bit activations at no more
              * than its INT8 rate, so INT8 bounds it [D: upper bound] */
             [RIDGELINE_MATH_FP16] = 80e12,
             /* int8_tops_dense 80 TOPS [R (secondary, low confidence): NPU
              * INT8 80] */
             [RIDGELINE_MATH_INT8] = 80e12,
         },
     .tiers = kQualcommSnapdragon8EliteTiers,
     .tier_count = sizeof(kQualcommSnapdragon8EliteTiers) / sizeof(kQualcommSnapdragon8EliteTiers[0]),
    },
    /* mediatek-dimensity-9300 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "mediatek-dimensity-9300",
     .display_name = "MediaTek Dimensity 9300",
     .vendor = "MediaTek",
     .sources = "hardware_specs.csv row mediatek-dimensity-9300\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R (secondary): LPDDR5T-9600, N4P, CPU config, APU 790; D: BW\n"
         "mediatek.com Dimensity 9300 page (not checked against a copy)\n"
         "arXiv 2410.03613 (states: Dimensity 9300 in Vivo Pad3 Pro fastest llama.cpp CPU prefill/decode among tested SoCs)\n"
         "Samsung UFS 4.0 announcement, May 2022 (4,200 MB/s read, 2,800 MB/s write)",
     /* No compute rate in the sheet or a citable source: peaks left 0
      * (compute roof unknown). */
     .tiers = kMediatekDimensity9300Tiers,
     .tier_count = sizeof(kMediatekDimensity9300Tiers) / sizeof(kMediatekDimensity9300Tiers[0]),
    },
    /* qualcomm-snapdragon-8-elite-gen-5 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "qualcomm-snapdragon-8-elite-gen-5",
     .display_name = "Qualcomm Snapdragon 8 Elite Gen 5",
     .vendor = "Qualcomm",
     .sources = "hardware_specs.csv row qualcomm-snapdragon-8-elite-gen-5\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: memory speed/capacity, 3nm, CPU/GPU config; D: BW; D (low confidence): NPU INT8 109.6 = 80 x 1.37; D: memory_unit GiB (LPDDR die densities)\n"
         "lowyat.net (up to 24GB LPDDR5x at up to 5,300MHz; TOPS not stated)\n"
         "technetbooks.com / themobileindian.com (3nm, CPU 2+6 at 4.6/3.62 GHz, Adreno 840 1.2 GHz 18 MB, NPU +37% vs 8 Elite)\n"
         "Samsung UFS 4.0 announcement, May 2022 (4,200 MB/s read, 2,800 MB/s write)",
     .peak_ops_per_second =
         {
             /* FP16 (QNN w4a16/w8a16: int16 activations on the Hexagon NPU)
              * 109.6 TOPS: the sheet's NPU INT8 rating (D (low confidence):
              * NPU INT8 109.6 = 80 x 1.37); Qualcomm publishes no FP16/int16
              * rate, and the matrix unit runs 16-bit activations at no more
              * than its INT8 rate, so INT8 bounds it [D: upper bound] */
             [RIDGELINE_MATH_FP16] = 109.6e12,
             /* int8_tops_dense 109.6 TOPS [D (low confidence): NPU INT8 109.6
              * = 80 x 1.37] */
             [RIDGELINE_MATH_INT8] = 109.6e12,
         },
     .tiers = kQualcommSnapdragon8EliteGen5Tiers,
     .tier_count = sizeof(kQualcommSnapdragon8EliteGen5Tiers) / sizeof(kQualcommSnapdragon8EliteGen5Tiers[0]),
    },
    /* qualcomm-snapdragon-x-elite */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "qualcomm-snapdragon-x-elite",
     .display_name = "Qualcomm Snapdragon X Elite (X1E)",
     .vendor = "Qualcomm",
     .sources = "hardware_specs.csv row qualcomm-snapdragon-x-elite\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: memory type/capacity, NPU 45 TOPS INT8, GPU FP32 4.6 (X1E-84-100), CPU/GPU config, 4nm; D: BW; D: memory_unit GiB (LPDDR die densities)\n"
         "notebookcheck.net X1E-84-100 (12 Oryon cores, 4.6 TFLOPS Adreno X1-85, 45 TOPS NPU, LPDDR5x-8448)\n"
         "tweaktown.com (up to 64GB LPDDR5X-8533, 136 GB/s, 4nm)\n"
         "smartphonecrunch.com SKU table (X1E-84-100 4.6 TFLOPS; X1E-80-100/78-100 3.8 TFLOPS)",
     /* No peak: compute roof unknown. The sheet leaves fp32 blank (the
      * measured SKU is unstated: the Adreno GPU is 4.6 TFLOPS FP32 on
      * X1E-84-100, 3.8 on X1E-80/-78), and LLM runtimes on this part
      * (Qualcomm Genie/QNN) run on the Hexagon NPU, whose 45 TOPS headline
      * states no precision. A GPU-only roof would not bound NPU runs
      * (docs/validation.md, rows m257/m258). */
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 4.6 TFLOPS [R: memory type/capacity, NPU
              * 45 TOPS INT8, GPU FP32 4.6 (X1E-84-100), CPU/GPU config, 4nm]
              * */
             [RIDGELINE_MATH_FP32] = 4.6e12,
             /* FP16 (QNN w4a16/w8a16: int16 activations on the Hexagon NPU) 45
              * TOPS: the sheet's NPU INT8 rating (R: memory type/capacity, NPU
              * 45 TOPS INT8, GPU FP32 4.6 (X1E-84-100), CPU/GPU config, 4nm);
              * Qualcomm publishes no FP16/int16 rate, and the matrix unit runs
              * 16-bit activations at no more than its INT8 rate, so INT8
              * bounds it [D: upper bound] */
             [RIDGELINE_MATH_FP16] = 45e12,
             /* int8_tops_dense 45 TOPS [R: memory type/capacity, NPU 45 TOPS
              * INT8, GPU FP32 4.6 (X1E-84-100), CPU/GPU config, 4nm] */
             [RIDGELINE_MATH_INT8] = 45e12,
         },
     .tiers = kQualcommSnapdragonXEliteTiers,
     .tier_count = sizeof(kQualcommSnapdragonXEliteTiers) / sizeof(kQualcommSnapdragonXEliteTiers[0]),
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("npu", "1.0.0", kPlatforms);

/*
 * Ridgeline hardware plugin "amd": AMD Instinct GPUs.
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

/* ---- amd-mi300x: AMD Instinct MI300X (datacenter GPU) ----
 * Sources: rocm-docs docs/reference/gpu-specs.rst (states: VRAM, CUs, L2,
 * L3/Infinity Cache, LDS); raw.githubusercontent
 * alpharomercoma/MI300X-vs-H200 METHODOLOGY.md (states: BF16 1307.4, FP8
 * 2614.9, 5.3 TB/s, 192 GB, 750 W); docs.vultr.com hardware-requirements
 * (states: 5.3 TB/s); mlcommons v4.1 AMD system json (states:
 * MI300X-...-192GB-750W); AMD MI300X datasheet
 * Provenance: R: memory, BW, BF16, FP8, TBP, CU/cache; K: TF32, FP32, INT8,
 * IF link BW, process
 * Notes: Peak numbers at 2100 MHz peak engine clock; sustained clocks under
 * load are lower.
 * Sparsity: AMD lists sparse = 2x (FP16 2614.9, FP8 5229.8) (dense rates only
 * here).
 */

static const RidgelineMemoryTier kAmdMi300xTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM3",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 192 [R], memory_unit GiB */
     .capacity_bytes = 192 * RL_GIB,
     /* mem_bw_gbs 5300 [R] */
     .read_bandwidth_bytes_per_second = 5300e9,
    },
    RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER,
};

/* ---- amd-mi325x: AMD Instinct MI325X (datacenter GPU) ----
 * Sources: rocm-docs docs/reference/gpu-specs.rst (states: VRAM, CUs, L2,
 * L3/Infinity Cache, LDS); awesomeagents.ai/hardware/amd-mi325x (states: FP8
 * 2614.9/5229.8, FP16 1307.4, TF32 653.7, FP32 163.4, 6 TB/s, 5nm+6nm);
 * docs.vultr.com (states: 256 GB, 6.0 TB/s, 1,307 TFLOPS); wiaix.com (states:
 * seven IF links, PCIe Gen5 x16)
 * Provenance: R: all filled except TDP (excerpt truncated "TDP 1,0..."); K:
 * TDP 1000 W
 * Notes: Same compute die/clocks as MI300X.
 * Sparsity: FP8 with sparsity 5229.8 (dense rates only here).
 */

static const RidgelineMemoryTier kAmdMi325xTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM3E",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 256 [R], memory_unit GiB */
     .capacity_bytes = 256 * RL_GIB,
     /* mem_bw_gbs 6000 [R] */
     .read_bandwidth_bytes_per_second = 6000e9,
    },
    RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER,
};

/* ---- amd-mi250x: AMD Instinct MI250X (datacenter GPU (2 GCDs)) ----
 * Sources: rocm-docs docs/reference/gpu-specs.rst (states: VRAM, CUs, L2,
 * L3/Infinity Cache, LDS); rocm.docs.amd.com gpu-arch/mi250.md (states: 50
 * GB/s per IF link); AMD MI250X datasheet
 * Provenance: R: 128 GB, CUs, L2, IF link rate; K: BW, FLOPS, TDP
 * Notes: FP32 column = vector rate; packed/matrix FP32 95.7 TF; FP64 vector
 * 47.9 / matrix 95.7. TDP 500 W (560 W peak). Appears to software as 2 GPUs
 * of 64 GB / 1.6 TB/s each. No FP8.
 * Sparsity: no structured-sparsity speedup on CDNA2 (dense rates only here).
 */

static const RidgelineMemoryTier kAmdMi250xTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 128 [R], memory_unit GiB */
     .capacity_bytes = 128 * RL_GIB,
     /* mem_bw_gbs 3276.8 [K] */
     .read_bandwidth_bytes_per_second = 3276.8e9,
    },
};

/* ---- amd-epyc-9965: AMD EPYC 9965 (Turin Dense, Zen 5c) (server CPU (AVX-512)) ----
 * Notes (hardware_specs.csv): mem_bw DERIVED per socket: 12 ch x 6400 MT/s x
 * 8 B = 614.4 GB/s (theoretical; a public note also states 614 GB/s). FP32
 * DERIVED: 192 cores x 64 FLOP/cycle (2 x 512-bit FMA x 16 lanes x 2) x 3.35
 * GHz all-core boost = 41.16 TF. Zen 5 (and Zen 5c, same ISA/IPC) in EPYC
 * 9005 has the full 512-bit datapath, 2x Zen 4's double-pumped 256-bit. BF16
 * DERIVED: VDPBF16PS does 2 BF16 multiply-adds per FP32 lane (64 FLOP per
 * 512-bit instruction vs 32 for FP32 FMA). This ASSUMES it issues at the FMA
 * rate (2/cycle), giving 128 FLOP/cycle x 192 x 3.35 = 82.33 TF. At base
 * 2.25 GHz: FP32 27.6 / BF16 55.3; at 3.7 GHz max boost: 45.5 / 90.9. Heavy
 * AVX-512 load at 500 W may not hold 3.35 GHz on all cores. INT8
 * (AVX512_VNNI) left blank: VNNI throughput not sourced. Memory capacity is
 * platform-dependent, so memory_gb and memory_unit are blank. Dual-socket
 * systems double BW and FLOPS.
 */
static const RidgelineMemoryTier kAmdEpyc9965Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "DDR5-6400, 12 channels",
     .kind = RIDGELINE_TIER_DDR,
     /* memory_gb blank (platform-dependent): RL_XEON_DRAM_BYTES, the per-
      * socket DDR5 ASSUMPTION */
     .capacity_bytes = RL_XEON_DRAM_BYTES,
     /* mem_bw_gbs 614.4 [D]: 12 ch x 6400 MT/s x 8 B, per socket */
     .read_bandwidth_bytes_per_second = 614.4e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* amd-mi300x */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "amd-mi300x",
     .display_name = "AMD Instinct MI300X",
     .vendor = "AMD",
     .sources = "hardware_specs.csv row amd-mi300x\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: memory, BW, BF16, FP8, TBP, CU/cache; K: TF32, FP32, INT8, IF link BW, process; R: memory_unit GiB (ROCm 'VRAM (GiB)'; rocm-smi bytes)\n"
         "rocm-docs docs/reference/gpu-specs.rst (states: VRAM, CUs, L2, L3/Infinity Cache, LDS)\n"
         "raw.githubusercontent alpharomercoma/MI300X-vs-H200 METHODOLOGY.md (states: BF16 1307.4, FP8 2614.9, 5.3 TB/s, 192 GB, 750 W)\n"
         "docs.vultr.com hardware-requirements (states: 5.3 TB/s)\n"
         "mlcommons v4.1 AMD system json (states: MI300X-...-192GB-750W)\n"
         "AMD MI300X datasheet\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 163.4 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 163.4e12,
             /* tf32_tflops_dense 653.7 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 653.7e12,
             /* fp16_bf16_tflops_dense 1307.4 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 1307.4e12,
             /* fp16_bf16_tflops_dense 1307.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 1307.4e12,
             /* fp8_tflops_dense 2614.9 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 2614.9e12,
             /* int8_tops_dense 2614.9 TOPS [K] */
             [RIDGELINE_MATH_INT8] = 2614.9e12,
         },
     .tiers = kAmdMi300xTiers,
     .tier_count = sizeof(kAmdMi300xTiers) / sizeof(kAmdMi300xTiers[0]),
     .tdp_watts = 750, /* tdp_w 750 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: D: 7 Infinity Fabric links x 128 GB/s per link (AMD, K) = 896 GB/s */
     .interconnect_bytes_per_second = 896e9,
    },
    /* amd-mi325x */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "amd-mi325x",
     .display_name = "AMD Instinct MI325X",
     .vendor = "AMD",
     .sources = "hardware_specs.csv row amd-mi325x\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: all filled except TDP (excerpt truncated \"TDP 1,0...\"); K: TDP 1000 W; D: INT8 = MI300X rate (same die/clock); R: memory_unit GiB (ROCm 'VRAM (GiB)')\n"
         "rocm-docs docs/reference/gpu-specs.rst (states: VRAM, CUs, L2, L3/Infinity Cache, LDS)\n"
         "awesomeagents.ai/hardware/amd-mi325x (states: FP8 2614.9/5229.8, FP16 1307.4, TF32 653.7, FP32 163.4, 6 TB/s, 5nm+6nm)\n"
         "docs.vultr.com (states: 256 GB, 6.0 TB/s, 1,307 TFLOPS)\n"
         "wiaix.com (states: seven IF links, PCIe Gen5 x16)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 163.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 163.4e12,
             /* tf32_tflops_dense 653.7 TFLOPS [R] */
             [RIDGELINE_MATH_TF32] = 653.7e12,
             /* fp16_bf16_tflops_dense 1307.4 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 1307.4e12,
             /* fp16_bf16_tflops_dense 1307.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 1307.4e12,
             /* fp8_tflops_dense 2614.9 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 2614.9e12,
             /* int8_tops_dense 2614.9 TOPS [D: INT8 = MI300X rate (same
              * die/clock)] */
             [RIDGELINE_MATH_INT8] = 2614.9e12,
         },
     .tiers = kAmdMi325xTiers,
     .tier_count = sizeof(kAmdMi325xTiers) / sizeof(kAmdMi325xTiers[0]),
     .tdp_watts = 1000, /* tdp_w 1000 W [K] */
    },
    /* amd-mi250x */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "amd-mi250x",
     .display_name = "AMD Instinct MI250X",
     .vendor = "AMD",
     .sources = "hardware_specs.csv row amd-mi250x\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 128 GB, CUs, L2, IF link rate; K: BW, FLOPS, TDP; R: memory_unit GiB (ROCm 'VRAM (GiB)'; rocm-smi bytes)\n"
         "rocm-docs docs/reference/gpu-specs.rst (states: VRAM, CUs, L2, L3/Infinity Cache, LDS)\n"
         "rocm.docs.amd.com gpu-arch/mi250.md (states: 50 GB/s per IF link)\n"
         "AMD MI250X datasheet",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 47.9 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 47.9e12,
             /* fp16_bf16_tflops_dense 383 TFLOPS [K] */
             [RIDGELINE_MATH_BF16] = 383e12,
             /* fp16_bf16_tflops_dense 383 TFLOPS [K] */
             [RIDGELINE_MATH_FP16] = 383e12,
             /* int8_tops_dense 383 TOPS [K] */
             [RIDGELINE_MATH_INT8] = 383e12,
         },
     .tiers = kAmdMi250xTiers,
     .tier_count = sizeof(kAmdMi250xTiers) / sizeof(kAmdMi250xTiers[0]),
     .tdp_watts = 500, /* tdp_w 500 W [K] */
     /* scale-up link, hardware_specs.csv interconnect: D: 8 links x 50 GB/s per direction (ROCm MI250 doc, R) x 2 directions = 800 GB/s */
     .interconnect_bytes_per_second = 800e9,
    },
    /* amd-epyc-9965 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "amd-epyc-9965",
     .display_name = "AMD EPYC 9965 (Turin Dense, one socket)",
     .vendor = "AMD",
     .sources = "hardware_specs.csv row amd-epyc-9965\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R (secondary): 192C/384T, 2.25/3.35/3.7 GHz, 384 MB L3, 500 W, DDR5-6400 12-ch, $14,813, 3 nm + 6 nm, native 512-bit AVX-512, AVX512_BF16; D: BW 614.4, FP32 41.16, BF16 82.33\n"
         "public EPYC 9005 spec tables transcribing AMD / Wikipedia (EPYC 9965: 192 cores / 384 threads Zen 5c, base 2.25 GHz, all-core boost 3.35 GHz, max boost 3.7 GHz, 384 MB L3, 500 W, 12-channel DDR5-6400, $14,813)\n"
         "public note '614 GB/s' per socket\n"
         "llmperf.net EPYC 9000 page (9965: Zen 5c, TSMC 3 nm CCD + 6 nm I/O, citing AnandTech)\n"
         "numberworld.org/blogs/2024_8_7_zen5_avx512_teardown (Zen 5: native 512-bit AVX-512 datapath, 2x Zen 4 throughput)\n"
         "4nownews.com (EPYC 9005: full AVX-512 with 512-bit data processing)\n"
         "hi.whatpsu.com (Zen 5c = same ISA and IPC as Zen 5)\n"
         "pcmasters.de (znver5 ISA includes AVX512BF16, AVX512VNNI)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 41.16 TFLOPS [D]: 192 cores x 64
              * FLOP/cycle (2 x 512-bit FMA) x 3.35 GHz all-core boost */
             [RIDGELINE_MATH_FP32] = 41.16e12,
             /* fp16_bf16_tflops_dense 82.33 TFLOPS [D]: AVX512_BF16
              * VDPBF16PS, 128 FLOP/cycle x 192 x 3.35 GHz (ASSUMES FMA issue
              * rate); no FP16 matrix path, so FP16 work runs at the FP32 rate */
             [RIDGELINE_MATH_BF16] = 82.33e12,
         },
     .tiers = kAmdEpyc9965Tiers,
     .tier_count = sizeof(kAmdEpyc9965Tiers) / sizeof(kAmdEpyc9965Tiers[0]),
     .tdp_watts = 500, /* tdp_w 500 W [R secondary] */
     .price_usd = 14813, /* launch_price_usd 14813 [R secondary]: AMD 1ku price */
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("amd", "1.0.0", kPlatforms);

/*
 * Ridgeline hardware plugin "nvidia": NVIDIA GPUs (datacenter, workstation and GeForce).
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

/* ---- nvidia-h100-sxm-80gb: NVIDIA H100 SXM5 80GB (datacenter GPU) ----
 * Sources:
 * flashinfer-ai/flashinfer-ai.github.io:_posts/2024-01-03-introduce-flashinfer.md
 * (spec table); glennklockwood.com/garden/processors/h100;
 * lzwjava.github.io/nvidia-h200-gpu-specs-en; NVIDIA H100 architecture
 * whitepaper v1.04 Table 1 (BF16 989.4 dense | 1978.9 sparse, quoted in a
 * public repository note);
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/h100_sxm.yaml
 * (bf16 989, int8/fp8 1978 dense, 3350 GB/s, 700 W)
 * Provenance: R: mem, BW 3352 (flashinfer; datasheet rounds to 3.35 TB/s),
 * FP32 67, BF16 989.4, FP8/INT8 1978.9 dense, L2 50MB, smem 228KB, NVLink
 * 900, 700W; K: TF32 494.7, process
 * Notes: TDP is the max (configurable lower). No INT4 tensor path on Hopper.
 * Dense FP8 1978.9 = half of datasheet 3958 (sparse).
 * Sparsity: 2:4 sparse = 2x dense (datasheet headline: TF32 989, BF16 1979,
 * FP8 3958, INT8 3958 are WITH sparsity) (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaH100Sxm80gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM3",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 80 [R], memory_unit GiB */
     .capacity_bytes = 80 * RL_GIB,
     /* mem_bw_gbs 3352 [R] */
     .read_bandwidth_bytes_per_second = 3352e9,
    },
    RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER,
};

/* ---- nvidia-h100-pcie-80gb: NVIDIA H100 PCIe 80GB (datacenter GPU) ----
 * Sources: NVIDIA H100 PCIe product brief PB-11133-001_v02 (manuals.plus
 * mirror: 350 W TDP, ">2,000 GBps"); NVIDIA H100 architecture whitepaper
 * v1.04 Table 1 (BF16 756 dense | 1513 sparse, 350 W; quoted in a public
 * repository note);
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/h100_pcie.yaml
 * (bf16 756.5, int8/fp8 1513 dense, 2 TB/s, 350 W)
 * Provenance: R: 350 W, 2000 GB/s, BF16 756 dense, FP8/INT8 1513 dense; K:
 * FP32 51, TF32 378, SM count, L2, NVLink
 * Notes: Whitepaper lists 2039 GB/s for some SKUs; datasheet says 2 TB/s.
 * Boost clock lower than SXM, so per-SM FLOPS also lower.
 * Sparsity: datasheet headline numbers (TF32 756, BF16 1513, FP8 3026, INT8
 * 3026) are with sparsity; dense = half (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaH100Pcie80gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 80 [R: in the product name], memory_unit GiB */
     .capacity_bytes = 80 * RL_GIB,
     /* mem_bw_gbs 2000 [R] */
     .read_bandwidth_bytes_per_second = 2000e9,
    },
    RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER,
};

/* ---- nvidia-h200-sxm-141gb: NVIDIA H200 SXM 141GB (datacenter GPU) ----
 * Sources: lzwjava.github.io/nvidia-h200-gpu-specs-en; openmetal.io H200
 * blog; mlcommons inference_results_v4.1 H200-SXM-141GBx8 system json ("18x
 * 4th Gen NVLink, 900GB/s", "H200 TGP 700W");
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/h200_sxm.yaml
 * (4800 GB/s, bf16 989, int8/fp8 1978 dense, 700 W)
 * Provenance: R: 141 GB, 4.8 TB/s, 700 W, NVLink 900, BF16 989.4 / FP8 & INT8
 * 1978.9 dense (FP8 3958 sparse); K: FP32 67, TF32 494.7, L2
 * Notes: H200 NVL (PCIe) variant: up to 600 W, NVLink bridge; not listed
 * here.
 * Sparsity: datasheet FP8 3,958 / BF16 1,979 are with sparsity (dense rates
 * only here).
 */

static const RidgelineMemoryTier kNvidiaH200Sxm141gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM3e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 141 [R], memory_unit GiB */
     .capacity_bytes = 141 * RL_GIB,
     /* mem_bw_gbs 4800 [R] */
     .read_bandwidth_bytes_per_second = 4800e9,
    },
    RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER,
};

/* ---- nvidia-b200-180gb: NVIDIA B200 (HGX B200, per GPU) (datacenter GPU) ----
 * Sources: NVIDIA Blackwell datasheet, 'Individual Blackwell GPU
 * Specifications' (HGX B200: 180 GB HBM3e, 7.7 TB/s, FP16/BF16 4.5 PF, FP8 9
 * PF, FP4 18 PF with sparsity, up to 1,000 W; quoted in a public repository
 * note);
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/b200_sxm.yaml
 * (7.7 TB/s, 180 GiB, bf16 2250, int8/fp8 4500, fp4 9000 dense, 1000 W);
 * TensorRT-LLM perf-overview hardware list ("B200 180GB (DGX B200)")
 * Provenance: R: 180 GB, 7.7 TB/s, BF16 2250 / FP8 & INT8 4500 dense (FP4
 * 9000 dense), 1000 W; K: TF32 1100, NVLink 1.8 TB/s, process
 * Notes: HGX B200 datasheet: 62 TB/s per 8 GPUs (~7.7 TB/s each); DGX
 * B200/announcement: 8 TB/s. TDP 1000 W for HGX B200; GB200 B200 up to 1200
 * W. AMBIGUOUS: B200 numbers differ across NVIDIA documents (192 GB in 2024
 * announcement vs 180 GB shipping; 8 vs 7.7 TB/s; GB200 variant has higher
 * clocks/TDP: 10 PF FP8 sparse). Verify against the datasheet revision you
 * model. Has FP4 (NVFP4) tensor support.
 * Sparsity: HGX B200 datasheet lists sparse: FP4 18 PF, FP8/FP6 9 PF, INT8 9
 * POPS, BF16 4.5 PF, TF32 2.2 PF; dense = half (FP4 dense 9 PF) (dense rates
 * only here).
 */

static const RidgelineMemoryTier kNvidiaB200180gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM3e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 180 [R], memory_unit GiB */
     .capacity_bytes = 180 * RL_GIB,
     /* mem_bw_gbs 7700 [R] */
     .read_bandwidth_bytes_per_second = 7700e9,
    },
    RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER,
};

/* ---- nvidia-a100-sxm-40gb: NVIDIA A100 SXM4 40GB (datacenter GPU) ----
 * Sources: huggingface RajBhope/gpu-runtime-predictor gpu_catalog.json (1555
 * GB/s, 19.5 FP32, 312 FP16, 400 W, L2 40 MB); NVIDIA A100 architecture
 * whitepaper comparison table (TF32 156/312, BF16 312/624, INT8 624/1248,
 * INT4 1248/2496; quoted in public repositories)
 * Provenance: R: BW, FP32, FP16/BF16 312, TF32 156, INT8 624, INT4 1248, TDP,
 * L2; K: NVLink
 * Notes: No FP8. A100 40GB PCIe: 1555 GB/s, 250 W.
 * Sparsity: sparse = 2x (TF32 312, BF16 624, INT8 1248, INT4 2496) (dense
 * rates only here).
 */

static const RidgelineMemoryTier kNvidiaA100Sxm40gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 40 [R: in the product name], memory_unit GiB */
     .capacity_bytes = 40 * RL_GIB,
     /* mem_bw_gbs 1555 [R] */
     .read_bandwidth_bytes_per_second = 1555e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* ---- nvidia-a100-sxm-80gb: NVIDIA A100 SXM4 80GB (datacenter GPU) ----
 * Sources: calculon-ai/calculon systems/a100_80g.json (312 TF fp16 matrix, 80
 * GiB);
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/a100_sxm.yaml
 * (2039 GB/s, bf16 312, int8 624, 400 W); NVIDIA A100 datasheet
 * Provenance: R: 80 GB, 2039 GB/s, BF16 312, INT8 624, 400 W; K: FP32 19.5,
 * TF32 156, INT4, L2, NVLink
 * Notes: Note calculon uses 2048 GB/s; NVIDIA datasheet says 2,039 GB/s.
 * Sparsity: sparse = 2x (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaA100Sxm80gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 80 [R], memory_unit GiB */
     .capacity_bytes = 80 * RL_GIB,
     /* mem_bw_gbs 2039 [R] */
     .read_bandwidth_bytes_per_second = 2039e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* ---- nvidia-a100-pcie-80gb: NVIDIA A100 80GB PCIe (datacenter GPU) ----
 * Sources:
 * flashinfer-ai/flashinfer-ai.github.io:_posts/2024-01-03-introduce-flashinfer.md
 * (spec table);
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/a100_pcie.yaml
 * (1935 GB/s, bf16 312, int8 624, 300 W)
 * Provenance: R: 1935 GB/s, 312, INT8 624, 300 W, FP32 ~20, L2, smem; K: TF32
 * 156, INT4, NVLink
 * Sparsity: sparse = 2x (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaA100Pcie80gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2e",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 80 [R: in the product name], memory_unit GiB */
     .capacity_bytes = 80 * RL_GIB,
     /* mem_bw_gbs 1935 [R] */
     .read_bandwidth_bytes_per_second = 1935e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* Inline ECC on the GDDR6 of NVIDIA's data-centre parts (ABI 1.4), the one
 * share every such tier below uses:
 * - on by default on data-centre ("Tesla") cards, off on GeForce and
 *   Quadro/RTX workstation cards (Chaos support, "ECC State for Nvidia GPUs",
 *   support.chaos.com article 24886637113617, which also measured a 15 %
 *   slowdown with ECC on for an A40);
 * - the check bits live in the same DRAM as the data: nvidia-smi reports
 *   15/16 of the capacity with ECC on (L40S and A40 46068 MiB of 49152, A10
 *   23028, L4 23034; hardware_specs.csv), and NVIDIA's V100 whitepaper
 *   ("ECC Memory Resiliency") contrasts this inline ECC, "a portion of main
 *   memory is carved out for ECC bits" (6.25 % on the K40's GDDR5), with
 *   HBM2's sideband ECC, active "without a bandwidth or capacity penalty".
 * D: a byte of data moves with 1/15 byte of check bits, so data streams at
 * 15/16 of the raw rate at most: share 1/16. Workstation parts (RTX A6000,
 * RTX x000 Ada) report 49140 MiB with ECC off and keep 0. */
#define RL_NVIDIA_GDDR6_INLINE_ECC_SHARE (1.0 / 16)

/* ---- nvidia-a10: NVIDIA A10 (datacenter GPU (inference)) ----
 * Sources: gist.github.com/kimbochen (states: A10 125 TFLOP/s, 0.6 TB/s, 24
 * GB, 150 W); NVIDIA A10 datasheet
 * Provenance: R (secondary): 125, 600 GB/s, 24 GB, 150 W; K: rest
 * Notes: A10G (AWS) is a different SKU - do not mix.
 * Sparsity: datasheet lists dense | sparse pairs: TF32 62.5|125, BF16/FP16
 * 125|250, INT8 250|500, INT4 500|1000 (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaA10Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 24 [R], memory_unit GiB */
     .capacity_bytes = 24 * RL_GIB,
     /* mem_bw_gbs 600 [R] */
     .read_bandwidth_bytes_per_second = 600e9,
     /* ECC on by default (data-centre part) */
     .inline_ecc_share = RL_NVIDIA_GDDR6_INLINE_ECC_SHARE,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* ---- nvidia-l4: NVIDIA L4 (datacenter GPU (inference)) ----
 * Sources:
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/l4.yaml
 * (300 GB/s, 24 GiB, bf16 121, int8/fp8 242 dense, 72 W); NVIDIA L4 datasheet
 * Provenance: R: 24 GB, 300 GB/s, BF16 121, FP8/INT8 242 dense, 72 W; K: FP32
 * 30.3, TF32 60, L2 48 MB, 58 SMs
 * Notes: Sparse figures are 2x dense.
 * Sparsity: datasheet headline TF32 120, FP16/BF16 242, FP8 485, INT8 485 are
 * with sparsity (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaL4Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 24 [R], memory_unit GiB */
     .capacity_bytes = 24 * RL_GIB,
     /* mem_bw_gbs 300 [R] */
     .read_bandwidth_bytes_per_second = 300e9,
     /* ECC on by default (data-centre part) */
     .inline_ecc_share = RL_NVIDIA_GDDR6_INLINE_ECC_SHARE,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* ---- nvidia-l40s: NVIDIA L40S (datacenter GPU) ----
 * Sources:
 * github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/l40s.yaml
 * (864 GB/s, 48 GB, bf16 362.05, int8/fp8 733 dense, 350 W); hmc-tech.com L40
 * page (L40 FP16 tensor 362.07 TF, FP32 90.52); flashinfer blog RTX 6000 Ada
 * (same AD102 config) 960 GB/s, L2 98304 KB
 * Provenance: R: 48 GB, 864 GB/s, BF16 362.05, FP8/INT8 733 dense, 350 W; R
 * (sibling part): L2 96 MB; K: FP32 91.6, TF32 183, 142 SMs
 * Notes: FlashInfer decode-kernel data in measurements.csv shows L2-resident
 * KV (<=64 MiB) running far above 864 GB/s.
 * Sparsity: datasheet: TF32 183|366, BF16/FP16 362.05|733, FP8 733|1466, INT8
 * 733|1466 (dense|sparse) (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaL40sTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 48 [R], memory_unit GiB */
     .capacity_bytes = 48 * RL_GIB,
     /* mem_bw_gbs 864 [R] */
     .read_bandwidth_bytes_per_second = 864e9,
     /* ECC on by default (data-centre part) */
     .inline_ecc_share = RL_NVIDIA_GDDR6_INLINE_ECC_SHARE,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* ---- nvidia-rtx-4090: NVIDIA GeForce RTX 4090 (consumer GPU) ----
 * Sources:
 * flashinfer-ai/flashinfer-ai.github.io:_posts/2024-01-03-introduce-flashinfer.md
 * (1008 GB/s, 165 f32-acc / 330 f16-acc, 128 SMs, L2 73728 KB); gist
 * mikasenghaas accelerator-intensity (165e12 dense bf16, 1.008e12); NVIDIA
 * RTX Blackwell whitepaper comparison (4090 BF16 165.2 / FP8 330.3 dense with
 * FP32 accumulate; quoted in a public repository note); launch coverage
 * (incpak.com: 82.6 TFLOPS FP32, 450 W, $1,599; Tom's Hardware RTX 4080
 * review table: FP16 661 / INT8 1321 with sparsity)
 * Provenance: R: BW, BF16 165.2 (FP32-acc), FP8 330.3 (FP32-acc), FP32 82.6,
 * INT8 660.6 dense, SMs, L2, smem, 450 W, $1,599; K: TF32 82.6, INT4 1321.2
 * Notes: fp16_bf16 and fp8 columns = FP32-accumulate rates (GeForce runs
 * FP16/FP8 tensor math with FP32 accumulate at half the FP16-accumulate rate;
 * cuBLAS/PyTorch default is FP32 accumulate). FP16-accumulate rate 330.3 TF.
 * TDP = TGP.
 * Sparsity: Ada whitepaper gives dense/sparse pairs; sparse = 2x (dense rates
 * only here).
 */

static const RidgelineMemoryTier kNvidiaRtx4090Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6X",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 24 [code not stated in the sheet], memory_unit GiB */
     .capacity_bytes = 24 * RL_GIB,
     /* mem_bw_gbs 1008 [R] */
     .read_bandwidth_bytes_per_second = 1008e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-4080: NVIDIA GeForce RTX 4080 (16GB) (consumer GPU) ----
 * Sources: Tom's Hardware RTX 4080 review spec table (76 SMs, 2505 MHz boost,
 * 22.4 Gbps, 256-bit, L2 64 MB, 48.7 TFLOPS FP32, FP16 390 / INT8 780 with
 * sparsity, $1,199); sportskeeda (320 W TBP); incpak.com (320 W, $1,199)
 * Provenance: R: 16 GB, 716.8 GB/s (22.4 Gbps x 256-bit), FP32 48.7, INT8
 * 389.9 dense, 76 SMs, L2, 320 W, $1,199; D: BF16 97.5 and FP8 195.0
 * (FP32-accumulate)
 * Notes: fp16_bf16 = FP32-accumulate rate, D: 76 SMs x 512 FLOP/clk x 2.505
 * GHz = 97.5 TF (FP16-accumulate 194.9 TF); fp8 = 2x that (same convention as
 * the RTX 4090's 330.3). TDP = TGP. RTX 4080 SUPER differs (80 SMs, 736
 * GB/s).
 * Sparsity: sparse = 2x (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx4080Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6X",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 16 [R], memory_unit GiB */
     .capacity_bytes = 16 * RL_GIB,
     /* mem_bw_gbs 716.8 [R] */
     .read_bandwidth_bytes_per_second = 716.8e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-3070: NVIDIA GeForce RTX 3070 (consumer GPU) ----
 * Sources:
 * stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md
 * (NVIDIA RTX 30 specs table); fudzilla.net 2020 RTX 30 launch (3090 350 W
 * $1,499; 3080 320 W $699; 3070 220 W $499); Tom's Hardware RTX 3080 Ti news
 * spec table (46 SMs, 14 Gbps, 448 GBps, 220 W)
 * Provenance: R: 8 GB, 448 GB/s, FP32 20.4, INT8 163 dense, 220 W, $499; D:
 * FP16/BF16 40.6 (FP32-accumulate)
 * Notes: fp16_bf16 = FP32-accumulate rate, D: 46 SMs x 512 FLOP/clk x 1.725
 * GHz = 40.6 TF (GA102 whitepaper lists 40.6/81.3; FP16-accumulate 81.3). TDP
 * = TGP.
 * Sparsity: sparse = 2x dense (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx3070Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 8 [R], memory_unit GiB */
     .capacity_bytes = 8 * RL_GIB,
     /* mem_bw_gbs 448 [R] */
     .read_bandwidth_bytes_per_second = 448e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-3080-10gb: NVIDIA GeForce RTX 3080 (10GB) (consumer GPU) ----
 * Sources:
 * stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md
 * (NVIDIA RTX 30 specs table); fudzilla.net 2020 RTX 30 launch (3090 350 W
 * $1,499; 3080 320 W $699; 3070 220 W $499); secnews.gr launch report (238
 * tensor TFLOPS = INT8); Tom's Hardware RTX 4080 review spec table
 * Provenance: R: 10 GB, 760 GB/s, FP32 29.8, INT8 238 dense, 320 W, $699; D:
 * FP16/BF16 59.5 (FP32-accumulate)
 * Notes: fp16_bf16 = FP32-accumulate rate, D: 68 SMs x 512 FLOP/clk x 1.71
 * GHz = 59.5 TF (FP16-accumulate 119). TDP = TGP. The measured card reported
 * a 380 W power limit (board-partner card). The 12 GB RTX 3080 is a different
 * part (70 SMs, 912 GB/s).
 * Sparsity: sparse = 2x dense (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx308010gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6X",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 10 [R], memory_unit GiB */
     .capacity_bytes = 10 * RL_GIB,
     /* mem_bw_gbs 760 [R] */
     .read_bandwidth_bytes_per_second = 760e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-3080-ti: NVIDIA GeForce RTX 3080 Ti (consumer GPU) ----
 * Sources:
 * stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md
 * (NVIDIA RTX 30 specs table); Tom's Hardware RTX 4080 review spec table (80
 * SMs, 1665 MHz, 19 Gbps, 12 GB, 384-bit, 34.1 TFLOPS, FP16 136 / INT8 273;
 * '$1,199 ... the 3080 Ti launch price')
 * Provenance: R: 12 GB, 912 GB/s, FP32 34.1, INT8 273 dense, $1,199; D:
 * FP16/BF16 68.2 (FP32-accumulate); K: 350 W
 * Notes: fp16_bf16 = FP32-accumulate rate, D: 80 SMs x 512 FLOP/clk x 1.665
 * GHz = 68.2 TF (FP16-accumulate 136.4). TDP = TGP.
 * Sparsity: sparse = 2x dense (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx3080TiTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6X",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 12 [R], memory_unit GiB */
     .capacity_bytes = 12 * RL_GIB,
     /* mem_bw_gbs 912 [R] */
     .read_bandwidth_bytes_per_second = 912e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-3090: NVIDIA GeForce RTX 3090 (consumer GPU) ----
 * Sources: NVIDIA Ampere GA102 whitepaper (RTX 3090 'Peak FP16 Tensor TFLOPS
 * with FP32 Accumulate: 71'; RTX A6000 154.8; quoted in public repositories);
 * stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md
 * (NVIDIA RTX 30 specs table); fudzilla.net 2020 RTX 30 launch (3090 350 W
 * $1,499; 3080 320 W $699; 3070 220 W $499)
 * Provenance: R: 24 GB, 936 GB/s, FP32 35.6, FP16/BF16 71 (FP32-accumulate),
 * INT8 285 dense, 350 W, $1,499
 * Notes: fp16_bf16 = FP32-accumulate rate (FP16-accumulate 142). TDP = TGP.
 * Sparsity: sparse = 2x dense (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx3090Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6X",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 24 [R], memory_unit GiB */
     .capacity_bytes = 24 * RL_GIB,
     /* mem_bw_gbs 936 [R] */
     .read_bandwidth_bytes_per_second = 936e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-4070-ti: NVIDIA GeForce RTX 4070 Ti (consumer GPU) ----
 * Sources: purespecs.click RTX 4070 Ti (AD104-400, 7680 cores, 2610 MHz, 12
 * GB GDDR6X 21 Gbps 192-bit, 504.2 GB/s, 285 W, 40.09 TFLOPS, launch price
 * 799 USD); wccftech/techspot (ex-'RTX 4080 12GB', 60 SMs, 48 MB L2, 285 W)
 * Provenance: R: 12 GB, 504.2 GB/s, FP32 40.09, 60 SMs, L2, 285 W, $799; D:
 * FP16/BF16 80.2, FP8 160.4 (FP32-accumulate), INT8 320.7
 * Notes: D: 60 SMs x 2.61 GHz x {512 FLOP/clk FP16 FP32-acc, 1024 FP8
 * FP32-acc, 2048 INT8 OP/clk} (same per-SM rates as the RTX 4090 row).
 * FP16-accumulate rate 160.4 TF. TDP = TGP.
 * Sparsity: sparse = 2x dense (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx4070TiTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6X",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 12 [R], memory_unit GiB */
     .capacity_bytes = 12 * RL_GIB,
     /* mem_bw_gbs 504.2 [R] */
     .read_bandwidth_bytes_per_second = 504.2e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-4000-ada: NVIDIA RTX 4000 Ada Generation (workstation GPU) ----
 * Sources: NVIDIA RTX 4000 Ada datasheet (48 RT cores, 192 Tensor cores,
 * 6,144 CUDA cores, 20GB; mirrored); siliconcat.net (48 SMs, 2175 MHz boost,
 * 1500 MHz base)
 * Provenance: R: 20 GB, 6144 cores, 48 SMs, 2175 MHz boost; D: FP32 26.7,
 * FP16/BF16 106.9; K: 360 GB/s, 130 W
 * Notes: Device reported as 'NVIDIA RTX 4000 Ada Generation' (not the SFF
 * part, which has 280 GB/s and 70 W). D: FP32 = 6144 x 2 x 2.175 GHz = 26.7;
 * FP16/BF16 = 48 SMs x 1024 FLOP/clk x 2.175 GHz (workstation Ada runs FP32
 * accumulate at full rate). Not reconciled with the datasheet's single
 * 'Tensor performance' figure.
 * Sparsity: sparse = 2x dense (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx4000AdaTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 20 [R], memory_unit GiB */
     .capacity_bytes = 20 * RL_GIB,
     /* mem_bw_gbs 360 [K] */
     .read_bandwidth_bytes_per_second = 360e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-5000-ada: NVIDIA RTX 5000 Ada Generation (workstation GPU) ----
 * Sources: NVIDIA RTX 5000 Ada datasheet (not checked against a copy)
 * Provenance: K: all; D: FP16/BF16 261.1
 * Notes: D: FP16/BF16 dense = 1,044.4 / 4 = 261.1 (= 100 SMs x 1024 FLOP/clk
 * x 2.55 GHz). Values recalled; verify.
 * Sparsity: datasheet 'Tensor performance' 1,044.4 TFLOPS = FP8 with sparsity
 * (4x the dense FP16 rate) (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx5000AdaTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 32 [K], memory_unit GiB */
     .capacity_bytes = 32 * RL_GIB,
     /* mem_bw_gbs 576 [K] */
     .read_bandwidth_bytes_per_second = 576e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-6000-ada: NVIDIA RTX 6000 Ada Generation (workstation GPU) ----
 * Sources: grafikkarten.com (142 SMs, 18,176 cores, 91.1 TFLOPS, 48 GB,
 * 384-bit, 960 GB/s, 300 W); cputronic.com (2505 MHz boost, 96 MB L2, 300 W);
 * flashinfer-ai blog spec table (960 GB/s, L2 98304 KB)
 * Provenance: R: 48 GB, 960 GB/s, FP32 91.1, 142 SMs, L2, 300 W; D: FP16/BF16
 * 364.2, FP8/INT8 728.4
 * Notes: D: 142 SMs x 2.505 GHz x {1024 FLOP/clk FP16/BF16, 2048 FP8/INT8}
 * (workstation Ada: FP32 accumulate at full rate); 1,457 / 4 = 364.25 agrees.
 * AD102 like the RTX 4090 and L40S.
 * Sparsity: datasheet 'Tensor performance' 1,457 TFLOPS = FP8 with sparsity
 * (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtx6000AdaTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 48 [R], memory_unit GiB */
     .capacity_bytes = 48 * RL_GIB,
     /* mem_bw_gbs 960 [R] */
     .read_bandwidth_bytes_per_second = 960e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-rtx-a6000: NVIDIA RTX A6000 (workstation GPU) ----
 * Sources: servethehome.com (48 GB GDDR6 ECC, 384-bit, 768 GB/s, 300 W,
 * 10,752 cores, NVLink 112.5 GB/s); NVIDIA Ampere GA102 whitepaper (RTX 3090
 * 'Peak FP16 Tensor TFLOPS with FP32 Accumulate: 71'; RTX A6000 154.8; quoted
 * in public repositories); cli99/llm-analysis
 * llm_analysis/gpu_configs/a6000-48gb.json (154.8 fp16, 309.6 int8, 619.2
 * int4); sysrqmts.com (84 SMs, 1800 MHz boost, 38.71 TFLOPS FP32)
 * Provenance: R: 48 GB, 768 GB/s, FP32 38.7, BF16 154.8 (FP32-accumulate),
 * INT8 309.7, INT4 619.3, 300 W, NVLink; K: TF32 77.4
 * Notes: Workstation Ampere: FP16/BF16 with FP32 accumulate at full rate.
 * Launch price ~$4,650 reported by aggregators (not an official list price;
 * left blank).
 * Sparsity: sparse = 2x dense (datasheet 'Tensor performance' 309.7 is FP16
 * with sparsity) (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaRtxA6000Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 48 [R], memory_unit GiB */
     .capacity_bytes = 48 * RL_GIB,
     /* mem_bw_gbs 768 [R] */
     .read_bandwidth_bytes_per_second = 768e9,
    },
    RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER,
};

/* ---- nvidia-a40: NVIDIA A40 (datacenter GPU (passive)) ----
 * Sources: NVIDIA A40 datasheet as mirrored on ecer.com (696 GB/s, 37.4 FP32,
 * FP16/BF16 149.7|299.4, TF32 74.8|149.6, INT8 299.3|598.6, INT4
 * 598.7|1197.4, 300 W, NVLink 112.5 GB/s); sysrqmts.com (84 SMs, 1740 MHz
 * boost, L2 6 MB)
 * Provenance: R: all filled
 * Notes: Same GA102 as RTX A6000 with slower (14.5 Gbps) memory.
 * Sparsity: datasheet dense | sparse: TF32 74.8|149.6, FP16 149.7|299.4, BF16
 * (FP32 acc) 149.7|299.4, INT8 299.3|598.6, INT4 598.7|1197.4 (dense rates
 * only here).
 */

static const RidgelineMemoryTier kNvidiaA40Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 48 [R], memory_unit GiB */
     .capacity_bytes = 48 * RL_GIB,
     /* mem_bw_gbs 696 [R] */
     .read_bandwidth_bytes_per_second = 696e9,
     /* ECC on by default (data-centre part) */
     .inline_ecc_share = RL_NVIDIA_GDDR6_INLINE_ECC_SHARE,
    },
    RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER,
};

/* ---- nvidia-v100-pcie-32gb: NVIDIA Tesla V100 PCIe 32GB (datacenter GPU) ----
 * Sources: cli99/llm-analysis llm_analysis/gpu_configs/v100-pcie-32gb.json
 * (32 GB, 900 GB/s, 112 TF fp16); hahnyuan/LLM-Viewer
 * hardwares/hardware_params.py (V100 900 GB/s, 112 TF, citing the Volta
 * whitepaper); techrival/wccftech Volta table (80 SMs, 5120 cores, 640 Tensor
 * Cores, L2 6144 KB)
 * Provenance: R: 32 GB, 900 GB/s, FP16 tensor 112, 80 SMs, L2; K: FP32 14,
 * 250 W
 * Notes: fp16 column is FP16 tensor with FP32 accumulate (Volta has no BF16).
 * FP32 14 = 5120 x 2 x ~1.37 GHz (PCIe boost). FlashInfer does not officially
 * support SM70.
 * Sparsity: no structured sparsity on Volta; no BF16, no INT8 tensor path
 * (dense rates only here).
 */

static const RidgelineMemoryTier kNvidiaV100Pcie32gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 32 [R], memory_unit GiB */
     .capacity_bytes = 32 * RL_GIB,
     /* mem_bw_gbs 900 [R] */
     .read_bandwidth_bytes_per_second = 900e9,
    },
    RL_HOST_DRAM_OVER_PCIE3_DATACENTER_TIER,
};

/* ---- nvidia-jetson-agx-thor: NVIDIA Jetson AGX Thor Developer Kit (Jetson T5000 module) (edge SoC (unified memory)) ----
 * Notes (hardware_specs.csv): Developer kit = Jetson T5000 module. Power
 * modes from 40 W to 130 W (tdp = 130 W max mode); peaks are at the max
 * mode. FP32 DERIVED = 2560 x 2 x 1.57 GHz = 8.04 TF. FP16 dense DERIVED =
 * 517 (NVIDIA, sparse) / 2 = 258.5, which matches the HF hardware list. One
 * secondary page mislabels the 1035 FP8 (sparse) figure as dense; NVIDIA's
 * table gives FP8 dense 517. INT8 and TF32 are not in the cited NVIDIA
 * table, so left blank. Launch price: a $3,499 / '$3.5k MSRP' figure appears
 * in secondary listings only, so left blank. memory_unit GiB: no OS readout
 * found; LPDDR5X packages are stacks of binary-density dies.
 */
static const RidgelineMemoryTier kNvidiaJetsonAgxThorTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5X unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 128 [R], memory_unit GiB [D: LPDDR die densities] */
     .capacity_bytes = 128 * RL_GIB,
     /* mem_bw_gbs 273 [R] */
     .read_bandwidth_bytes_per_second = 273e9,
    },
};

/* ---- nvidia-jetson-orin-nano-8gb: NVIDIA Jetson Orin Nano 8GB Developer Kit (original power modes, pre-Super) (edge SoC (unified memory)) ----
 * Notes (hardware_specs.csv): Same module and board as nvidia-jetson-orin-
 * nano-8gb-super; this row is the original JetPack power modes (7 W / 15 W).
 * FP32 DERIVED = 1024 x 2 x 0.635 GHz = 1.30 TF. FP16 10 and INT8 20 are
 * dense (8 SMs x 2048 FP16 FLOP/clk x 0.635 GHz = 10.4; x 4096 INT8 = 20.8).
 * BW check: 4266 MT/s x 16 B = 68.3 GB/s. memory_unit GiB: Linux sees ~7633
 * MB (MiB) after carve-outs. That is already above 8e9 B (7629 MiB), so the
 * 8 GB is 8 GiB.
 */
static const RidgelineMemoryTier kNvidiaJetsonOrinNano8gbTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 8 [R], memory_unit GiB [R: Linux sees ~7633 MiB, above 8e9
      * B] */
     .capacity_bytes = 8 * RL_GIB,
     /* mem_bw_gbs 68 [R] */
     .read_bandwidth_bytes_per_second = 68e9,
    },
};

/* ---- nvidia-jetson-orin-nano-8gb-super: NVIDIA Jetson Orin Nano 8GB Developer Kit, Super mode (JetPack 6.1+ MAXN SUPER) (edge SoC (unified memory)) ----
 * Notes (hardware_specs.csv): Super mode of the same hardware (software
 * update): GPU 635 -> 1020 MHz, CPU 1.5 -> 1.7 GHz, memory 68 -> 102 GB/s
 * (EMC 2133 -> 3200 MHz; 6400 MT/s x 16 B = 102.4). Power modes 7 W, 15 W,
 * 25 W and MAXN SUPER (uncapped; tdp = 25 W rated mode). FP32 DERIVED = 1024
 * x 2 x 1.02 GHz = 2.09 TF. FP16 17 and INT8 33 are dense (8 SMs x 2048 x
 * 1.02 GHz = 16.7; x 4096 = 33.4). memory_unit GiB as in the original-mode
 * row.
 */
static const RidgelineMemoryTier kNvidiaJetsonOrinNano8gbSuperTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "LPDDR5 unified memory",
     .kind = RIDGELINE_TIER_UNIFIED,
     /* memory_gb 8 [R], memory_unit GiB [R: Linux sees ~7633 MiB, above 8e9
      * B] */
     .capacity_bytes = 8 * RL_GIB,
     /* mem_bw_gbs 102 [R] */
     .read_bandwidth_bytes_per_second = 102e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* nvidia-h100-sxm-80gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-h100-sxm-80gb",
     .display_name = "NVIDIA H100 SXM5 80GB",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-h100-sxm-80gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: mem, BW 3352 (flashinfer; datasheet rounds to 3.35 TB/s), FP32 67, BF16 989.4, FP8/INT8 1978.9 dense, L2 50MB, smem 228KB, NVLink 900, 700W; K: TF32 494.7, process; R: memory_unit GiB (nvidia-smi 81559 MiB)\n"
         "flashinfer-ai/flashinfer-ai.github.io:_posts/2024-01-03-introduce-flashinfer.md (spec table)\n"
         "glennklockwood.com/garden/processors/h100\n"
         "lzwjava.github.io/nvidia-h200-gpu-specs-en\n"
         "NVIDIA H100 architecture whitepaper v1.04 Table 1 (BF16 989.4 dense | 1978.9 sparse, quoted in a public repository note)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/h100_sxm.yaml (bf16 989, int8/fp8 1978 dense, 3350 GB/s, 700 W)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 67 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 67e12,
             /* tf32_tflops_dense 494.7 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 494.7e12,
             /* fp16_bf16_tflops_dense 989.4 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 989.4e12,
             /* fp16_bf16_tflops_dense 989.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 989.4e12,
             /* fp8_tflops_dense 1978.9 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 1978.9e12,
             /* int8_tops_dense 1978.9 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 1978.9e12,
         },
     .tiers = kNvidiaH100Sxm80gbTiers,
     .tier_count = sizeof(kNvidiaH100Sxm80gbTiers) / sizeof(kNvidiaH100Sxm80gbTiers[0]),
     /* hardware_specs.csv compute_units: 132 SMs (ABI 1.3) */
     .compute_unit_count = 132,
     /* hardware_specs.csv onchip_cache: L2 50 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 50 * RL_MIB,
     .tdp_watts = 700, /* tdp_w 700 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink4 900 GB/s total bidirectional [R] */
     .interconnect_bytes_per_second = 900e9,
    },
    /* nvidia-h100-pcie-80gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-h100-pcie-80gb",
     .display_name = "NVIDIA H100 PCIe 80GB",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-h100-pcie-80gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 350 W, 2000 GB/s, BF16 756 dense, FP8/INT8 1513 dense; K: FP32 51, TF32 378, SM count, L2, NVLink; D: memory_unit GiB (family evidence, SXM readout)\n"
         "NVIDIA H100 PCIe product brief PB-11133-001_v02 (manuals.plus mirror: 350 W TDP, \">2,000 GBps\")\n"
         "NVIDIA H100 architecture whitepaper v1.04 Table 1 (BF16 756 dense | 1513 sparse, 350 W; quoted in a public repository note)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/h100_pcie.yaml (bf16 756.5, int8/fp8 1513 dense, 2 TB/s, 350 W)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 51 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 51e12,
             /* tf32_tflops_dense 378 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 378e12,
             /* fp16_bf16_tflops_dense 756 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 756e12,
             /* fp16_bf16_tflops_dense 756 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 756e12,
             /* fp8_tflops_dense 1513 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 1513e12,
             /* int8_tops_dense 1513 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 1513e12,
         },
     .tiers = kNvidiaH100Pcie80gbTiers,
     .tier_count = sizeof(kNvidiaH100Pcie80gbTiers) / sizeof(kNvidiaH100Pcie80gbTiers[0]),
     /* hardware_specs.csv compute_units: 114 SMs (ABI 1.3) */
     .compute_unit_count = 114,
     /* hardware_specs.csv onchip_cache: L2 50 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 50 * RL_MIB,
     .tdp_watts = 350, /* tdp_w 350 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink bridge 600 GB/s [K] */
     .interconnect_bytes_per_second = 600e9,
    },
    /* nvidia-h200-sxm-141gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-h200-sxm-141gb",
     .display_name = "NVIDIA H200 SXM 141GB",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-h200-sxm-141gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 141 GB, 4.8 TB/s, 700 W, NVLink 900, BF16 989.4 / FP8 & INT8 1978.9 dense (FP8 3958 sparse); K: FP32 67, TF32 494.7, L2; R: memory_unit GiB (nvidia-smi 143771 MiB); D: 144 GiB physical\n"
         "lzwjava.github.io/nvidia-h200-gpu-specs-en\n"
         "openmetal.io H200 blog\n"
         "mlcommons inference_results_v4.1 H200-SXM-141GBx8 system json (\"18x 4th Gen NVLink, 900GB/s\", \"H200 TGP 700W\")\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/h200_sxm.yaml (4800 GB/s, bf16 989, int8/fp8 1978 dense, 700 W)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 67 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 67e12,
             /* tf32_tflops_dense 494.7 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 494.7e12,
             /* fp16_bf16_tflops_dense 989.4 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 989.4e12,
             /* fp16_bf16_tflops_dense 989.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 989.4e12,
             /* fp8_tflops_dense 1978.9 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 1978.9e12,
             /* int8_tops_dense 1978.9 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 1978.9e12,
         },
     .tiers = kNvidiaH200Sxm141gbTiers,
     .tier_count = sizeof(kNvidiaH200Sxm141gbTiers) / sizeof(kNvidiaH200Sxm141gbTiers[0]),
     /* hardware_specs.csv compute_units: 132 SMs (ABI 1.3) */
     .compute_unit_count = 132,
     /* hardware_specs.csv onchip_cache: L2 50 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 50 * RL_MIB,
     .tdp_watts = 700, /* tdp_w 700 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink4 900 GB/s [R] */
     .interconnect_bytes_per_second = 900e9,
    },
    /* nvidia-b200-180gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-b200-180gb",
     .display_name = "NVIDIA B200 (HGX B200, per GPU)",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-b200-180gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 180 GB, 7.7 TB/s (HGX datasheet; driver 7680-bit x 3996 MHz = 7.672 D), BF16 2250 / FP8 & INT8 4500 dense (FP4 9000 dense), 1000 W, 148 SMs; R (secondary, stas00 citing DGX B200 datasheet): FP32 80, TF32 1125; K: NVLink 1.8 TB/s, process; R: memory_unit GiB (nvidia-smi 183359 MiB; driver 178.35 GiB)\n"
         "NVIDIA Blackwell datasheet, 'Individual Blackwell GPU Specifications' (HGX B200: 180 GB HBM3e, 7.7 TB/s, FP16/BF16 4.5 PF, FP8 9 PF, FP4 18 PF with sparsity, up to 1,000 W; quoted in a public repository note)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/b200_sxm.yaml (7.7 TB/s, 180 GiB, bf16 2250, int8/fp8 4500, fp4 9000 dense, 1000 W)\n"
         "TensorRT-LLM perf-overview hardware list (\"B200 180GB (DGX B200)\")\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 80 TFLOPS [R: 180 GB, 7.7 TB/s (HGX
              * datasheet; R: driver 7680-bit x 3996 MHz = 7.672 D), BF16 2250
              * / FP8 & INT8 4500 dense (FP4 9000 dense), 1000 W, 148 SMs; R
              * (secondary, stas00 citing DGX B200 datasheet): FP32 80, TF32
              * 1125] */
             [RIDGELINE_MATH_FP32] = 80e12,
             /* tf32_tflops_dense 1125 TFLOPS [R (secondary, stas00 citing DGX
              * B200 datasheet): FP32 80, TF32 1125] */
             [RIDGELINE_MATH_TF32] = 1125e12,
             /* fp16_bf16_tflops_dense 2250 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 2250e12,
             /* fp16_bf16_tflops_dense 2250 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 2250e12,
             /* fp8_tflops_dense 4500 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 4500e12,
             /* FP4 9000 TFLOPS dense [R: provenance "FP4 9000 dense"; sheet sparse_note: FP4 18 PF sparse / 2] */
             [RIDGELINE_MATH_FP4] = 9000e12,
             /* int8_tops_dense 4500 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 4500e12,
         },
     .tiers = kNvidiaB200180gbTiers,
     .tier_count = sizeof(kNvidiaB200180gbTiers) / sizeof(kNvidiaB200180gbTiers[0]),
     /* hardware_specs.csv compute_units: 148 SMs (ABI 1.3) */
     .compute_unit_count = 148,
     .tdp_watts = 1000, /* tdp_w 1000 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink5 1.8 TB/s per GPU [K]; as
      * glennklockwood.com/garden/processors/B200 (2 x 900 GB/s NVLink 5) and
      * docs.vultr.com HGX B200 overview (1.8 TB/s bidirectional, NV18) state */
     .interconnect_bytes_per_second = 1800e9,
    },
    /* nvidia-a100-sxm-40gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-a100-sxm-40gb",
     .display_name = "NVIDIA A100 SXM4 40GB",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-a100-sxm-40gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: BW, FP32, FP16/BF16 312, TF32 156, INT8 624, INT4 1248, TDP, L2; K: NVLink; R: memory_unit GiB (40960 MiB)\n"
         "huggingface RajBhope/gpu-runtime-predictor gpu_catalog.json (1555 GB/s, 19.5 FP32, 312 FP16, 400 W, L2 40 MB)\n"
         "NVIDIA A100 architecture whitepaper comparison table (TF32 156/312, BF16 312/624, INT8 624/1248, INT4 1248/2496; quoted in public repositories)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 19.5 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 19.5e12,
             /* tf32_tflops_dense 156 TFLOPS [R] */
             [RIDGELINE_MATH_TF32] = 156e12,
             /* fp16_bf16_tflops_dense 312 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 312e12,
             /* fp16_bf16_tflops_dense 312 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 312e12,
             /* int8_tops_dense 624 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 624e12,
             /* int4_tops_dense 1248 TOPS [R] */
             [RIDGELINE_MATH_INT4] = 1248e12,
         },
     .tiers = kNvidiaA100Sxm40gbTiers,
     .tier_count = sizeof(kNvidiaA100Sxm40gbTiers) / sizeof(kNvidiaA100Sxm40gbTiers[0]),
     /* hardware_specs.csv compute_units: 108 SMs (ABI 1.3) */
     .compute_unit_count = 108,
     /* hardware_specs.csv onchip_cache: L2 40 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 40 * RL_MIB,
     .tdp_watts = 400, /* tdp_w 400 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink3 600 GB/s [K]; as
      * nvidia.com/data-center/nvlink states (A100: twelve third-generation
      * links, 600 GB/s in total) */
     .interconnect_bytes_per_second = 600e9,
    },
    /* nvidia-a100-sxm-80gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-a100-sxm-80gb",
     .display_name = "NVIDIA A100 SXM4 80GB",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-a100-sxm-80gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 80 GB, 2039 GB/s, BF16 312, INT8 624, 400 W; K: FP32 19.5, TF32 156, INT4, L2, NVLink; R: memory_unit GiB (81920 MiB)\n"
         "calculon-ai/calculon systems/a100_80g.json (312 TF fp16 matrix, 80 GiB)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/a100_sxm.yaml (2039 GB/s, bf16 312, int8 624, 400 W)\n"
         "NVIDIA A100 datasheet\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 19.5 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 19.5e12,
             /* tf32_tflops_dense 156 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 156e12,
             /* fp16_bf16_tflops_dense 312 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 312e12,
             /* fp16_bf16_tflops_dense 312 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 312e12,
             /* int8_tops_dense 624 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 624e12,
             /* int4_tops_dense 1248 TOPS [K] */
             [RIDGELINE_MATH_INT4] = 1248e12,
         },
     .tiers = kNvidiaA100Sxm80gbTiers,
     .tier_count = sizeof(kNvidiaA100Sxm80gbTiers) / sizeof(kNvidiaA100Sxm80gbTiers[0]),
     /* hardware_specs.csv compute_units: 108 SMs (ABI 1.3) */
     .compute_unit_count = 108,
     /* hardware_specs.csv onchip_cache: L2 40 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 40 * RL_MIB,
     .tdp_watts = 400, /* tdp_w 400 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink3 600 GB/s [K]; as
      * nvidia.com/data-center/nvlink states (A100: twelve third-generation
      * links, 600 GB/s in total) */
     .interconnect_bytes_per_second = 600e9,
    },
    /* nvidia-a100-pcie-80gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-a100-pcie-80gb",
     .display_name = "NVIDIA A100 80GB PCIe",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-a100-pcie-80gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 1935 GB/s, 312, INT8 624, 300 W, FP32 ~20, L2, smem; K: TF32 156, INT4, NVLink; D: memory_unit GiB (family evidence)\n"
         "flashinfer-ai/flashinfer-ai.github.io:_posts/2024-01-03-introduce-flashinfer.md (spec table)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/a100_pcie.yaml (1935 GB/s, bf16 312, int8 624, 300 W)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 19.5 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 19.5e12,
             /* tf32_tflops_dense 156 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 156e12,
             /* fp16_bf16_tflops_dense 312 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 312e12,
             /* fp16_bf16_tflops_dense 312 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 312e12,
             /* int8_tops_dense 624 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 624e12,
             /* int4_tops_dense 1248 TOPS [K] */
             [RIDGELINE_MATH_INT4] = 1248e12,
         },
     .tiers = kNvidiaA100Pcie80gbTiers,
     .tier_count = sizeof(kNvidiaA100Pcie80gbTiers) / sizeof(kNvidiaA100Pcie80gbTiers[0]),
     /* hardware_specs.csv compute_units: 108 SMs (ABI 1.3) */
     .compute_unit_count = 108,
     /* hardware_specs.csv onchip_cache: L2 40 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 40 * RL_MIB,
     .tdp_watts = 300, /* tdp_w 300 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink bridge 600 GB/s [K] */
     .interconnect_bytes_per_second = 600e9,
    },
    /* nvidia-a10 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-a10",
     .display_name = "NVIDIA A10",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-a10\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R (secondary): 125, 600 GB/s, 24 GB, 150 W; K: rest; R: memory_unit GiB (23028 MiB, ECC on)\n"
         "gist.github.com/kimbochen (states: A10 125 TFLOP/s, 0.6 TB/s, 24 GB, 150 W)\n"
         "NVIDIA A10 datasheet\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 31.2 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 31.2e12,
             /* tf32_tflops_dense 62.5 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 62.5e12,
             /* fp16_bf16_tflops_dense 125 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 125e12,
             /* fp16_bf16_tflops_dense 125 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 125e12,
             /* int8_tops_dense 250 TOPS [K] */
             [RIDGELINE_MATH_INT8] = 250e12,
             /* int4_tops_dense 500 TOPS [K] */
             [RIDGELINE_MATH_INT4] = 500e12,
         },
     .tiers = kNvidiaA10Tiers,
     .tier_count = sizeof(kNvidiaA10Tiers) / sizeof(kNvidiaA10Tiers[0]),
     /* hardware_specs.csv compute_units: 72 SMs (ABI 1.3) */
     .compute_unit_count = 72,
     /* hardware_specs.csv onchip_cache: L2 6 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 6 * RL_MIB,
     .tdp_watts = 150, /* tdp_w 150 W [R] */
    },
    /* nvidia-l4 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-l4",
     .display_name = "NVIDIA L4",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-l4\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 24 GB, 300 GB/s, BF16 121, FP8/INT8 242 dense, 72 W; K: FP32 30.3, TF32 60, L2 48 MB, 58 SMs; R: memory_unit GiB (23034 MiB, ECC on)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/l4.yaml (300 GB/s, 24 GiB, bf16 121, int8/fp8 242 dense, 72 W)\n"
         "NVIDIA L4 datasheet\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 30.3 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 30.3e12,
             /* tf32_tflops_dense 60 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 60e12,
             /* fp16_bf16_tflops_dense 121 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 121e12,
             /* fp16_bf16_tflops_dense 121 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 121e12,
             /* fp8_tflops_dense 242.5 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 242.5e12,
             /* int8_tops_dense 242.5 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 242.5e12,
         },
     .tiers = kNvidiaL4Tiers,
     .tier_count = sizeof(kNvidiaL4Tiers) / sizeof(kNvidiaL4Tiers[0]),
     /* hardware_specs.csv compute_units: 58 SMs (ABI 1.3) */
     .compute_unit_count = 58,
     /* hardware_specs.csv onchip_cache: L2 48 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 48 * RL_MIB,
     .tdp_watts = 72, /* tdp_w 72 W [R] */
    },
    /* nvidia-l40s */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-l40s",
     .display_name = "NVIDIA L40S",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-l40s\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 48 GB, 864 GB/s, BF16 362.05, FP8/INT8 733 dense, 350 W; R (sibling part): L2 96 MB; K: FP32 91.6, TF32 183, 142 SMs; R: memory_unit GiB (46068 MiB, ECC on)\n"
         "github:ai-dynamo/aiconfigurator@095f58a:aic-core/src/aiconfigurator_core/systems/l40s.yaml (864 GB/s, 48 GB, bf16 362.05, int8/fp8 733 dense, 350 W)\n"
         "hmc-tech.com L40 page (L40 FP16 tensor 362.07 TF, FP32 90.52)\n"
         "flashinfer blog RTX 6000 Ada (same AD102 config) 960 GB/s, L2 98304 KB\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 91.6 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 91.6e12,
             /* tf32_tflops_dense 183 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 183e12,
             /* fp16_bf16_tflops_dense 362.05 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 362.05e12,
             /* fp16_bf16_tflops_dense 362.05 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 362.05e12,
             /* fp8_tflops_dense 733 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 733e12,
             /* int8_tops_dense 733 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 733e12,
         },
     .tiers = kNvidiaL40sTiers,
     .tier_count = sizeof(kNvidiaL40sTiers) / sizeof(kNvidiaL40sTiers[0]),
     /* hardware_specs.csv compute_units: 142 SMs (ABI 1.3) */
     .compute_unit_count = 142,
     /* hardware_specs.csv onchip_cache: L2 96 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 96 * RL_MIB,
     .tdp_watts = 350, /* tdp_w 350 W [R] */
     /* interconnect "PCIe Gen4 x16 64 GB/s; no NVLink" (hardware_specs.csv
      * row nvidia-l40s; PCI-SIG base spec: 32 GB/s per direction x16):
      * tensor-parallel collectives run over PCIe. */
     .interconnect_bytes_per_second = 64e9,
    },
    /* nvidia-rtx-4090 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-4090",
     .display_name = "NVIDIA GeForce RTX 4090",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-4090\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: BW, BF16 165.2 (FP32-acc), FP8 330.3 (FP32-acc), FP32 82.6, INT8 660.6 dense, SMs, L2, smem, 450 W, $1,599; K: TF32 82.6, INT4 1321.2; R: memory_unit GiB (24564 MiB)\n"
         "flashinfer-ai/flashinfer-ai.github.io:_posts/2024-01-03-introduce-flashinfer.md (1008 GB/s, 165 f32-acc / 330 f16-acc, 128 SMs, L2 73728 KB)\n"
         "gist mikasenghaas accelerator-intensity (165e12 dense bf16, 1.008e12)\n"
         "NVIDIA RTX Blackwell whitepaper comparison (4090 BF16 165.2 / FP8 330.3 dense with FP32 accumulate; quoted in a public repository note)\n"
         "launch coverage (incpak.com: 82.6 TFLOPS FP32, 450 W, $1,599; Tom's Hardware RTX 4080 review table: FP16 661 / INT8 1321 with sparsity)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 82.6 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 82.6e12,
             /* tf32_tflops_dense 82.6 TFLOPS [R] */
             [RIDGELINE_MATH_TF32] = 82.6e12,
             /* fp16_bf16_tflops_dense 165.2 TFLOPS [R] (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 165.2e12,
             /* fp16_bf16_tflops_dense 165.2 TFLOPS [R] (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 165.2e12,
             /* FP16 with FP16 accumulation 330.3 TFLOPS: hardware_specs.csv
              * notes: "FP16-accumulate rate 330.3 TF" [R] */
             [RIDGELINE_MATH_FP16_ACC16] = 330.3e12,
             /* fp8_tflops_dense 330.3 TFLOPS [R] */
             [RIDGELINE_MATH_FP8] = 330.3e12,
             /* int8_tops_dense 660.6 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 660.6e12,
             /* int4_tops_dense 1321.2 TOPS [K] */
             [RIDGELINE_MATH_INT4] = 1321.2e12,
         },
     .tiers = kNvidiaRtx4090Tiers,
     .tier_count = sizeof(kNvidiaRtx4090Tiers) / sizeof(kNvidiaRtx4090Tiers[0]),
     /* hardware_specs.csv compute_units: 128 SMs (ABI 1.3) */
     .compute_unit_count = 128,
     /* hardware_specs.csv onchip_cache: L2 72 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 72 * RL_MIB,
     .tdp_watts = 450, /* tdp_w 450 W [R] */
     .price_usd = 1599, /* launch_price_usd $1599 [R] */
    },
    /* nvidia-rtx-4080 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-4080",
     .display_name = "NVIDIA GeForce RTX 4080 (16GB)",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-4080\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 16 GB, 716.8 GB/s (22.4 Gbps x 256-bit), FP32 48.7, INT8 389.9 dense, 76 SMs, L2, 320 W, $1,199; D: BF16 97.5 and FP8 195.0 (FP32-accumulate); R: memory_unit GiB (16376 MiB; 15.99 GiB)\n"
         "Tom's Hardware RTX 4080 review spec table (76 SMs, 2505 MHz boost, 22.4 Gbps, 256-bit, L2 64 MB, 48.7 TFLOPS FP32, FP16 390 / INT8 780 with sparsity, $1,199)\n"
         "sportskeeda (320 W TBP)\n"
         "incpak.com (320 W, $1,199)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 48.7 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 48.7e12,
             /* fp16_bf16_tflops_dense 97.5 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 97.5e12,
             /* fp16_bf16_tflops_dense 97.5 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 97.5e12,
             /* FP16 with FP16 accumulation 194.9 TFLOPS: hardware_specs.csv
              * notes: "FP16-accumulate 194.9 TF" [D] */
             [RIDGELINE_MATH_FP16_ACC16] = 194.9e12,
             /* fp8_tflops_dense 195.0 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP8] = 195e12,
             /* int8_tops_dense 389.9 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 389.9e12,
         },
     .tiers = kNvidiaRtx4080Tiers,
     .tier_count = sizeof(kNvidiaRtx4080Tiers) / sizeof(kNvidiaRtx4080Tiers[0]),
     /* hardware_specs.csv compute_units: 76 SMs (ABI 1.3) */
     .compute_unit_count = 76,
     /* hardware_specs.csv onchip_cache: L2 64 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 64 * RL_MIB,
     .tdp_watts = 320, /* tdp_w 320 W [R] */
     .price_usd = 1199, /* launch_price_usd $1199 [R] */
    },
    /* nvidia-rtx-3070 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-3070",
     .display_name = "NVIDIA GeForce RTX 3070",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-3070\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 8 GB, 448 GB/s, FP32 20.4, INT8 163 dense, 220 W, $499; D: FP16/BF16 40.6 (FP32-accumulate); R: memory_unit GiB (nvidia-smi total 8192 MiB)\n"
         "stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md (NVIDIA RTX 30 specs table)\n"
         "fudzilla.net 2020 RTX 30 launch (3090 350 W $1,499; 3080 320 W $699; 3070 220 W $499)\n"
         "Tom's Hardware RTX 3080 Ti news spec table (46 SMs, 14 Gbps, 448 GBps, 220 W)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 20.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 20.4e12,
             /* fp16_bf16_tflops_dense 40.6 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 40.6e12,
             /* fp16_bf16_tflops_dense 40.6 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 40.6e12,
             /* FP16 with FP16 accumulation 81.3 TFLOPS: hardware_specs.csv
              * notes: GA102 whitepaper lists 40.6/81.3, "FP16-accumulate 81.3" [D] */
             [RIDGELINE_MATH_FP16_ACC16] = 81.3e12,
             /* int8_tops_dense 163 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 163e12,
         },
     .tiers = kNvidiaRtx3070Tiers,
     .tier_count = sizeof(kNvidiaRtx3070Tiers) / sizeof(kNvidiaRtx3070Tiers[0]),
     /* hardware_specs.csv compute_units: 46 SMs (ABI 1.3) */
     .compute_unit_count = 46,
     /* hardware_specs.csv onchip_cache: L2 4 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 4 * RL_MIB,
     .tdp_watts = 220, /* tdp_w 220 W [R] */
     .price_usd = 499, /* launch_price_usd $499 [R] */
    },
    /* nvidia-rtx-3080-10gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-3080-10gb",
     .display_name = "NVIDIA GeForce RTX 3080 (10GB)",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-3080-10gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 10 GB, 760 GB/s, FP32 29.8, INT8 238 dense, 320 W, $699; D: FP16/BF16 59.5 (FP32-accumulate); R: memory_unit GiB (10240 MiB dedicated)\n"
         "stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md (NVIDIA RTX 30 specs table)\n"
         "fudzilla.net 2020 RTX 30 launch (3090 350 W $1,499; 3080 320 W $699; 3070 220 W $499)\n"
         "secnews.gr launch report (238 tensor TFLOPS = INT8)\n"
         "Tom's Hardware RTX 4080 review spec table\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 29.8 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 29.8e12,
             /* fp16_bf16_tflops_dense 59.5 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 59.5e12,
             /* fp16_bf16_tflops_dense 59.5 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 59.5e12,
             /* FP16 with FP16 accumulation 119 TFLOPS: hardware_specs.csv
              * notes: "FP16-accumulate 119" [D] */
             [RIDGELINE_MATH_FP16_ACC16] = 119e12,
             /* int8_tops_dense 238 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 238e12,
         },
     .tiers = kNvidiaRtx308010gbTiers,
     .tier_count = sizeof(kNvidiaRtx308010gbTiers) / sizeof(kNvidiaRtx308010gbTiers[0]),
     /* hardware_specs.csv compute_units: 68 SMs (ABI 1.3) */
     .compute_unit_count = 68,
     /* hardware_specs.csv onchip_cache: L2 5 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 5 * RL_MIB,
     .tdp_watts = 320, /* tdp_w 320 W [R] */
     .price_usd = 699, /* launch_price_usd $699 [R] */
    },
    /* nvidia-rtx-3080-ti */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-3080-ti",
     .display_name = "NVIDIA GeForce RTX 3080 Ti",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-3080-ti\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 12 GB, 912 GB/s, FP32 34.1, INT8 273 dense, $1,199; D: FP16/BF16 68.2 (FP32-accumulate); K: 350 W; R: memory_unit GiB (nvidia-smi total 12288 MiB)\n"
         "stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md (NVIDIA RTX 30 specs table)\n"
         "Tom's Hardware RTX 4080 review spec table (80 SMs, 1665 MHz, 19 Gbps, 12 GB, 384-bit, 34.1 TFLOPS, FP16 136 / INT8 273; '$1,199 ... the 3080 Ti launch price')\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 34.1 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 34.1e12,
             /* fp16_bf16_tflops_dense 68.2 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 68.2e12,
             /* fp16_bf16_tflops_dense 68.2 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 68.2e12,
             /* FP16 with FP16 accumulation 136.4 TFLOPS: hardware_specs.csv
              * notes: "FP16-accumulate 136.4" [D] */
             [RIDGELINE_MATH_FP16_ACC16] = 136.4e12,
             /* int8_tops_dense 273 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 273e12,
         },
     .tiers = kNvidiaRtx3080TiTiers,
     .tier_count = sizeof(kNvidiaRtx3080TiTiers) / sizeof(kNvidiaRtx3080TiTiers[0]),
     /* hardware_specs.csv compute_units: 80 SMs (ABI 1.3) */
     .compute_unit_count = 80,
     /* hardware_specs.csv onchip_cache: L2 6 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 6 * RL_MIB,
     .tdp_watts = 350, /* tdp_w 350 W [K] */
     .price_usd = 1199, /* launch_price_usd $1199 [R] */
    },
    /* nvidia-rtx-3090 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-3090",
     .display_name = "NVIDIA GeForce RTX 3090",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-3090\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 24 GB, 936 GB/s, FP32 35.6, FP16/BF16 71 (FP32-accumulate), INT8 285 dense, 350 W, $1,499; R: memory_unit GiB (nvidia-smi total 24576 MiB)\n"
         "NVIDIA Ampere GA102 whitepaper (RTX 3090 'Peak FP16 Tensor TFLOPS with FP32 Accumulate: 71'; RTX A6000 154.8; quoted in public repositories)\n"
         "stillwater-sc/KPU-Simulator:docs/external-knowledge/rtx_30_series_specs_table.md (NVIDIA RTX 30 specs table)\n"
         "fudzilla.net 2020 RTX 30 launch (3090 350 W $1,499; 3080 320 W $699; 3070 220 W $499)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 35.6 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 35.6e12,
             /* fp16_bf16_tflops_dense 71 TFLOPS [R] (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 71e12,
             /* fp16_bf16_tflops_dense 71 TFLOPS [R] (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 71e12,
             /* FP16 with FP16 accumulation 142 TFLOPS: hardware_specs.csv
              * notes: "FP16-accumulate 142" [D] */
             [RIDGELINE_MATH_FP16_ACC16] = 142e12,
             /* int8_tops_dense 285 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 285e12,
         },
     .tiers = kNvidiaRtx3090Tiers,
     .tier_count = sizeof(kNvidiaRtx3090Tiers) / sizeof(kNvidiaRtx3090Tiers[0]),
     /* hardware_specs.csv compute_units: 82 SMs (ABI 1.3) */
     .compute_unit_count = 82,
     /* hardware_specs.csv onchip_cache: L2 6 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 6 * RL_MIB,
     .tdp_watts = 350, /* tdp_w 350 W [R] */
     .price_usd = 1499, /* launch_price_usd $1499 [R] */
    },
    /* nvidia-rtx-4070-ti */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-4070-ti",
     .display_name = "NVIDIA GeForce RTX 4070 Ti",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-4070-ti\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 12 GB, 504.2 GB/s, FP32 40.09, 60 SMs, L2, 285 W, $799; D: FP16/BF16 80.2, FP8 160.4 (FP32-accumulate), INT8 320.7; D: memory_unit GiB (family evidence)\n"
         "purespecs.click RTX 4070 Ti (AD104-400, 7680 cores, 2610 MHz, 12 GB GDDR6X 21 Gbps 192-bit, 504.2 GB/s, 285 W, 40.09 TFLOPS, launch price 799 USD)\n"
         "wccftech/techspot (ex-'RTX 4080 12GB', 60 SMs, 48 MB L2, 285 W)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 40.09 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 40.09e12,
             /* fp16_bf16_tflops_dense 80.2 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_BF16] = 80.2e12,
             /* fp16_bf16_tflops_dense 80.2 TFLOPS [D], formula in Notes above (FP32-accumulate rate) */
             [RIDGELINE_MATH_FP16] = 80.2e12,
             /* FP16 with FP16 accumulation 160.4 TFLOPS: hardware_specs.csv
              * notes: "FP16-accumulate rate 160.4 TF" [D] */
             [RIDGELINE_MATH_FP16_ACC16] = 160.4e12,
             /* fp8_tflops_dense 160.4 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP8] = 160.4e12,
             /* int8_tops_dense 320.7 TOPS [D], formula in Notes above */
             [RIDGELINE_MATH_INT8] = 320.7e12,
         },
     .tiers = kNvidiaRtx4070TiTiers,
     .tier_count = sizeof(kNvidiaRtx4070TiTiers) / sizeof(kNvidiaRtx4070TiTiers[0]),
     /* hardware_specs.csv compute_units: 60 SMs (ABI 1.3) */
     .compute_unit_count = 60,
     /* hardware_specs.csv onchip_cache: L2 48 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 48 * RL_MIB,
     .tdp_watts = 285, /* tdp_w 285 W [R] */
     .price_usd = 799, /* launch_price_usd $799 [R] */
    },
    /* nvidia-rtx-4000-ada */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-4000-ada",
     .display_name = "NVIDIA RTX 4000 Ada Generation",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-4000-ada\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 20 GB, 6144 cores, 48 SMs, 2175 MHz boost; D: FP32 26.7, FP16/BF16 106.9; K: 360 GB/s, 130 W; R: memory_unit GiB (nvidia-smi total 20475 MiB)\n"
         "NVIDIA RTX 4000 Ada datasheet (48 RT cores, 192 Tensor cores, 6,144 CUDA cores, 20GB; mirrored)\n"
         "siliconcat.net (48 SMs, 2175 MHz boost, 1500 MHz base)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 26.7 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP32] = 26.7e12,
             /* fp16_bf16_tflops_dense 106.9 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_BF16] = 106.9e12,
             /* fp16_bf16_tflops_dense 106.9 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP16] = 106.9e12,
         },
     .tiers = kNvidiaRtx4000AdaTiers,
     .tier_count = sizeof(kNvidiaRtx4000AdaTiers) / sizeof(kNvidiaRtx4000AdaTiers[0]),
     /* hardware_specs.csv compute_units: 48 SMs (ABI 1.3) */
     .compute_unit_count = 48,
     .tdp_watts = 130, /* tdp_w 130 W [K] */
    },
    /* nvidia-rtx-5000-ada */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-5000-ada",
     .display_name = "NVIDIA RTX 5000 Ada Generation",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-5000-ada\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): K: all; D: FP16/BF16 261.1; D: memory_unit GiB (family evidence)\n"
         "NVIDIA RTX 5000 Ada datasheet (not checked against a copy)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 65.3 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 65.3e12,
             /* fp16_bf16_tflops_dense 261.1 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_BF16] = 261.1e12,
             /* fp16_bf16_tflops_dense 261.1 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP16] = 261.1e12,
         },
     .tiers = kNvidiaRtx5000AdaTiers,
     .tier_count = sizeof(kNvidiaRtx5000AdaTiers) / sizeof(kNvidiaRtx5000AdaTiers[0]),
     /* hardware_specs.csv compute_units: 100 SMs (ABI 1.3) */
     .compute_unit_count = 100,
     .tdp_watts = 250, /* tdp_w 250 W [K] */
    },
    /* nvidia-rtx-6000-ada */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-6000-ada",
     .display_name = "NVIDIA RTX 6000 Ada Generation",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-6000-ada\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 48 GB, 960 GB/s, FP32 91.1, 142 SMs, L2, 300 W; D: FP16/BF16 364.2, FP8/INT8 728.4; R: memory_unit GiB (nvidia-smi total 49140 MiB with ECC off)\n"
         "grafikkarten.com (142 SMs, 18,176 cores, 91.1 TFLOPS, 48 GB, 384-bit, 960 GB/s, 300 W)\n"
         "cputronic.com (2505 MHz boost, 96 MB L2, 300 W)\n"
         "flashinfer-ai blog spec table (960 GB/s, L2 98304 KB)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 91.1 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 91.1e12,
             /* fp16_bf16_tflops_dense 364.2 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_BF16] = 364.2e12,
             /* fp16_bf16_tflops_dense 364.2 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP16] = 364.2e12,
             /* fp8_tflops_dense 728.4 TFLOPS [D], formula in Notes above */
             [RIDGELINE_MATH_FP8] = 728.4e12,
             /* int8_tops_dense 728.4 TOPS [D], formula in Notes above */
             [RIDGELINE_MATH_INT8] = 728.4e12,
         },
     .tiers = kNvidiaRtx6000AdaTiers,
     .tier_count = sizeof(kNvidiaRtx6000AdaTiers) / sizeof(kNvidiaRtx6000AdaTiers[0]),
     /* hardware_specs.csv compute_units: 142 SMs (ABI 1.3) */
     .compute_unit_count = 142,
     /* hardware_specs.csv onchip_cache: L2 96 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 96 * RL_MIB,
     .tdp_watts = 300, /* tdp_w 300 W [R] */
    },
    /* nvidia-rtx-a6000 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-rtx-a6000",
     .display_name = "NVIDIA RTX A6000",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-rtx-a6000\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 48 GB, 768 GB/s, FP32 38.7, BF16 154.8 (FP32-accumulate), INT8 309.7, INT4 619.3, 300 W, NVLink; K: TF32 77.4; R: memory_unit GiB (nvidia-smi total 49140 MiB with ECC off)\n"
         "servethehome.com (48 GB GDDR6 ECC, 384-bit, 768 GB/s, 300 W, 10,752 cores, NVLink 112.5 GB/s)\n"
         "NVIDIA Ampere GA102 whitepaper (RTX 3090 'Peak FP16 Tensor TFLOPS with FP32 Accumulate: 71'; RTX A6000 154.8; quoted in public repositories)\n"
         "cli99/llm-analysis llm_analysis/gpu_configs/a6000-48gb.json (154.8 fp16, 309.6 int8, 619.2 int4)\n"
         "sysrqmts.com (84 SMs, 1800 MHz boost, 38.71 TFLOPS FP32)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 38.7 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 38.7e12,
             /* tf32_tflops_dense 77.4 TFLOPS [K] */
             [RIDGELINE_MATH_TF32] = 77.4e12,
             /* fp16_bf16_tflops_dense 154.8 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 154.8e12,
             /* fp16_bf16_tflops_dense 154.8 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 154.8e12,
             /* int8_tops_dense 309.7 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 309.7e12,
             /* int4_tops_dense 619.3 TOPS [R] */
             [RIDGELINE_MATH_INT4] = 619.3e12,
         },
     .tiers = kNvidiaRtxA6000Tiers,
     .tier_count = sizeof(kNvidiaRtxA6000Tiers) / sizeof(kNvidiaRtxA6000Tiers[0]),
     /* hardware_specs.csv compute_units: 84 SMs (ABI 1.3) */
     .compute_unit_count = 84,
     /* hardware_specs.csv onchip_cache: L2 6 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 6 * RL_MIB,
     .tdp_watts = 300, /* tdp_w 300 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink bridge 112.5 GB/s bidirectional [R] */
     .interconnect_bytes_per_second = 112.5e9,
    },
    /* nvidia-a40 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-a40",
     .display_name = "NVIDIA A40",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-a40\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: all filled; R: memory_unit GiB (nvidia-smi total 46068 MiB with ECC on, 49140 MiB with ECC off)\n"
         "NVIDIA A40 datasheet as mirrored on ecer.com (696 GB/s, 37.4 FP32, FP16/BF16 149.7|299.4, TF32 74.8|149.6, INT8 299.3|598.6, INT4 598.7|1197.4, 300 W, NVLink 112.5 GB/s)\n"
         "sysrqmts.com (84 SMs, 1740 MHz boost, L2 6 MB)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 37.4 TFLOPS [R] */
             [RIDGELINE_MATH_FP32] = 37.4e12,
             /* tf32_tflops_dense 74.8 TFLOPS [R] */
             [RIDGELINE_MATH_TF32] = 74.8e12,
             /* fp16_bf16_tflops_dense 149.7 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 149.7e12,
             /* fp16_bf16_tflops_dense 149.7 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 149.7e12,
             /* int8_tops_dense 299.3 TOPS [R] */
             [RIDGELINE_MATH_INT8] = 299.3e12,
             /* int4_tops_dense 598.7 TOPS [R] */
             [RIDGELINE_MATH_INT4] = 598.7e12,
         },
     .tiers = kNvidiaA40Tiers,
     .tier_count = sizeof(kNvidiaA40Tiers) / sizeof(kNvidiaA40Tiers[0]),
     /* hardware_specs.csv compute_units: 84 SMs (ABI 1.3) */
     .compute_unit_count = 84,
     /* hardware_specs.csv onchip_cache: L2 6 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 6 * RL_MIB,
     .tdp_watts = 300, /* tdp_w 300 W [R] */
     /* scale-up link, hardware_specs.csv interconnect: NVLink 112.5 GB/s bidirectional [R] */
     .interconnect_bytes_per_second = 112.5e9,
    },
    /* nvidia-v100-pcie-32gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-v100-pcie-32gb",
     .display_name = "NVIDIA Tesla V100 PCIe 32GB",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-v100-pcie-32gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 32 GB, 900 GB/s, FP16 tensor 112, 80 SMs, L2; K: FP32 14, 250 W; R: memory_unit GiB (nvidia-smi total 32768 MiB)\n"
         "cli99/llm-analysis llm_analysis/gpu_configs/v100-pcie-32gb.json (32 GB, 900 GB/s, 112 TF fp16)\n"
         "hahnyuan/LLM-Viewer hardwares/hardware_params.py (V100 900 GB/s, 112 TF, citing the Volta whitepaper)\n"
         "techrival/wccftech Volta table (80 SMs, 5120 cores, 640 Tensor Cores, L2 6144 KB)\n"
         "PCI-SIG PCI Express base specification (per-direction x16 link rate)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 14 TFLOPS [K] */
             [RIDGELINE_MATH_FP32] = 14e12,
             /* fp16_bf16_tflops_dense 112 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 112e12,
         },
     .tiers = kNvidiaV100Pcie32gbTiers,
     .tier_count = sizeof(kNvidiaV100Pcie32gbTiers) / sizeof(kNvidiaV100Pcie32gbTiers[0]),
     /* hardware_specs.csv compute_units: 80 SMs (ABI 1.3) */
     .compute_unit_count = 80,
     /* hardware_specs.csv onchip_cache: L2 6 MB; NVIDIA's L2 MB are MiB
      * (A100 40960 KB, RTX 4090 73728 KB in the same file) (ABI 1.3) */
     .last_level_cache_bytes = 6 * RL_MIB,
     .tdp_watts = 250, /* tdp_w 250 W [K] */
    },
    /* nvidia-jetson-agx-thor */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-jetson-agx-thor",
     .display_name = "NVIDIA Jetson AGX Thor Developer Kit (T5000)",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-jetson-agx-thor\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 128 GB, 273 GB/s, FP8 517 dense, FP4 1035 dense / 2070 sparse, FP16 517 sparse, 40-130 W, CUDA/Tensor/SM counts, 1.57 GHz, CPU; R (secondary): FP16 258.5 (HF), QSFP28/PCIe Gen5; D: FP16 258.5 dense = 517/2, FP32 8.04; D: memory_unit GiB (LPDDR die densities)\n"
         "developer.nvidia.com/blog/introducing-nvidia-jetson-thor-the-ultimate-platform-for-physical-ai (Jetson T5000 table: FP4 2070 sparse / 1035 dense TFLOPS, FP8 1035 sparse / 517 dense, FP16 517 sparse; 128 GB LPDDR5X 273 GB/s; 40-130 W), as quoted verbatim in a public repository note\n"
         "huggingface hardware list (Jetson T5000: 258.5 TFLOPS, 128 GB, 130 W)\n"
         "antirez/ds4 PR #788 (Jetson AGX Thor: 128 GB LPDDR5X, 273 GB/s, sm_110)\n"
         "RidgeRun developer wiki (GPU 10 TPCs / 3 GPCs)\n"
         "public repository notes (2560 CUDA cores, 96 Tensor Cores, 20 SMs, 1.57 GHz max GPU clock; 14-core Neoverse-V3AE 2.6 GHz)\n"
         "secondary coverage (QSFP28 4x 25 GbE, PCIe Gen5)\n"
         "pvsm.ru/news/302159 (Micron 12 GB LPDDR4X package = 8 x 12 Gbit dies)\n"
         "technosports.co.in/?p=24114 (Samsung 16 GB LPDDR5 package = 8 x 12 Gb + 4 x 8 Gb)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 8.04 TFLOPS [D]: 2560 CUDA cores x 2 x
              * 1.57 GHz */
             [RIDGELINE_MATH_FP32] = 8.04e12,
             /* fp16_bf16_tflops_dense 258.5 TFLOPS [D]: NVIDIA FP16 517
              * sparse / 2 (HF hardware list 258.5, R secondary) */
             [RIDGELINE_MATH_BF16] = 258.5e12,
             /* fp16_bf16_tflops_dense 258.5 TFLOPS [D]: NVIDIA FP16 517
              * sparse / 2 (HF hardware list 258.5, R secondary) */
             [RIDGELINE_MATH_FP16] = 258.5e12,
             /* fp8_tflops_dense 517 TFLOPS [R]: NVIDIA Jetson T5000 table,
              * FP8 dense */
             [RIDGELINE_MATH_FP8] = 517e12,
             /* FP4 1035 TFLOPS dense [R]: NVIDIA Jetson T5000 table
              * (provenance "FP4 1035 dense / 2070 sparse") */
             [RIDGELINE_MATH_FP4] = 1035e12,
         },
     .tiers = kNvidiaJetsonAgxThorTiers,
     .tier_count = sizeof(kNvidiaJetsonAgxThorTiers) / sizeof(kNvidiaJetsonAgxThorTiers[0]),
     /* hardware_specs.csv compute_units: 20 SMs (ABI 1.3) */
     .compute_unit_count = 20,
     .tdp_watts = 130, /* tdp_w 130 W [R]: max power mode (40-130 W) */
    },
    /* nvidia-jetson-orin-nano-8gb */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-jetson-orin-nano-8gb",
     .display_name = "NVIDIA Jetson Orin Nano 8GB (original power modes)",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-jetson-orin-nano-8gb\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 8 GB, 68 GB/s, INT8 20 dense / 40 sparse, FP16 10, GPU/CPU config and clocks, 7/15 W; R (secondary): Samsung 8nm; D: FP32 1.30, 68.3 GB/s check; R: memory_unit GiB (OS readout)\n"
         "developer.nvidia.com/blog/nvidia-jetson-orin-nano-developer-kit-gets-a-super-boost (comparison table, original vs Super: GPU 1024 CUDA / 32 Tensor Cores at 635 vs 1020 MHz; AI 40 vs 67 INT8 TOPS sparse, 20 vs 33 dense; 10 vs 17 FP16 TFLOPs; CPU 6x Cortex-A78AE at 1.5 vs 1.7 GHz; 8GB 128-bit LPDDR5 at 68 vs 102 GB/s; 7W/15W vs 7W/15W/25W), as quoted verbatim in a public repository note\n"
         "public nvpmodel listing for Orin Nano Super (mode IDs 0 = 15W, 1 = 25W, 2 = MAXN_SUPER)\n"
         "public Orin Nano 8GB memory readout (~7633 MB total visible to Linux)\n"
         "brojogopalsapui.com (GA10B Ampere, Samsung 8 nm)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 1.30 TFLOPS [D]: 1024 CUDA cores x 2 x
              * 0.635 GHz */
             [RIDGELINE_MATH_FP32] = 1.30e12,
             /* fp16_bf16_tflops_dense 10 TFLOPS [R]: NVIDIA Super-boost
              * comparison table (dense) */
             [RIDGELINE_MATH_BF16] = 10e12,
             /* fp16_bf16_tflops_dense 10 TFLOPS [R]: NVIDIA Super-boost
              * comparison table (dense) */
             [RIDGELINE_MATH_FP16] = 10e12,
             /* int8_tops_dense 20 TOPS [R]: NVIDIA table, dense (sparse = 2x) */
             [RIDGELINE_MATH_INT8] = 20e12,
         },
     .tiers = kNvidiaJetsonOrinNano8gbTiers,
     .tier_count = sizeof(kNvidiaJetsonOrinNano8gbTiers) / sizeof(kNvidiaJetsonOrinNano8gbTiers[0]),
     /* hardware_specs.csv compute_units: 8 SMs (ABI 1.3) */
     .compute_unit_count = 8,
     .tdp_watts = 15, /* tdp_w 15 W [R]: rated power mode */
    },
    /* nvidia-jetson-orin-nano-8gb-super */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "nvidia-jetson-orin-nano-8gb-super",
     .display_name = "NVIDIA Jetson Orin Nano 8GB Super (MAXN SUPER)",
     .vendor = "NVIDIA",
     .sources = "hardware_specs.csv row nvidia-jetson-orin-nano-8gb-super\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 8 GB, 102 GB/s, INT8 33 dense / 67 sparse, FP16 17, GPU/CPU clocks, 7/15/25 W + MAXN SUPER; R (secondary): Samsung 8nm; D: FP32 2.09, 102.4 GB/s check; R: memory_unit GiB (OS readout)\n"
         "developer.nvidia.com/blog/nvidia-jetson-orin-nano-developer-kit-gets-a-super-boost (comparison table, original vs Super: GPU 1024 CUDA / 32 Tensor Cores at 635 vs 1020 MHz; AI 40 vs 67 INT8 TOPS sparse, 20 vs 33 dense; 10 vs 17 FP16 TFLOPs; CPU 6x Cortex-A78AE at 1.5 vs 1.7 GHz; 8GB 128-bit LPDDR5 at 68 vs 102 GB/s; 7W/15W vs 7W/15W/25W), as quoted verbatim in a public repository note\n"
         "public nvpmodel listing for Orin Nano Super (mode IDs 0 = 15W, 1 = 25W, 2 = MAXN_SUPER)\n"
         "public Orin Nano 8GB memory readout (~7633 MB total visible to Linux)\n"
         "brojogopalsapui.com (GA10B Ampere, Samsung 8 nm)",
     .peak_ops_per_second =
         {
             /* fp32_tflops_nontensor 2.09 TFLOPS [D]: 1024 CUDA cores x 2 x
              * 1.02 GHz */
             [RIDGELINE_MATH_FP32] = 2.09e12,
             /* fp16_bf16_tflops_dense 17 TFLOPS [R]: NVIDIA Super-boost
              * comparison table (dense) */
             [RIDGELINE_MATH_BF16] = 17e12,
             /* fp16_bf16_tflops_dense 17 TFLOPS [R]: NVIDIA Super-boost
              * comparison table (dense) */
             [RIDGELINE_MATH_FP16] = 17e12,
             /* int8_tops_dense 33 TOPS [R]: NVIDIA table, dense (sparse = 2x) */
             [RIDGELINE_MATH_INT8] = 33e12,
         },
     .tiers = kNvidiaJetsonOrinNano8gbSuperTiers,
     .tier_count = sizeof(kNvidiaJetsonOrinNano8gbSuperTiers) / sizeof(kNvidiaJetsonOrinNano8gbSuperTiers[0]),
     /* hardware_specs.csv compute_units: 8 SMs (ABI 1.3) */
     .compute_unit_count = 8,
     .tdp_watts = 25, /* tdp_w 25 W [R]: rated power mode */
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("nvidia", "1.0.0", kPlatforms);

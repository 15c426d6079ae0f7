/*
 * Ridgeline hardware plugin "pim": processing-in-memory parts (DRAM-PIM).
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

/* Aquabolt-XL in-bank programmable computing units (PCUs), per stack.
 * Internal bandwidth [D]: Samsung states the PCUs "exploit bank-level
 * parallelism to provide four times the processing bandwidth than an off-chip
 * solution" (ISSCC 2021 25.4 as reported by Maximum PC, April 2021; the
 * sheet's provenance lists "4x processing BW" as R) x 307.2 GB/s external
 * (2.4 Gbps/pin x 1024 bits / 8) = 1228.8 GB/s. Cross-check (D): 6 GB =
 * 4 x 4 Gb PIM dies + 4 x 8 Gb dies (sheet sources), 32 PCUs per PIM die
 * (hardwareluxx), so 128 PCUs x 16 FP16 lanes x 2 B x 300 MHz = 1228.8 GB/s,
 * and x 2 FLOP per lane = 1.23 TFLOPS, matching the published 1.2. */
static const RidgelineNearMemoryCompute kAquaboltXlPcu = {
    .struct_size = sizeof(RidgelineNearMemoryCompute),
    .internal_bandwidth_bytes_per_second = 1228.8e9,
    .peak_ops_per_second =
        {
            /* 1.2 TFLOPS FP16 [R]: ISSCC 2021 paper 25.4 title/abstract. */
            [RIDGELINE_MATH_FP16] = 1.2e12,
        },
};

/* ---- samsung-hbm-pim-aquabolt-xl: Samsung HBM-PIM (Aquabolt-XL / FIMDRAM, ISSCC 2021) (processing-in-memory (HBM2)) ----
 * Sources: ISSCC 2021 paper 25.4 "A 20nm 6GB Function-In-Memory DRAM, Based
 * on HBM2 with a 1.2TFLOPS Programmable Computing Unit Using Bank-Level
 * Parallelism" (title/abstract via experts.illinois.edu); times24h/pocketmags
 * coverage (states: 300 MHz, 2.4 Gbps, 4-Gb PIM dies + 8-Gb dies)
 * Provenance: R: 6 GB, 1.2 TFLOPS, 300 MHz, 2.4 Gbps/pin, 4x processing BW,
 * 20nm; D: external BW; per-die PCU count from press (hardwareluxx: 32
 * Rechenkerne per layer)
 * Notes: Per-stack values; mem_bw DERIVED external (2.4 Gbps x 1024 bits);
 * paper: in-bank processing BW ~4x off-chip. Internal bandwidth not stated
 * numerically in the cited abstracts.
 */

static const RidgelineMemoryTier kSamsungHbmPimAquaboltXlTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "HBM2 (Aquabolt-XL FIMDRAM)",
     .kind = RIDGELINE_TIER_HBM,
     /* memory_gb 6 [R], memory_unit GiB */
     .capacity_bytes = 6 * RL_GIB,
     /* mem_bw_gbs 307.2 [R] */
     .read_bandwidth_bytes_per_second = 307.2e9,
     .near_memory_compute = &kAquaboltXlPcu,
    },
};

/* ---- skhynix-gddr6-aim: SK hynix GDDR6-AiM (ISSCC 2022 / JSSC 2023) (processing-in-memory (GDDR6)) ----
 * Sources: JSSC 2023 "A 1ynm 1.25V 8Gb 16Gb/s/Pin GDDR6-Based
 * Accelerator-in-Memory Supporting 1TFLOPS MAC Operation..." (abstract via
 * bohrium/concepedia/isscc-kb); tweaktown 2022-02-16
 * Provenance: R: 8 Gb, 16 Gb/s/pin, 1.25 V, 1 TFLOPS, 1ynm; D: external BW;
 * K: BF16 (format not stated in the abstract)
 * Notes: Per-chip values; mem_bw DERIVED external (16 Gb/s/pin x 32 pins).
 * Paper reports 7.5-10.5x GEMV/MNIST gains vs HBM2/GDDR6 systems (FPGA
 * testbed).
 */

static const RidgelineMemoryTier kSkhynixGddr6AimTiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "GDDR6 (AiM)",
     .kind = RIDGELINE_TIER_GDDR,
     /* memory_gb 1 [R], memory_unit GiB */
     .capacity_bytes = 1 * RL_GIB,
     /* mem_bw_gbs 64 [D]: 16 Gb/s/pin x 32 pins / 8 (external) */
     .read_bandwidth_bytes_per_second = 64e9,
    },
};

/* ---- upmem-pim-ddr4: UPMEM PIM DIMM system (DDR4) (processing-in-memory (DDR4, general-purpose DPUs)) ----
 * Notes (hardware_specs.csv): Memory = full 20-DIMM server (2,560 DPUs, 128
 * per DIMM). mem_bw = aggregate internal MRAM bandwidth, DERIVED: 2,560 DPUs
 * x 2 B/cycle x 350 MHz = 1,792 GB/s. PrIM measures MRAM DMA latency as
 * alpha + beta x size cycles with beta = 0.5 cycle/B (alpha ~77 cycles read,
 * ~61 write), so the asymptote is 2 B/cycle = 700 MB/s per DPU at 350 MHz.
 * Variants: PrIM's 2,556-DPU system at 350 MHz gives 1,789 GB/s. At 2,048-B
 * DMA transfers the rate is 2048/(77+1024) x 350 MHz = 651 MB/s per DPU,
 * i.e. 1.67 TB/s sustained. At UPMEM's 450 MHz target it would be 2,304
 * GB/s, and at UPMEM's 1 GB/s/DPU Hot Chips claim 2,560 GB/s. PrIM's 640-DPU
 * (10 DIMM, 267 MHz) system would be 342 GB/s. The host-to-DPU transfer
 * bandwidth is far lower and not represented. No DPU-to-DPU path; each DPU
 * sees only its own 64 MB bank. memory_unit GiB: 2,560 DPUs x 64 MB MRAM.
 * The MRAM banks are binary (8 x 64 MiB = 4 Gbit per PIM chip), so 2,560 x
 * 64 MiB = 160 GiB. PrIM's 2,556-DPU system is reported as 159.75 GB, i.e.
 * 2556 x 64 MiB.
 */
static const RidgelineMemoryTier kUpmemPimDdr4Tiers[] = {
    {.struct_size = sizeof(RidgelineMemoryTier),
     .name = "UPMEM DPU MRAM banks (aggregate internal)",
     .kind = RIDGELINE_TIER_DDR,
     /* memory_gb 160 [R]: 2,560 DPUs x 64 MiB MRAM, memory_unit GiB (PrIM
      * 2,556 DPUs = 159.75) */
     .capacity_bytes = 160 * RL_GIB,
     /* mem_bw_gbs 1792 [D]: 2,560 DPUs x 2 B/cycle (PrIM MRAM latency model
      * asymptote) x 350 MHz. Each DPU reads only its own bank; the host-DPU
      * path is far slower and is not represented */
     .read_bandwidth_bytes_per_second = 1792e9,
    },
};

static const RidgelinePlatform kPlatforms[] = {
    /* samsung-hbm-pim-aquabolt-xl */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "samsung-hbm-pim-aquabolt-xl",
     .display_name = "Samsung HBM-PIM (Aquabolt-XL / FIMDRAM, ISSCC 2021)",
     .vendor = "Samsung",
     .sources = "hardware_specs.csv row samsung-hbm-pim-aquabolt-xl\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 6 GB, 1.2 TFLOPS, 300 MHz, 2.4 Gbps/pin, 4x processing BW, 20nm; D: external BW; per-die PCU count from press (hardwareluxx: 32 Rechenkerne per layer); R: memory_unit GiB (die densities)\n"
         "ISSCC 2021 paper 25.4 \"A 20nm 6GB Function-In-Memory DRAM, Based on HBM2 with a 1.2TFLOPS Programmable Computing Unit Using Bank-Level Parallelism\" (title/abstract via experts.illinois.edu)\n"
         "times24h/pocketmags coverage (states: 300 MHz, 2.4 Gbps, 4-Gb PIM dies + 8-Gb dies)\n"
         "Maximum PC, April 2021, \"Samsung Puts a Processor Into Memory\" (pocketmags): four times the processing bandwidth of an off-chip solution, 1.2 TFLOPS",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 1.2 TFLOPS [R] */
             [RIDGELINE_MATH_FP16] = 1.2e12,
         },
     .tiers = kSamsungHbmPimAquaboltXlTiers,
     .tier_count = sizeof(kSamsungHbmPimAquaboltXlTiers) / sizeof(kSamsungHbmPimAquaboltXlTiers[0]),
    },
    /* skhynix-gddr6-aim */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "skhynix-gddr6-aim",
     .display_name = "SK hynix GDDR6-AiM (ISSCC 2022 / JSSC 2023)",
     .vendor = "SK hynix",
     .sources = "hardware_specs.csv row skhynix-gddr6-aim\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: 8 Gb, 16 Gb/s/pin, 1.25 V, 1 TFLOPS, 1ynm; D: external BW; K: BF16 (format not stated in the abstract); R: memory_unit GiB (8 Gb die)\n"
         "JSSC 2023 \"A 1ynm 1.25V 8Gb 16Gb/s/Pin GDDR6-Based Accelerator-in-Memory Supporting 1TFLOPS MAC Operation...\" (abstract via bohrium/concepedia/isscc-kb)\n"
         "tweaktown 2022-02-16",
     .peak_ops_per_second =
         {
             /* fp16_bf16_tflops_dense 1 TFLOPS [R] */
             [RIDGELINE_MATH_BF16] = 1e12,
         },
     .tiers = kSkhynixGddr6AimTiers,
     .tier_count = sizeof(kSkhynixGddr6AimTiers) / sizeof(kSkhynixGddr6AimTiers[0]),
    },
    /* upmem-pim-ddr4 */
    {.struct_size = sizeof(RidgelinePlatform),
     .id = "upmem-pim-ddr4",
     .display_name = "UPMEM PIM DIMM system (DDR4, 2,560 DPUs)",
     .vendor = "UPMEM",
     .sources = "hardware_specs.csv row upmem-pim-ddr4\n"
         "provenance (hardware_specs.csv; R stated, K commonly published, D derived): R: memory, DPU counts/clocks, per-DPU MRAM/WRAM/IRAM (PrIM, emergentmind); D: aggregate MRAM BW 1792; R: memory_unit GiB (PrIM 2556 DPUs = 159.75)\n"
         "emergentmind.com/topics/upmem-pim-system and /upmem-system (cites Gomez-Luna et al. 2021 arXiv:2105.03814)\n"
         "Gomez-Luna et al., PrIM, arXiv:2105.03814 / IEEE Access 2022 (2,556-DPU system: 20 DIMMs, 128 DPUs/DIMM, 350 MHz, 159.75 GB; 640-DPU system: 10 DIMMs, 267 MHz; MRAM latency alpha + beta x size, beta = 0.5 cycles/B), via cgiannoula.github.io/assets/publications/Prim_Access22_arxiv.pdf and public notes quoting it (public repository transcripts)\n"
         "AnandTech Hot Chips 31 coverage (UPMEM target 1 GB/s per DPU)\n"
         "Gomez-Luna et al., 'Benchmarking a New Paradigm: An Experimental Analysis of a Real Processing-in-Memory Architecture' (PrIM), arXiv:2105.03814",
     /* No FP hardware (32-bit integer RISC DPUs) and no sourced op rate:
      * peaks left 0 (compute roof unknown); only memory-bound metrics are
      * bounded. */
     .tiers = kUpmemPimDdr4Tiers,
     .tier_count = sizeof(kUpmemPimDdr4Tiers) / sizeof(kUpmemPimDdr4Tiers[0]),
    },
};

RIDGELINE_DEFINE_STATIC_PLUGIN("pim", "1.0.0", kPlatforms);

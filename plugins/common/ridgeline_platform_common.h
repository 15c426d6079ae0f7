/*
 * Numbers several in-tree hardware plugins share: host links, deployment
 * assumptions for host and phone memory, and UFS flash. One place per number,
 * each with its source (or, for an ASSUMPTION, why it is a deployment choice
 * rather than a hardware fact; docs/hardware.md lists them).
 *
 * In-tree only: plugins/CMakeLists.txt puts this folder on the in-tree
 * plugins' include path. It is not part of the plugin ABI or the SDK; vendor
 * plugins need nothing but ridgeline/plugin/ridgeline_plugin.h.
 *
 * Units: bytes and bytes per second; bandwidths in SI GB/s (1e9 bytes/s),
 * memory capacities in GiB (RL_GIB = 2^30 bytes: DRAM, HBM and flash dies
 * come in binary densities, and the spec sheet's memory_unit is GiB on every
 * row that gives a size). Plain macros so
 * they can initialise static C descriptors. The RL_*_TIER macros at the end
 * expand to a whole RidgelineMemoryTier initialiser (include
 * ridgeline/plugin/ridgeline_plugin.h first): one element of a tier array.
 */
#ifndef RIDGELINE_PLUGINS_COMMON_RIDGELINE_PLATFORM_COMMON_H_
#define RIDGELINE_PLUGINS_COMMON_RIDGELINE_PLATFORM_COMMON_H_

/* One GiB: the unit of the spec sheet's memory_gb on every row that has a
 * value (hardware_specs.csv column memory_unit; README "Memory capacity
 * units": nvidia-smi 81559 of 81920 MiB on an "80 GB" H100, hw.memsize
 * 137438953472 on a "128GB" Apple M3 Max, hl-smi 98304 MiB on a "96 GB"
 * Gaudi 2). */
#define RL_GIB 1073741824.0
#define RL_MIB 1048576.0 /* 2^20 bytes: on-chip caches */

/* ---- Host memory over PCIe x16, per direction ----
 * Lane rate x 16 lanes / 8 bits, before 128b/130b coding (PCI-SIG base
 * specifications). The spec sheet's interconnect column states both
 * directions together ("PCIe Gen5 x16 128 GB/s", "PCIe Gen4 x16 64 GB/s").
 */
/* PCIe 5.0: 32 GT/s x 16 lanes / 8 = 64 GB/s (PCI-SIG PCIe 5.0 base spec). */
#define RL_PCIE5_X16_BYTES_PER_SECOND 64e9
/* PCIe 4.0: 16 GT/s x 16 lanes / 8 = 32 GB/s (PCI-SIG PCIe 4.0 base spec). */
#define RL_PCIE4_X16_BYTES_PER_SECOND 32e9
/* PCIe 3.0: 8 GT/s x 16 lanes / 8 = 16 GB/s (PCI-SIG PCIe 3.0 base spec). */
#define RL_PCIE3_X16_BYTES_PER_SECOND 16e9

/* ---- Device-to-device links (ABI 1.2) ----
 * interconnect_bytes_per_second (the scale-up link, both directions
 * together) is set only where the row's interconnect cell of
 * hardware_specs.csv gives it or the figures it is derived from; each
 * platform cites that cell next to the number. PCIe-only cards leave it 0
 * (their card-to-card path runs through the system's PCIe switch or root
 * complex), except the L40S, whose tensor-parallel runs are timed over its
 * x16 link (the cell's 64 GB/s, both directions). scale_up_latency_seconds,
 * scale_out_bytes_per_second, scale_out_latency_seconds and
 * devices_per_node stay 0 = unknown in every in-tree plugin: no row of the
 * sheet gives them (NICs and node size belong to the system a part is built
 * into). Collectives over an unknown link cost no time and the analysis
 * warns; tests/conformance/spec_sheet_test.cc checks all of this.
 */

/* ---- Host memory capacity: deployment assumptions, not hardware numbers ----
 * The sheet leaves host memory blank because it depends on the system the
 * part is installed in (docs/hardware.md, "Assumptions").
 */
/* ASSUMPTION: host DRAM one datacenter accelerator can use = 256 GiB (a 2 TiB
 * host shared by 8 accelerators). */
#define RL_HOST_DRAM_DATACENTER_BYTES (256 * RL_GIB)
/* ASSUMPTION: host DRAM of a desktop or workstation with one consumer or
 * workstation GPU = 64 GiB. */
#define RL_HOST_DRAM_DESKTOP_BYTES (64 * RL_GIB)
/* ASSUMPTION: DDR5 installed per Xeon socket = 512 GiB (the sheet leaves CPU
 * memory blank: platform-dependent, up to 4 TB per socket). The EPYC 9965
 * row (also blank) uses the same assumption. */
#define RL_XEON_DRAM_BYTES (512 * RL_GIB)

/* ---- Phones ---- */
/* ASSUMPTION: LPDDR in the phone = 16 GiB where the sheet gives no maximum
 * for the SoC. */
#define RL_PHONE_LPDDR_BYTES (16 * RL_GIB)
/* ASSUMPTION: phone flash capacity = 256 GiB. */
#define RL_PHONE_FLASH_BYTES (256 * RL_GIB)
/* UFS 4.0 flash: sequential read up to 4,200 MB/s, write up to 2,800 MB/s
 * (Samsung UFS 4.0 announcement, May 2022, JEDEC-approved standard; as
 * reported by voonze.com 2022-05-07 and vmvirtualmachine.com). Phones sustain
 * less; random reads are far slower. */
#define RL_UFS4_READ_BYTES_PER_SECOND 4.2e9
#define RL_UFS4_WRITE_BYTES_PER_SECOND 2.8e9

/* ---- Whole tiers several platforms share ----
 * Capacity and bandwidths come from the macros above, whose comments give
 * the sources and assumptions. The link is per direction and the same both
 * ways, so read and write bandwidth are equal.
 */
#define RL_HOST_DRAM_OVER_PCIE_X16_TIER_(name_, capacity_, link_)             \
  {.struct_size = sizeof(RidgelineMemoryTier),                                \
   .name = name_,                                                             \
   .kind = RIDGELINE_TIER_HOST_LINK,                                          \
   .capacity_bytes = capacity_,                                               \
   .read_bandwidth_bytes_per_second = link_,                                  \
   .write_bandwidth_bytes_per_second = link_}

/* Datacenter accelerator: RL_HOST_DRAM_DATACENTER_BYTES (ASSUMPTION) over
 * PCIe 5.0 / 4.0 / 3.0 x16. */
#define RL_HOST_DRAM_OVER_PCIE5_DATACENTER_TIER                               \
  RL_HOST_DRAM_OVER_PCIE_X16_TIER_("host DRAM over PCIe 5.0 x16",             \
                                   RL_HOST_DRAM_DATACENTER_BYTES,             \
                                   RL_PCIE5_X16_BYTES_PER_SECOND)
#define RL_HOST_DRAM_OVER_PCIE4_DATACENTER_TIER                               \
  RL_HOST_DRAM_OVER_PCIE_X16_TIER_("host DRAM over PCIe 4.0 x16",             \
                                   RL_HOST_DRAM_DATACENTER_BYTES,             \
                                   RL_PCIE4_X16_BYTES_PER_SECOND)
#define RL_HOST_DRAM_OVER_PCIE3_DATACENTER_TIER                               \
  RL_HOST_DRAM_OVER_PCIE_X16_TIER_("host DRAM over PCIe 3.0 x16",             \
                                   RL_HOST_DRAM_DATACENTER_BYTES,             \
                                   RL_PCIE3_X16_BYTES_PER_SECOND)

/* Consumer / workstation GPU: RL_HOST_DRAM_DESKTOP_BYTES (ASSUMPTION) over
 * PCIe 4.0 x16. */
#define RL_HOST_DRAM_OVER_PCIE4_DESKTOP_TIER                                  \
  RL_HOST_DRAM_OVER_PCIE_X16_TIER_("host DRAM over PCIe 4.0 x16",             \
                                   RL_HOST_DRAM_DESKTOP_BYTES,                \
                                   RL_PCIE4_X16_BYTES_PER_SECOND)

/* Phone flash: RL_PHONE_FLASH_BYTES (ASSUMPTION) of UFS 4.0, read/write
 * rates as sourced above. */
#define RL_PHONE_UFS4_FLASH_TIER                                              \
  {.struct_size = sizeof(RidgelineMemoryTier),                                \
   .name = "UFS 4.0 flash",                                                   \
   .kind = RIDGELINE_TIER_FLASH,                                              \
   .capacity_bytes = RL_PHONE_FLASH_BYTES,                                    \
   .read_bandwidth_bytes_per_second = RL_UFS4_READ_BYTES_PER_SECOND,          \
   .write_bandwidth_bytes_per_second = RL_UFS4_WRITE_BYTES_PER_SECOND}

#endif /* RIDGELINE_PLUGINS_COMMON_RIDGELINE_PLATFORM_COMMON_H_ */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Example Ridgeline hardware plugin for a FICTIONAL part.
 *
 * "Example Corp EX-1" does not exist. Every number below is ILLUSTRATIVE,
 * chosen to be round and plausible so vendors can see the shape of a
 * descriptor; none of them describes real hardware. A real plugin cites its
 * source next to each number instead (datasheet, whitepaper, derivation).
 *
 * Build: see CMakeLists.txt next to this file. Check:
 *   ridgeline-plugin-check libridgeline-example-vendor.so
 */
#include <stddef.h>

/* One translation unit per plugin defines the ready-made error helpers. */
#define RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
#include "ridgeline/plugin/ridgeline_plugin.h"

/* Memory tiers, fastest first. Unlisted optional fields stay 0 = unknown. */
static const RidgelineMemoryTier kEx1Tiers[] = {
    {
        .struct_size = sizeof(RidgelineMemoryTier),
        .name = "EX-1 on-chip SRAM",
        .kind = RIDGELINE_TIER_SRAM,
        .capacity_bytes = 64.0 * 1024 * 1024,        /* illustrative: 64 MiB */
        .read_bandwidth_bytes_per_second = 20e12,    /* illustrative */
        .write_bandwidth_bytes_per_second = 20e12,   /* illustrative */
    },
    {
        .struct_size = sizeof(RidgelineMemoryTier),
        .name = "EX-1 HBM3 (4 stacks)",
        .kind = RIDGELINE_TIER_HBM,
        .capacity_bytes = 96e9,                      /* illustrative: 96 GB */
        /* illustrative derivation: 4 stacks x 1024 bit x 6.4 Gb/s / 8
         * = 3.2768e12 B/s; one figure, so write bandwidth stays 0 (= read) */
        .read_bandwidth_bytes_per_second = 3.2768e12,
        .latency_seconds = 600e-9,                   /* illustrative */
        .energy_joules_per_byte = 30e-12,            /* illustrative */
    },
    {
        .struct_size = sizeof(RidgelineMemoryTier),
        .name = "host DDR5 over PCIe 5.0 x16",
        .kind = RIDGELINE_TIER_HOST_LINK,
        .capacity_bytes = 512e9,                     /* illustrative */
        .read_bandwidth_bytes_per_second = 64e9,     /* PCIe 5.0 x16, one way */
    },
};

static const RidgelinePlatform kPlatforms[] = {
    {
        .struct_size = sizeof(RidgelinePlatform),
        .id = "example-ex1-96gb",
        .display_name = "Example Corp EX-1 96GB (fictional example part)",
        .vendor = "Example Corp (fictional)",
        .sources =
            "illustrative values for the Ridgeline SDK example; "
            "not a real part\n"
            "PCIe 5.0 x16: 32 GT/s x 16 lanes, 128b/130b ~ 64 GB/s per "
            "direction",
        /* Dense peaks only (never 2:4 sparse). 0 = no such path. */
        .peak_ops_per_second =
            {
                [RIDGELINE_MATH_FP32] = 50e12,  /* illustrative */
                [RIDGELINE_MATH_BF16] = 400e12, /* illustrative */
                [RIDGELINE_MATH_FP16] = 400e12, /* illustrative */
                [RIDGELINE_MATH_FP8] = 800e12,  /* illustrative */
                [RIDGELINE_MATH_INT8] = 800e12, /* illustrative */
            },
        .energy_joules_per_op = {[RIDGELINE_MATH_BF16] = 0.5e-12}, /* illus. */
        .kernel_launch_seconds = 4e-6,                            /* illus. */
        .tiers = kEx1Tiers,
        .tier_count = sizeof(kEx1Tiers) / sizeof(kEx1Tiers[0]),
        .tdp_watts = 450,  /* illustrative */
        .idle_watts = 60,  /* illustrative */
        /* price, embodied carbon: not published -> left 0 (unknown) */
        .interconnect_bytes_per_second = 400e9, /* illustrative */
    },
};
#define kPlatformCount (sizeof(kPlatforms) / sizeof(kPlatforms[0]))

static RidgelinePluginError* ExampleInit(void) {
  return NULL; /* pure data: nothing to set up */
}

static size_t ExamplePlatformCount(void) { return kPlatformCount; }

static RidgelinePluginError* ExampleGetPlatform(size_t index,
                                                const RidgelinePlatform** out) {
  if (index >= kPlatformCount) {
    return ridgeline_error_new(RIDGELINE_CODE_OUT_OF_RANGE,
                               "platform index %zu out of range [0, %zu)",
                               index, (size_t)kPlatformCount);
  }
  *out = &kPlatforms[index]; /* static: valid for the process lifetime */
  return NULL;
}

/* Optional hook. Pure function of its arguments, hence thread-safe.
 * Illustrative model: GEMV and small-batch GEMM are bandwidth-limited at 85%;
 * big GEMMs reach 70% of peak compute. */
static RidgelinePluginError* ExampleEfficiency(size_t index,
                                               const RidgelineOpShape* shape,
                                               RidgelineOpEfficiency* out) {
  if (index >= kPlatformCount) {
    return ridgeline_error_new(RIDGELINE_CODE_OUT_OF_RANGE,
                               "platform index %zu out of range", index);
  }
  if (shape->math < 0 || shape->math >= RIDGELINE_MATH_TYPE_COUNT ||
      kPlatforms[index].peak_ops_per_second[shape->math] == 0) {
    return ridgeline_error_new(RIDGELINE_CODE_UNIMPLEMENTED,
                               "%s: no dense peak for math type %d",
                               kPlatforms[index].id, (int)shape->math);
  }
  if (shape->op_class == RIDGELINE_OP_ELEMENTWISE) {
    return NULL; /* both fields left 0: use the engine's defaults */
  }
  out->compute = shape->tokens >= 256 ? 0.70 : 0.50; /* illustrative */
  out->memory = 0.85;                                 /* illustrative */
  return NULL;
}

static const RidgelinePluginTable kTable = {
    .struct_size = sizeof(RidgelinePluginTable),
    .abi_major = RIDGELINE_PLUGIN_ABI_MAJOR,
    .abi_minor = RIDGELINE_PLUGIN_ABI_MINOR,
    .family = "example-vendor",
    .plugin_version = "0.1.0",
    .init = ExampleInit,
    .platform_count = ExamplePlatformCount,
    .get_platform = ExampleGetPlatform,
    .efficiency = ExampleEfficiency,
    .error_code = ridgeline_error_code,
    .error_message = ridgeline_error_message,
    .error_free = ridgeline_error_free,
};

const RidgelinePluginTable* ridgeline_plugin_entry(void) { return &kTable; }

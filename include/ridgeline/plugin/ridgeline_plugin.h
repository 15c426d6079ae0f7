/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ridgeline hardware plugin ABI: the only interface between the Ridgeline
 * host (service, CLI, ridgeline-plugin-check) and a hardware plugin shared
 * library. Pure C (C99), usable from C and C++; no other Ridgeline header is
 * needed to write a plugin.
 *
 * A plugin exports exactly one symbol, ridgeline_plugin_entry(), returning a
 * RidgelinePluginTable. The table describes the plugin (ABI version, family,
 * plugin version) and carries function pointers that enumerate platform
 * descriptors and, optionally, a per-op efficiency hook.
 *
 * Rules (see docs/plugin-guide.md and CHANGELOG.md next to this file):
 *  - Versioning: the host refuses a plugin whose abi_major differs from
 *    RIDGELINE_PLUGIN_ABI_MAJOR, or whose abi_minor is newer than the host's.
 *  - Append-only: within one major version, fields and function pointers are
 *    only ever appended to the end of a struct. Every growable struct starts
 *    with struct_size = the size of the struct as the plugin compiled it
 *    (RIDGELINE_*_STRUCT_SIZE below, or sizeof); the host reads only fields
 *    that lie inside struct_size and treats the rest as 0 ("unknown").
 *    A version's size is offsetof + sizeof of its last field (as OpenXLA's
 *    PJRT C API sizes its structs), never sizeof: tail padding differs
 *    between versions, and a sizeof-based minimum would refuse an older
 *    plugin whose struct ends before the padding a newer field brings.
 *  - Units: SI, named in each field (bytes, seconds, joules, watts, ops per
 *    second, bytes per second). Prices are US dollars, embodied carbon kg CO2e.
 *  - Unknown: every optional number uses 0 for "not published / unknown".
 *    Negative numbers, NaN and infinity are always invalid. Required numbers
 *    (tier capacity and read bandwidth) must be finite and > 0. A platform
 *    whose peak rates are all 0 is valid: "compute roof unknown" (the host
 *    bounds only memory-bound metrics for it).
 *  - Peak rates are dense (never 2:4 structured-sparsity figures).
 *  - Errors: opaque RidgelinePluginError objects; NULL means OK. Codes use
 *    the absl::StatusCode numbering (RIDGELINE_CODE_*). No C++ exception, no
 *    longjmp, no abort may cross the boundary.
 *  - Lifetime: the host loads a plugin once and never unloads it, so static
 *    data in the plugin lives as long as the process. Ownership of every
 *    pointer is written next to it below.
 *  - Threads: the host calls init() once, from one thread, before any other
 *    function. After a successful init(), platform_count(), get_platform(),
 *    efficiency() and the error functions may be called concurrently from any
 *    number of threads and must be thread-safe.
 */
#ifndef RIDGELINE_PLUGIN_RIDGELINE_PLUGIN_H_
#define RIDGELINE_PLUGIN_RIDGELINE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version this header describes. Bump MINOR when appending fields or
 * functions; bump MAJOR only for an incompatible change (never planned). */
#define RIDGELINE_PLUGIN_ABI_MAJOR 1
#define RIDGELINE_PLUGIN_ABI_MINOR 4

/* Name of the single exported entry symbol (for dlsym / Boost.DLL). */
#define RIDGELINE_PLUGIN_ENTRY_SYMBOL "ridgeline_plugin_entry"

/* Marks the entry point as the one exported symbol. Build plugins with
 * hidden visibility (-fvisibility=hidden) so nothing else is exported. */
#if defined(_WIN32)
#define RIDGELINE_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define RIDGELINE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define RIDGELINE_PLUGIN_EXPORT
#endif

/* Error codes: the absl::StatusCode numbering. */
typedef enum RidgelineCode {
  RIDGELINE_CODE_OK = 0,
  RIDGELINE_CODE_CANCELLED = 1,
  RIDGELINE_CODE_UNKNOWN = 2,
  RIDGELINE_CODE_INVALID_ARGUMENT = 3,
  RIDGELINE_CODE_DEADLINE_EXCEEDED = 4,
  RIDGELINE_CODE_NOT_FOUND = 5,
  RIDGELINE_CODE_ALREADY_EXISTS = 6,
  RIDGELINE_CODE_PERMISSION_DENIED = 7,
  RIDGELINE_CODE_RESOURCE_EXHAUSTED = 8,
  RIDGELINE_CODE_FAILED_PRECONDITION = 9,
  RIDGELINE_CODE_ABORTED = 10,
  RIDGELINE_CODE_OUT_OF_RANGE = 11,
  RIDGELINE_CODE_UNIMPLEMENTED = 12,
  RIDGELINE_CODE_INTERNAL = 13,
  RIDGELINE_CODE_UNAVAILABLE = 14,
  RIDGELINE_CODE_DATA_LOSS = 15,
  RIDGELINE_CODE_UNAUTHENTICATED = 16
} RidgelineCode;

/* Math data types with a dense peak rate. Same order and values as
 * ridgeline::engine::MathType; used as indices into the per-type arrays. */
typedef enum RidgelineMathType {
  RIDGELINE_MATH_FP64 = 0,
  RIDGELINE_MATH_FP32 = 1,
  RIDGELINE_MATH_TF32 = 2,
  RIDGELINE_MATH_BF16 = 3,
  RIDGELINE_MATH_FP16 = 4,
  RIDGELINE_MATH_FP8 = 5,
  RIDGELINE_MATH_FP4 = 6,
  RIDGELINE_MATH_INT8 = 7,
  RIDGELINE_MATH_INT4 = 8,
  /* Since 1.1: FP16 inputs with FP16 accumulation, where its rate differs
   * from RIDGELINE_MATH_FP16 (which is the FP32-accumulate rate): GeForce
   * parts run it at twice their FP16 rate. 0 = same as FP16 / not published.
   * Runtimes that accumulate in FP16 (llama.cpp's cuBLAS path) use it. */
  RIDGELINE_MATH_FP16_ACC16 = 9
} RidgelineMathType;
/* Number of math types defined by this ABI version (9 in 1.0). */
#define RIDGELINE_MATH_TYPE_COUNT 10
/* Length of every per-math-type array. Slots >= RIDGELINE_MATH_TYPE_COUNT are
 * reserved for types appended in later minor versions and must be 0. */
#define RIDGELINE_MATH_SLOTS 16

/* Memory tier kinds. Same order and values as ridgeline::engine::TierKind. */
typedef enum RidgelineTierKind {
  RIDGELINE_TIER_SRAM = 0,      /* on-chip SRAM / L2 / last-level cache */
  RIDGELINE_TIER_HBM = 1,
  RIDGELINE_TIER_GDDR = 2,
  RIDGELINE_TIER_LPDDR = 3,
  RIDGELINE_TIER_DDR = 4,
  RIDGELINE_TIER_UNIFIED = 5,   /* CPU/GPU shared memory of an SoC */
  RIDGELINE_TIER_HOST_LINK = 6, /* host memory reached over PCIe/NVLink-C2C */
  RIDGELINE_TIER_FLASH = 7
} RidgelineTierKind;
#define RIDGELINE_TIER_KIND_COUNT 8

/* Operation classes passed to the efficiency hook. Same order and values as
 * ridgeline::engine::OpClass. */
typedef enum RidgelineOpClass {
  RIDGELINE_OP_GEMM = 0,
  RIDGELINE_OP_GEMV = 1,
  RIDGELINE_OP_ATTENTION = 2,
  RIDGELINE_OP_ELEMENTWISE = 3
} RidgelineOpClass;
#define RIDGELINE_OP_CLASS_COUNT 4

/* Most memory tiers one platform may describe (= engine::kMaxTiers). */
#define RIDGELINE_MAX_TIERS 8

/* Opaque error object, defined by the plugin. Created by the plugin, handed
 * to the host, which reads it with the table's error_code/error_message and
 * releases it exactly once with the table's error_free. */
typedef struct RidgelinePluginError RidgelinePluginError;

/* Compute inside a memory tier (processing in memory). Fixed layout within a
 * major version; grows only by appending (struct_size tells the host). */
typedef struct RidgelineNearMemoryCompute {
  uint32_t struct_size; /* = sizeof(RidgelineNearMemoryCompute) */
  /* Bank-level bandwidth the in-memory units see; required, > 0. */
  double internal_bandwidth_bytes_per_second;
  /* Dense peak ops/s per RidgelineMathType; 0 = not supported/published.
   * At least one must be > 0 (compute in memory exists only to compute;
   * unlike the platform's own peaks, "unknown" is not allowed here). */
  double peak_ops_per_second[RIDGELINE_MATH_SLOTS];
  double energy_joules_per_op; /* 0 = unknown */
} RidgelineNearMemoryCompute;

/* One memory tier. Tiers are listed fastest first. */
typedef struct RidgelineMemoryTier {
  uint32_t struct_size; /* = sizeof(RidgelineMemoryTier); the host uses the
                           first tier's struct_size as the array stride */
  /* Borrowed, NUL-terminated, UTF-8; owned by the plugin, valid for the
   * process lifetime. E.g. "L2", "HBM3", "host DDR5 over PCIe 5.0 x16". */
  const char* name;
  int32_t kind;                              /* RidgelineTierKind */
  double capacity_bytes;                     /* required, > 0 */
  double read_bandwidth_bytes_per_second;    /* required, > 0 */
  /* 0 = only one figure is published; the host uses the read bandwidth. */
  double write_bandwidth_bytes_per_second;
  double latency_seconds;                    /* 0 = unknown */
  double energy_joules_per_byte;             /* 0 = unknown */
  /* Borrowed, owned by the plugin, valid for the process lifetime.
   * NULL = no compute in this tier. */
  const RidgelineNearMemoryCompute* near_memory_compute;

  /* ---- Since 1.4. A 1.0-1.3 plugin's tier ends above (its struct_size is
   * the array stride); the host reads this as 0 for it. ---- */
  /* Share of the raw bandwidth that inline ECC's check bits take when the
   * part runs as shipped: GDDR keeps them in the same DRAM as the data and
   * reads them alongside it (1/16 on NVIDIA's GDDR6 data-centre parts, where
   * nvidia-smi shows 15/16 of the capacity with ECC on, their default).
   * 0 = none: sideband ECC (HBM), ECC off by default, or unknown. The
   * roofline bound keeps the raw rate and the capacity (ECC can be turned
   * off); calibrated predictions stream data at (1 - share) of it, and a
   * serving runtime sizes its KV pool from (1 - share) of the capacity, as
   * the driver reports it. In [0, 0.5]. */
  double inline_ecc_share;
} RidgelineMemoryTier;

/* One hardware platform (one physical part). */
typedef struct RidgelinePlatform {
  uint32_t struct_size; /* = RIDGELINE_PLATFORM_STRUCT_SIZE or sizeof;
                           >= RIDGELINE_PLATFORM_SIZE_1_0 */
  /* All strings: borrowed, NUL-terminated UTF-8, owned by the plugin and
   * valid for the process lifetime. */
  const char* id;           /* stable lower-case kebab id, unique across all
                               plugins: "nvidia-h100-sxm-80gb" */
  const char* display_name; /* "NVIDIA H100 SXM5 80GB" */
  const char* vendor;       /* "NVIDIA" */
  /* Citations for the numbers, one per line ('\n'-separated); non-empty. */
  const char* sources;

  /* Dense peak ops/s per RidgelineMathType; 0 = not published / no such
   * path. All 0 is valid and means "compute roof unknown": no source
   * publishes a rate, so the host reports time from the memory roofs only
   * and says compute-dependent metrics are unknown (clarified in 1.0). */
  double peak_ops_per_second[RIDGELINE_MATH_SLOTS];
  /* Joules per op per RidgelineMathType; 0 = not published. */
  double energy_joules_per_op[RIDGELINE_MATH_SLOTS];
  double kernel_launch_seconds; /* per kernel; 0 = not published */

  /* Borrowed array of tier_count tiers, fastest first; owned by the plugin,
   * valid for the process lifetime. 1 <= tier_count <= RIDGELINE_MAX_TIERS. */
  const RidgelineMemoryTier* tiers;
  uint32_t tier_count;

  double tdp_watts;                     /* board/package power; 0 = unknown */
  double idle_watts;                    /* 0 = unknown */
  double price_usd;                     /* launch price; 0 = not published */
  double embodied_kg_co2e;              /* 0 = not published */
  /* Scale-up link (NVLink, Infinity Fabric, ICI, Xe Link, ...) between the
   * devices of one node: per device, both directions together (as NVLink's
   * 900 GB/s on H100); times tensor-parallel all-reduces and every
   * collective whose group stays inside a node. 0 = none/unknown. */
  double interconnect_bytes_per_second;

  /* ---- Since 1.2: two link levels. A 1.0/1.1 plugin's struct ends above;
   * the host reads these as 0 (unknown) for it. ---- */
  /* One-way latency of a scale-up transfer (per collective step);
   * 0 = unknown. */
  double scale_up_latency_seconds;
  /* Scale-out link (InfiniBand, RoCE, Ethernet) between nodes: per device,
   * both directions together (a 400 Gb/s NIC per device = 100e9).
   * 0 = none/unknown: collectives that cross nodes then cost no time and
   * the host warns. */
  double scale_out_bytes_per_second;
  double scale_out_latency_seconds; /* one-way, per step; 0 = unknown */
  /* Devices one scale-up domain joins (8 in an HGX H100 board); a group of
   * more devices spans nodes. 0 = unknown (the host then treats every group
   * as inside one node). */
  uint32_t devices_per_node;

  /* ---- Since 1.3: what the kernel model needs. A 1.0-1.2 plugin's struct
   * ends above; the host reads these as 0 (unknown) for it. ---- */
  /* Compute units the device schedules kernels over: streaming
   * multiprocessors (NVIDIA), compute units (AMD), Xe cores (Intel). The
   * kernel model spreads GEMM tiles and attention CTAs over them (tiles,
   * waves, split-KV). 0 = unknown: kernels get the plain roofline form. */
  uint32_t compute_unit_count;
  /* Last-level on-chip cache (L2) in bytes; 0 = unknown. */
  double last_level_cache_bytes;
} RidgelinePlatform;

/* Shape of one operator, passed to the efficiency hook. Owned by the host,
 * valid only for the duration of the call. */
typedef struct RidgelineOpShape {
  uint32_t struct_size; /* = sizeof(RidgelineOpShape) as the host compiled it */
  int32_t op_class;     /* RidgelineOpClass */
  int32_t math;         /* RidgelineMathType the op executes in */
  int64_t tokens;       /* rows of the matmul / tokens in the step */
  double flops;
  double bytes;
} RidgelineOpShape;

/* Fractions of peak the hook predicts for one op. Owned by the host; the
 * plugin writes into it. The host zero-fills it and sets struct_size first. */
typedef struct RidgelineOpEfficiency {
  uint32_t struct_size; /* set by the host */
  /* Fraction of peak ops/s attained, in (0, 1]. */
  double compute;
  /* Fraction of tier bandwidth attained, in (0, 1]. */
  double memory;
  /* Leave both at 0 to say "no opinion: use the engine's defaults". */
} RidgelineOpEfficiency;

/* The table returned by the entry point. The plugin owns it (static storage
 * is the norm); it must stay valid and unchanged for the process lifetime. */
typedef struct RidgelinePluginTable {
  uint32_t struct_size; /* = sizeof(RidgelinePluginTable) */
  uint32_t abi_major;   /* = RIDGELINE_PLUGIN_ABI_MAJOR */
  uint32_t abi_minor;   /* = RIDGELINE_PLUGIN_ABI_MINOR */
  /* Borrowed, plugin-owned, process lifetime. Family: lower-case, e.g.
   * "nvidia"; plugin_version: free-form, e.g. "1.0.0". */
  const char* family;
  const char* plugin_version;

  /* ---- ABI 1.0 functions. Required unless marked optional. ---- */

  /* Called once before any other function. Returns NULL on success, or an
   * error (ownership passes to the host) and the plugin is refused. */
  RidgelinePluginError* (*init)(void);

  /* Number of platforms this plugin describes (>= 1). */
  size_t (*platform_count)(void);

  /* Stores in *out a pointer to platform `index` (0 <= index <
   * platform_count()). *out is borrowed: owned by the plugin, valid and
   * unchanged for the process lifetime; repeated calls return equal data.
   * Returns NULL on success; an error (owned by the host) otherwise, e.g.
   * OUT_OF_RANGE for a bad index. */
  RidgelinePluginError* (*get_platform)(size_t index,
                                        const RidgelinePlatform** out);

  /* OPTIONAL (may be NULL: the engine's defaults apply). Predicts the
   * attained fractions of peak for one op on platform `platform_index`.
   * `shape` is borrowed for the call; `out` is host-owned, written by the
   * plugin. Must be thread-safe. Returns NULL on success; UNIMPLEMENTED when
   * the math type is not supported by that platform; INVALID_ARGUMENT /
   * OUT_OF_RANGE for a bad index or shape. */
  RidgelinePluginError* (*efficiency)(size_t platform_index,
                                      const RidgelineOpShape* shape,
                                      RidgelineOpEfficiency* out);

  /* Error accessors. `error` is borrowed for the call and never NULL. */
  int32_t (*error_code)(const RidgelinePluginError* error); /* RidgelineCode */
  /* Borrowed NUL-terminated UTF-8, valid until error_free(error). */
  const char* (*error_message)(const RidgelinePluginError* error);
  /* Releases an error returned by this plugin; the host calls it exactly once
   * per error. */
  void (*error_free)(RidgelinePluginError* error);

  /* ---- Later minor versions append here. ---- */
} RidgelinePluginTable;

/* Size of a struct up to the end of `last_field`: offsetof + sizeof of the
 * field, without the tail padding sizeof would add (the PJRT C API way). */
#define RIDGELINE_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* Size of each struct in each ABI version: everything up to that version's
 * last field. The host accepts any struct_size >= the 1.0 size and reads a
 * field only when struct_size covers it. These values never change once
 * released (a static_assert in the host pins them). */
#define RIDGELINE_PLUGIN_TABLE_SIZE_1_0 \
  RIDGELINE_STRUCT_SIZE(RidgelinePluginTable, error_free)
#define RIDGELINE_PLATFORM_SIZE_1_0 \
  RIDGELINE_STRUCT_SIZE(RidgelinePlatform, interconnect_bytes_per_second)
#define RIDGELINE_PLATFORM_SIZE_1_2 \
  RIDGELINE_STRUCT_SIZE(RidgelinePlatform, devices_per_node)
#define RIDGELINE_PLATFORM_SIZE_1_3 \
  RIDGELINE_STRUCT_SIZE(RidgelinePlatform, last_level_cache_bytes)
#define RIDGELINE_MEMORY_TIER_SIZE_1_0 \
  RIDGELINE_STRUCT_SIZE(RidgelineMemoryTier, near_memory_compute)
#define RIDGELINE_MEMORY_TIER_SIZE_1_4 \
  RIDGELINE_STRUCT_SIZE(RidgelineMemoryTier, inline_ecc_share)
#define RIDGELINE_NEAR_MEMORY_COMPUTE_SIZE_1_0 \
  RIDGELINE_STRUCT_SIZE(RidgelineNearMemoryCompute, energy_joules_per_op)

/* What a plugin built against this header stores in struct_size (sizeof
 * also works: it is never smaller). */
#define RIDGELINE_PLUGIN_TABLE_STRUCT_SIZE RIDGELINE_PLUGIN_TABLE_SIZE_1_0
#define RIDGELINE_PLATFORM_STRUCT_SIZE RIDGELINE_PLATFORM_SIZE_1_3
#define RIDGELINE_MEMORY_TIER_STRUCT_SIZE RIDGELINE_MEMORY_TIER_SIZE_1_4
#define RIDGELINE_NEAR_MEMORY_COMPUTE_STRUCT_SIZE \
  RIDGELINE_NEAR_MEMORY_COMPUTE_SIZE_1_0

/* The entry point's type and the declaration every plugin defines exactly
 * once (with RIDGELINE_PLUGIN_EXPORT). Returns a plugin-owned table valid for
 * the process lifetime, or NULL if the plugin cannot run at all. Must not
 * fail in any other way. */
typedef const RidgelinePluginTable* (*RidgelinePluginEntryFn)(void);
RIDGELINE_PLUGIN_EXPORT const RidgelinePluginTable* ridgeline_plugin_entry(
    void);

/* ------------------------------------------------------------------------
 * Optional helper: a ready-made error implementation. In exactly one source
 * file of a plugin, write
 *     #define RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
 *     #include "ridgeline/plugin/ridgeline_plugin.h"
 * to get static (not exported) functions:
 *   ridgeline_error_new(code, printf-format, ...)  -> error (host-owned)
 *   ridgeline_error_code / ridgeline_error_message / ridgeline_error_free,
 *   which can be stored in the table's error_* fields directly.
 * Allocation failure yields a static "out of memory" error that error_free
 * recognises and does not free.
 * ------------------------------------------------------------------------ */
#ifdef RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct RidgelinePluginError {
  int32_t code;
  char* message; /* owned by this error */
};

static struct RidgelinePluginError ridgeline_error_oom_ = {
    RIDGELINE_CODE_RESOURCE_EXHAUSTED, (char*)"out of memory"};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3), unused))
#endif
static RidgelinePluginError* ridgeline_error_new(int32_t code,
                                                 const char* format, ...) {
  va_list args;
  int length;
  RidgelinePluginError* error;
  va_start(args, format);
  length = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (length < 0) length = 0;
  error = (RidgelinePluginError*)malloc(sizeof(RidgelinePluginError));
  if (error == NULL) return &ridgeline_error_oom_;
  error->code = code;
  error->message = (char*)malloc((size_t)length + 1);
  if (error->message == NULL) {
    free(error);
    return &ridgeline_error_oom_;
  }
  va_start(args, format);
  vsnprintf(error->message, (size_t)length + 1, format, args);
  va_end(args);
  return error;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static int32_t ridgeline_error_code(const RidgelinePluginError* error) {
  return error->code;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static const char* ridgeline_error_message(const RidgelinePluginError* error) {
  return error->message;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static void ridgeline_error_free(RidgelinePluginError* error) {
  if (error == NULL || error == &ridgeline_error_oom_) return;
  free(error->message);
  free(error);
}
#endif /* RIDGELINE_PLUGIN_IMPLEMENT_ERRORS */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RIDGELINE_PLUGIN_RIDGELINE_PLUGIN_H_ */

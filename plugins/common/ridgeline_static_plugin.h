/*
 * The entry point and function table of a pure-data in-tree plugin, written
 * once: RIDGELINE_DEFINE_STATIC_PLUGIN(family, version, platforms) defines
 * init (nothing to do), platform_count, get_platform (with its two errors),
 * the RidgelinePluginTable and the exported ridgeline_plugin_entry, for a
 * file-scope array `platforms` of static RidgelinePlatform descriptors.
 *
 * In-tree only: plugins/CMakeLists.txt puts this folder on the in-tree
 * plugins' include path. It is not part of the plugin ABI or the SDK; what
 * it expands to is ordinary C99 against ridgeline/plugin/ridgeline_plugin.h,
 * exactly what a vendor writes by hand. Everything it defines is static
 * (hidden) except ridgeline_plugin_entry, which RIDGELINE_PLUGIN_EXPORT
 * exports, as the ABI requires.
 *
 * Use, in the plugin's one source file:
 *     #define RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
 *     #include "ridgeline/plugin/ridgeline_plugin.h"
 *     #include "ridgeline_static_plugin.h"
 *     static const RidgelinePlatform kPlatforms[] = {...};
 *     RIDGELINE_DEFINE_STATIC_PLUGIN("google", "1.0.0", kPlatforms);
 *
 * family and version must be string literals (the error messages are built
 * by literal concatenation); platforms must be an array, not a pointer (its
 * element count is taken with sizeof). Defines it once per plugin.
 *
 * Thread safety: the table and descriptors are immutable static data; every
 * function may be called from any thread. Errors are allocated by
 * ridgeline_error_new and owned by the caller (freed with error_free).
 */
#ifndef RIDGELINE_PLUGINS_COMMON_RIDGELINE_STATIC_PLUGIN_H_
#define RIDGELINE_PLUGINS_COMMON_RIDGELINE_STATIC_PLUGIN_H_

#include <stddef.h>

#ifndef RIDGELINE_PLUGIN_IMPLEMENT_ERRORS
/* The expansion calls ridgeline_error_new. */
#error "define RIDGELINE_PLUGIN_IMPLEMENT_ERRORS before the plugin ABI header"
#endif
#include "ridgeline/plugin/ridgeline_plugin.h"

#define RIDGELINE_DEFINE_STATIC_PLUGIN(family_, version_, platforms_)         \
  /* Nothing to prepare: the descriptors are static data. */                  \
  static RidgelinePluginError* RidgelineStaticPluginInit(void) {              \
    return NULL;                                                              \
  }                                                                           \
                                                                              \
  static size_t RidgelineStaticPluginPlatformCount(void) {                    \
    return sizeof(platforms_) / sizeof((platforms_)[0]);                      \
  }                                                                           \
                                                                              \
  static RidgelinePluginError* RidgelineStaticPluginGetPlatform(              \
      size_t index, const RidgelinePlatform** out) {                          \
    if (out == NULL) {                                                        \
      return ridgeline_error_new(                                             \
          RIDGELINE_CODE_INVALID_ARGUMENT,                                    \
          "plugin " family_ ": get_platform: out is NULL");                   \
    }                                                                         \
    if (index >= RidgelineStaticPluginPlatformCount()) {                      \
      return ridgeline_error_new(                                             \
          RIDGELINE_CODE_OUT_OF_RANGE,                                        \
          "plugin " family_                                                   \
          ": get_platform: index must be in [0, %zu), got %zu",               \
          RidgelineStaticPluginPlatformCount(), index);                       \
    }                                                                         \
    *out = &(platforms_)[index];                                              \
    return NULL;                                                              \
  }                                                                           \
                                                                              \
  static const RidgelinePluginTable kRidgelineStaticPluginTable = {           \
      .struct_size = sizeof(RidgelinePluginTable),                            \
      .abi_major = RIDGELINE_PLUGIN_ABI_MAJOR,                                \
      .abi_minor = RIDGELINE_PLUGIN_ABI_MINOR,                                \
      .family = "" family_ "",                                                \
      .plugin_version = "" version_ "",                                       \
      .init = RidgelineStaticPluginInit,                                      \
      .platform_count = RidgelineStaticPluginPlatformCount,                   \
      .get_platform = RidgelineStaticPluginGetPlatform,                       \
      .efficiency = NULL, /* no per-op model: the engine's defaults apply */  \
      .error_code = ridgeline_error_code,                                     \
      .error_message = ridgeline_error_message,                               \
      .error_free = ridgeline_error_free,                                     \
  };                                                                          \
                                                                              \
  RIDGELINE_PLUGIN_EXPORT const RidgelinePluginTable* ridgeline_plugin_entry( \
      void) {                                                                 \
    return &kRidgelineStaticPluginTable;                                      \
  }                                                                           \
  /* Redeclared so that the caller's trailing ';' ends a declaration. */      \
  RIDGELINE_PLUGIN_EXPORT const RidgelinePluginTable* ridgeline_plugin_entry( \
      void)

#endif /* RIDGELINE_PLUGINS_COMMON_RIDGELINE_STATIC_PLUGIN_H_ */

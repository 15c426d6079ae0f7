// Plugin isolation (issue 26, defect 7): a long-running server never runs
// plugin code in its own process. Each plugin file gets a plugin-host child
// process (the server's own binary started as `exe --plugin-host=<file>`)
// that loads it, calls init(), reads every platform, exercises the
// efficiency hook on sample shapes and sends the platform data back,
// serialized. The server validates that data like any plugin's and never
// dlopens the file:
// - A data-only plugin's host exits after the load.
// - A plugin with an efficiency hook keeps its host: the server's hook sends
//   each op shape to it and waits at most `call_timeout_seconds`. Answers
//   are cached by (platform, op shape), so repeated shapes cost a lock-free
//   hash lookup instead of a round trip.
// - A host that crashes or times out is killed and restarted (the call is
//   retried on the new one); after `max_failures` such failures in a row the
//   plugin is marked failed: its platforms answer UNAVAILABLE naming it
//   (PluginContents::health), the other plugins keep serving.
// - A load that crashes, exits or takes longer than `load_timeout_seconds`
//   refuses the plugin with the reason; `cancelled` ends the wait at once
//   (SIGTERM during a load).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>

#include "absl/status/status.h"
#include "ridgeline/plugin_host/plugin_library.h"

namespace ridgeline::plugin_host {

struct HostOptions {
  // Started as `exe --plugin-host=<plugin>`; it must call RunPluginHostChild
  // for that flag (ridgeline-server does).
  std::filesystem::path exe;
  double load_timeout_seconds = 10;  // entry point + init + platforms + check
  double call_timeout_seconds = 5;   // one efficiency hook call
  int max_failures = 3;              // crashes/timeouts in a row -> failed
  // Hook answers cached per plugin (64 B each, resident as used); once
  // full, new shapes are asked of the host every time.
  size_t cache_entries = size_t{1} << 18;
  std::function<bool()> cancelled;  // may be empty; polled during loads
};

// The flag the child is started with.
inline constexpr char kPluginHostFlag[] = "--plugin-host=";

// The registry's PluginReader for hosted plugins: starts `plugin`'s host
// and fills `out` (hooks call the host; `out->health` reports a failed
// host). Errors are FAILED_PRECONDITION with the reason: the plugin's own
// load error, "crashed with signal 11 (...) while loading and checking it
// ...", "did not finish loading and checking within 10 s ...", or that the
// host could not start. Thread-safe.
absl::Status ReadPluginHosted(const std::filesystem::path& plugin,
                              const HostOptions& options, PluginContents* out);

// The child's side, on the socket at file descriptor 0: loads `plugin`,
// answers the load, then hook calls until the parent closes the socket.
// Returns the process exit code.
int RunPluginHostChild(const std::filesystem::path& plugin);

}  // namespace ridgeline::plugin_host

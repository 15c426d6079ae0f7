// Plugin fault isolation (issue 14, defect 6): before a long-running server
// loads a plugin into its own process, a child process loads it, converts
// and validates every platform and calls its efficiency hook on sample
// shapes. A plugin that crashes (segfault, abort) or hangs there, in its
// entry point, init() or hook, is refused with a reason instead of taking
// the server down or keeping it NOT_SERVING.
#pragma once

#include <filesystem>
#include <string>

namespace ridgeline::plugin_host {

// How the parent runs the child: `exe` is started as
// `exe --check-plugin=<plugin>` (the server binary handles that flag with
// RunPluginCheckChild) and killed after `timeout_seconds`.
struct ChildCheck {
  std::filesystem::path exe;
  double timeout_seconds = 10;
};

// "" when the child finished (whether or not the plugin is valid: the
// in-process load then reports its own outcome); otherwise why the plugin
// must not be loaded: "crashed with signal 11 (Segmentation fault) ...",
// "did not finish ... within 10 s ...", or that the child could not start.
std::string CheckPluginInChild(const std::filesystem::path& plugin,
                               const ChildCheck& check);

// The child's side: loads `plugin` and exercises it as described above.
// Returns the process exit code (0: finished).
int RunPluginCheckChild(const std::filesystem::path& plugin);

// The flag the child is started with.
inline constexpr char kCheckPluginFlag[] = "--check-plugin=";

}  // namespace ridgeline::plugin_host

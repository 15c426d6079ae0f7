// ridgeline-server: the Ridgeline gRPC service. See --help.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ridgeline/plugin_host/hosted_plugin.h"
#include "ridgeline/service/server.h"

int main(int argc, char** argv) {
  // A plugin's host process, which the server runs as a child of itself.
  const std::string_view flag = ridgeline::plugin_host::kPluginHostFlag;
  if (argc == 2 && std::string_view(argv[1]).substr(0, flag.size()) == flag) {
    return ridgeline::plugin_host::RunPluginHostChild(argv[1] + flag.size());
  }
  bool help = false;
  absl::StatusOr<ridgeline::service::ServerConfig> config =
      ridgeline::service::ParseServerConfig(
          argc, argv, [](const char* name) { return std::getenv(name); },
          &help);
  if (!config.ok()) {
    std::fprintf(stderr, "ridgeline-server: %s\n",
                 std::string(config.status().message()).c_str());
    return 2;
  }
  if (help) {
    std::fputs(ridgeline::service::ServerUsage().c_str(), stdout);
    return 0;
  }
  return ridgeline::service::RunServer(*config);
}

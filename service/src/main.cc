// ridgeline-server: the Ridgeline gRPC service. See --help.
#include <cstdio>
#include <cstdlib>

#include "ridgeline/service/server.h"

int main(int argc, char** argv) {
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

// The plugin-host child for the hosted-plugin tests: what ridgeline-server
// does with --plugin-host=, without the server.
#include <string_view>

#include "ridgeline/plugin_host/hosted_plugin.h"

int main(int argc, char** argv) {
  const std::string_view flag = ridgeline::plugin_host::kPluginHostFlag;
  if (argc == 2 && std::string_view(argv[1]).substr(0, flag.size()) == flag) {
    return ridgeline::plugin_host::RunPluginHostChild(argv[1] + flag.size());
  }
  return 2;
}

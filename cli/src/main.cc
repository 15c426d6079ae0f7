#include <iostream>
#include <string>
#include <vector>

#include "ridgeline/cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ridgeline::cli::RunCli(args, std::cout, std::cerr);
}

// splitscope's entry point; the command itself is run_cli (src/cli/main.cpp).

#include "cli/run_cli.hpp"

int main(int argc, char** argv) { return splitscope::cli::run_cli(argc, argv); }

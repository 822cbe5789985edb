// ansor-gen: the command-line front end of the generator library (see driver/cli.h).
#include <iostream>

#include "driver/cli.h"

int main(int argc, char** argv) { return ansor::run_cli(argc, argv, std::cout, std::cerr); }

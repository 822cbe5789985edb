// ansor-gen: the subcommands of driver/commands/ under one command line, with one handling of
// errors for all of them.
#include "driver/cli.h"

#include <ostream>

#include "driver/commands/subcommand.h"
#include "support/version.h"

namespace ansor {

namespace {

constexpr int kExitBadInput = 1;
constexpr int kExitMisuse = 2;

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"ansor-gen: generates tuned tensor kernels from kernels.def"};
  app.set_version_flag("--version", std::string("ansor-gen ") + kGeneratorVersion);
  app.require_subcommand(1);

  cli::Input input;
  const std::vector<cli::Subcommand> subcommands = {
      cli::add_check(app, input),     cli::add_list(app, input),      cli::add_emit(app, input),  cli::add_tune(app, input),
      cli::add_sketch(app, input),    cli::add_configure(app, input), cli::add_lower(app, input), cli::add_features(app, input),
      cli::add_cache(app, input)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success) ? 0 : kExitMisuse;
  }

  try {
    for (const cli::Subcommand& subcommand : subcommands)
      if (subcommand.app->parsed()) subcommand.run(out);
  } catch (const CompileError& e) {
    err << e.render() << "\n";
    return kExitBadInput;
  } catch (const cli::UsageError& e) {
    err << "ansor-gen: " << e.what() << "\n";
    return kExitMisuse;
  } catch (const std::exception& e) {
    err << "ansor-gen: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  return 0;
}

}  // namespace ansor

// The `scaleup` command: writes captures of every encapsulation and of packed traffic, and
// dissects captures with the library's dissection engine. Each subcommand declares its command
// line in its own file (CLI11); help is generated from the declarations.
#include <cstdio>
#include <memory>
#include <string>

#include "cli.hpp"
#include "scaleup/dissect/hash_key.hpp"

namespace scaleup::cli {

namespace {

constexpr std::string_view version = "0.1.0";

// "scaleup gen basic": the names from the root down.
std::string path_of(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent ? path_of(*parent) + " " + app.get_name() : std::string("scaleup");
}

// The deepest subcommand the command line reached.
const CLI::App& reached(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return reached(*sub);
  return app;
}

// Help and usage lines as the rest of the tool writes them: "usage:".
const std::shared_ptr<CLI::Formatter> usage_formatter = [] {
  auto p = std::make_shared<CLI::Formatter>();
  p->label("Usage", "usage");
  return p;
}();
const std::shared_ptr<CLI::Formatter>& formatter() { return usage_formatter; }

// The usage line only, not the whole help.
std::string usage_line(const CLI::App& app) {
  std::string u = formatter()->make_usage(&app, path_of(app));
  while (!u.empty() && (u.front() == '\n' || u.front() == ' ')) u.erase(0, 1);
  while (!u.empty() && u.back() == '\n') u.pop_back();
  return u;
}

}  // namespace

int fail_usage(const CLI::App& app, const std::string& message) {
  const std::string path = path_of(app);
  const std::string command = path == "scaleup" ? "" : path.substr(8) + ": ";
  fmt::print(stderr, "scaleup: {}{}\n{}\nRun '{} --help' for more.\n", command, message,
             usage_line(app), path);
  return 2;
}

}  // namespace scaleup::cli

int main(int argc, char** argv) {
  using namespace scaleup::cli;
  // The tables of flows and connections are keyed by it (dissect/hash_key.hpp): drawn now, before
  // any thread that reads a capture makes one.
  scaleup::dissect::process_hash_key();
  CLI::App app("Writes and dissects captures of Scale-Up Ethernet and its relatives.", "scaleup");
  app.formatter(formatter());  // before the subcommands, which take it over
  app.require_subcommand(1);
  app.set_version_flag("--version", "scaleup " + std::string(version));
  app.footer("exit status: 0 done, 1 a file could not be read or written, 2 usage error");
  commands all;
  CLI::App* gen = app.add_subcommand("gen", "Write a capture of generated or simulated traffic");
  gen->require_subcommand(1);
  add_gen_basic(*gen, all);
  add_gen_traffic(*gen, all);
  add_gen_session(*gen, all);
  add_gen_tofu(*gen, all);
  add_gen_rdma(*gen, all);
  add_dump(app, all);
  add_stats(app, all);
  add_check(app, all);
  // `scaleup help` as `scaleup --help`.
  if (argc == 2 && std::string_view(argv[1]) == "help") {
    fmt::print("{}", app.help());
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail_usage(reached(app), e.what());
  }
  for (const auto& c : all)
    if (c.app->parsed()) return c.run();
  return fail_usage(app, "a command is needed");
}

// The one translation unit that compiles CLI11 (tools/cli.h says why).
#include "tools/cli.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <utility>

namespace atrace::tools::cli {

Option& Option::capture_default() {
  option_->capture_default_str();
  return *this;
}

Option& Option::default_text(const std::string& text) {
  option_->default_str(text);
  return *this;
}

Option& Option::required() {
  option_->required();
  return *this;
}

Option& Option::type_name(const std::string& name) {
  option_->type_name(name);
  return *this;
}

Option& Option::needs(Option other) {
  option_->needs(other.option_);
  return *this;
}

Option& Option::excludes(Option other) {
  option_->excludes(other.option_);
  return *this;
}

Option& Option::one_of(std::initializer_list<const char*> values) {
  option_->check(CLI::IsMember(values));
  return *this;
}

Option& Option::range(double min, double max) {
  option_->check(CLI::Range(min, max));
  return *this;
}

Option& Option::positive() {
  option_->check(CLI::PositiveNumber);
  return *this;
}

Command Command::subcommand(const std::string& name, const std::string& description) {
  return Command(app_->add_subcommand(name, description));
}

Option Command::option(const std::string& name, std::string& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}

Option Command::option(const std::string& name, std::vector<std::string>& value,
                       const std::string& help) {
  return Option(app_->add_option(name, value, help));
}

Option Command::option(const std::string& name, int& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}

Option Command::option(const std::string& name, double& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}

Option Command::flag(const std::string& name, bool& value, const std::string& help) {
  return Option(app_->add_flag(name, value, help));
}

std::optional<Option> Command::find(const std::string& name) const {
  if (CLI::Option* o = app_->get_option_no_throw(name)) return Option(o);
  return std::nullopt;
}

bool Command::given(const std::string& name) const { return app_->get_option(name)->count() > 0; }

void Command::footer(const std::string& text) { app_->footer(text); }

void Command::positionals_at_end() { app_->positionals_at_end(); }

void Command::callback(std::function<void()> run) { app_->callback(std::move(run)); }

CommandLine::CommandLine(const std::string& description, const std::string& version)
    : app_(std::make_unique<CLI::App>(description)) {
  app_->set_version_flag("--version", version);
  app_->require_subcommand(1);
}

CommandLine::~CommandLine() = default;

Command CommandLine::root() { return Command(app_.get()); }

std::optional<int> CommandLine::parse(int argc, char** argv) {
  CLI::App& app = *app_;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "atrace: %s (see atrace --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "atrace: %s\n", e.what());
    return 1;
  }
  return std::nullopt;
}

}  // namespace atrace::tools::cli

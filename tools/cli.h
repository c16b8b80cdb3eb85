// The command line of atrace, over CLI11: the only header the subcommands
// see. CLI11 2.1 (Debian 12) is header-only and heavy to compile; here it is
// compiled once, in tools/cli.cpp, and the subcommands (cmd_*.cpp) add their
// options through these thin handles, which forward each call unchanged, so
// the options, their help text and CLI11's error messages stay CLI11's.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace atrace::tools::cli {

// The values an option takes, for the bash completion: `atrace __values`
// prints them (CommandLine::parse), cmake/bash_completion.sh builds the
// completion from that, so the lists are the ones the tool checks against.
struct ValueList {
  std::vector<std::string> names;
  bool list = false;   // comma-separated, several of them (--fields=calls,self)
  bool signs = false;  // an item may also be +NAME or -NAME (--kernel=+syscalls)
};
using ValueTable = std::map<const CLI::Option*, ValueList>;

// An option of a command (a CLI::Option*); the setters return it again for
// chaining, as CLI11's do.
class Option {
 public:
  Option(CLI::Option* option, ValueTable* values) : option_(option), values_(values) {}

  Option& capture_default();                      // capture_default_str()
  Option& default_text(const std::string& text);  // default_str(text)
  Option& required();
  // The option may be given without a value (`--flows`), which then is
  // `bare` (`--flows=thread` still takes one).
  Option& value_optional(const std::string& bare);
  Option& type_name(const std::string& name);
  Option& needs(Option other);
  Option& excludes(Option other);
  // Checks: CLI::IsMember(values); a number from min to max, or at least
  // min (their messages say so in words: "must be at least 1").
  // (one_of's values are also what the completion offers.)
  Option& one_of(std::initializer_list<const char*> values);
  Option& range(double min, double max);
  Option& at_least(double min);
  // What the completion offers for an option that checks its value itself
  // (after parsing): `names` ", "- or ","-separated, as messages list them.
  Option& completes(const std::string& names, bool list, bool signs = false);

 private:
  CLI::Option* option_;
  ValueTable* values_;
};

// A command or subcommand (a CLI::App*, owned by its parent or CommandLine).
class Command {
 public:
  Command(CLI::App* app, ValueTable* values) : app_(app), values_(values) {}

  Command subcommand(const std::string& name, const std::string& description);
  Option option(const std::string& name, std::string& value, const std::string& help);
  Option option(const std::string& name, std::vector<std::string>& value, const std::string& help);
  Option option(const std::string& name, int& value, const std::string& help);
  Option option(const std::string& name, double& value, const std::string& help);
  Option flag(const std::string& name, bool& value, const std::string& help);
  // A flag that may carry a value: "--fast-path{all}" is "all" when given
  // bare, "--fast-path=hot" is "hot"; never the next word (a flag takes no
  // separate value), so `record --fast-path CMD` keeps CMD a command.
  Option flag(const std::string& name, std::string& value, const std::string& help);
  // The option named `name` ("--syscalls"), if the command has one.
  std::optional<Option> find(const std::string& name) const;
  // Whether `name` (an option of this command) was on the command line.
  bool given(const std::string& name) const;
  void footer(const std::string& text);
  void positionals_at_end();
  void callback(std::function<void()> run);

 private:
  CLI::App* app_;
  ValueTable* values_;
};

// The whole command line: owns the CLI11 app.
class CommandLine {
 public:
  // -V/--version prints "atrace VERSION", then what `details` returns
  // (asked only then: it may take time).
  CommandLine(const std::string& description, const std::string& version,
              const std::function<std::string()>& details = {});
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  Command root();
  // Parses argv and runs the callback of the subcommand given. Returns the
  // exit status when the command line alone ends the program (--help,
  // --version, a parse error printed as one line) or a callback threw (its
  // message printed); nullopt when the subcommand ran. `atrace __values`
  // (hidden: for cmake/bash_completion.sh) prints each option's values,
  // one option a line: "SUBCOMMAND OPTION one|list|signed VALUE...".
  std::optional<int> parse(int argc, char** argv);

 private:
  void print_values() const;

  std::unique_ptr<CLI::App> app_;
  ValueTable values_;
};

}  // namespace atrace::tools::cli

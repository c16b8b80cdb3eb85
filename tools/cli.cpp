// The one translation unit that compiles CLI11 (tools/cli.h says why).
#include "tools/cli.h"

#include <optional>

#include <vector>

#include <cstdint>

#include <algorithm>

#include <CLI/CLI.hpp>

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <utility>

#include "base/diagnostics.h"
#include "tools/option_values.h"

namespace atrace::tools::cli {

namespace {

// Help as a person writes it: "--sort KEYS" and "(default: total)" at the
// end of the description, not CLI11's "TEXT:{a,b}=total" or
// "FLOAT:POSITIVE", whose checks say what they accept in their messages.
class HelpFormatter : public CLI::Formatter {
  static std::string upper_name(const CLI::Option* opt) {
    std::string name;
    for (char c : opt->get_single_name()) name += static_cast<char>(std::toupper(c));
    return name;
  }

 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    // A flag that may carry a value ("--fast-path{all}").
    if (CLI::Formatter::make_option_name(opt, false).find('{') != std::string::npos)
      return " [=" + upper_name(opt) + "]";
    if (opt->get_type_size() == 0) return "";
    std::string type = opt->get_type_name();
    type = type.substr(0, type.find(':'));
    if (type == "INT" || type == "UINT") type = "N";
    if (type == "FLOAT") type = "NUMBER";
    if (type == "TEXT") type = upper_name(opt);  // as argparse does: --buffer-size BUFFER-SIZE
    return " " + type;
  }
  // A flag that may carry a value ("--fast-path{all}") is listed
  // "--fast-path [=FAST-PATH]": the name alone before the first space, which
  // is where cmake/bash_completion.sh and the man pages take it.
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    const size_t open = name.find('{'), close = name.find('}');
    if (open == std::string::npos || close == std::string::npos || close < open) return name;
    return name.substr(0, open) + name.substr(close + 1);
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (opt->get_required()) desc += " (required)";
    if (!opt->get_default_str().empty()) desc += " (default: " + opt->get_default_str() + ")";
    return desc;
  }
};

// A number check worded as option_values.h words every number.
CLI::Validator number_check(double min, double max, bool above_min) {
  return CLI::Validator(
      [=](std::string& text) { return number_problem(text, min, max, above_min); }, "");
}

// An int option's value: a whole number as option_values.h words it, not
// CLI11's "Could not convert: --pid = 1,2".
CLI::Validator whole_number_check() {
  return CLI::Validator([](std::string& text) { return count_problem(text, INT_MAX); }, "");
}

}  // namespace

Option& Option::capture_default() {
  option_->capture_default_str();
  return *this;
}

Option& Option::default_text(const std::string& text) {
  option_->default_str(text);
  return *this;
}

Option& Option::value_optional(const std::string& bare) {
  option_->expected(0, 1)->default_str(bare);
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
  ValueList& v = (*values_)[option_];
  v.names.assign(values.begin(), values.end());
  return *this;
}

Option& Option::range(double min, double max) {
  option_->check(number_check(min, max, false));
  return *this;
}

Option& Option::at_least(double min) {
  option_->check(number_check(min, HUGE_VAL, false));
  return *this;
}

Option& Option::completes(const std::string& names, bool list, bool signs) {
  ValueList& v = (*values_)[option_];
  v.names.clear();
  v.list = list;
  v.signs = signs;
  std::string name;
  for (char c : names + ",") {
    if (c != ',' && c != ' ') {
      name += c;
    } else if (!name.empty()) {
      v.names.push_back(name);
      name.clear();
    }
  }
  return *this;
}

Command Command::subcommand(const std::string& name, const std::string& description) {
  return Command(app_->add_subcommand(name, description), values_);
}

Option Command::option(const std::string& name, std::string& value, const std::string& help) {
  return Option(app_->add_option(name, value, help), values_);
}

Option Command::option(const std::string& name, std::vector<std::string>& value,
                       const std::string& help) {
  return Option(app_->add_option(name, value, help), values_);
}

Option Command::option(const std::string& name, int& value, const std::string& help) {
  return Option(app_->add_option(name, value, help)->check(whole_number_check()), values_);
}

Option Command::option(const std::string& name, double& value, const std::string& help) {
  return Option(app_->add_option(name, value, help), values_);
}

Option Command::flag(const std::string& name, bool& value, const std::string& help) {
  return Option(app_->add_flag(name, value, help), values_);
}

Option Command::flag(const std::string& name, std::string& value, const std::string& help) {
  return Option(app_->add_flag(name, value, help), values_);
}

std::optional<Option> Command::find(const std::string& name) const {
  if (CLI::Option* o = app_->get_option_no_throw(name)) return Option(o, values_);
  return std::nullopt;
}

bool Command::given(const std::string& name) const { return app_->get_option(name)->count() > 0; }

void Command::footer(const std::string& text) { app_->footer(text); }

void Command::positionals_at_end() { app_->positionals_at_end(); }

void Command::callback(std::function<void()> run) { app_->callback(std::move(run)); }

CommandLine::CommandLine(const std::string& description, const std::string& version,
                         const std::function<std::string()>& details)
    : app_(std::make_unique<CLI::App>(description)) {
  app_->set_version_flag(
      "-V,--version",
      [version, details] {
        std::string text = "atrace " + version;
        if (details) text += "\n" + details();
        // CLI11 ends it with a newline.
        while (!text.empty() && text.back() == '\n') text.pop_back();
        return text;
      },
      "Print the version, then what the running kernel offers atrace and what atrace does "
      "without each missing feature");
  app_->require_subcommand(1);
  app_->formatter(std::make_shared<HelpFormatter>());
}

CommandLine::~CommandLine() = default;

Command CommandLine::root() { return Command(app_.get(), &values_); }

void CommandLine::print_values() const {
  for (const CLI::App* sub : app_->get_subcommands({}))
    for (const CLI::Option* opt : sub->get_options()) {
      auto found = values_.find(opt);
      if (found == values_.end()) continue;
      const ValueList& v = found->second;
      std::string names;
      for (const std::string& l : opt->get_lnames()) names += (names.empty() ? "--" : "|--") + l;
      for (const std::string& s : opt->get_snames()) names += (names.empty() ? "-" : "|-") + s;
      std::printf("%s %s %s", sub->get_name().c_str(), names.c_str(),
                  v.signs  ? "signed"
                  : v.list ? "list"
                           : "one");
      for (const std::string& n : v.names) std::printf(" %s", n.c_str());
      std::printf("\n");
    }
}

namespace {

// Edits (insert, delete, replace, swap two neighbours) from a to b: how
// far a typo is from a subcommand.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// "unknown subcommand 'reprot': did you mean 'report'?" for a first word
// that names no subcommand (CLI11 would say only that one is required).
std::optional<std::string> unknown_subcommand(const CLI::App& app, const std::string& word) {
  if (word.empty() || word[0] == '-') return std::nullopt;
  std::string names, nearest;
  size_t best = SIZE_MAX;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == word) return std::nullopt;
    names += (names.empty() ? "" : ", ") + sub->get_name();
    const size_t d = edit_distance(word, sub->get_name());
    if (d < best) best = d, nearest = sub->get_name();
  }
  std::string line = "unknown subcommand '" + word + "'";
  if (best <= 2) line += ": did you mean '" + nearest + "'?";
  return line + " (subcommands: " + names + ")";
}

}  // namespace

std::optional<int> CommandLine::parse(int argc, char** argv) {
  CLI::App& app = *app_;
  if (argc == 2 && std::string(argv[1]) == "__values") {
    print_values();
    return 0;
  }
  if (argc > 1) {
    if (auto unknown = unknown_subcommand(app, argv[1])) {
      base::error("%s", unknown->c_str());
      return 2;
    }
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
    // The help that says what was wrong: the subcommand's, once it is known.
    std::string help = "atrace";
    for (const CLI::App* sub : app.get_subcommands()) help += " " + sub->get_name();
    base::error("%s (see %s --help)", e.what(), help.c_str());
    return 2;
  } catch (const std::exception& e) {
    base::error("%s", e.what());
    return 1;
  }
  return std::nullopt;
}

}  // namespace atrace::tools::cli

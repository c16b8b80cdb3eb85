// The one translation unit that compiles CLI11 (tools/cli.h says why).
#include "tools/cli.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <utility>

namespace atrace::tools::cli {

namespace {

// Help as a person writes it: "--sort KEYS" and "(default: total)" at the
// end of the description, not CLI11's "TEXT:{a,b}=total" or
// "FLOAT:POSITIVE", whose checks say what they accept in their messages.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";
    std::string type = opt->get_type_name();
    type = type.substr(0, type.find(':'));
    if (type == "INT" || type == "UINT") type = "N";
    if (type == "FLOAT") type = "NUMBER";
    if (type == "TEXT") {  // as argparse does: --buffer-size BUFFER-SIZE
      type.clear();
      for (char c : opt->get_single_name()) type += static_cast<char>(std::toupper(c));
    }
    return " " + type;
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (opt->get_required()) desc += " (required)";
    if (!opt->get_default_str().empty()) desc += " (default: " + opt->get_default_str() + ")";
    return desc;
  }
};

std::string show(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A number check whose message says what is accepted, in words.
CLI::Validator number_check(double min, double max, bool above_min) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        char* end = nullptr;
        v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v))
          return "'" + text + "' is not a number";
        if (above_min && v <= min) return "must be above " + show(min);
        if (v < min && max == HUGE_VAL) return "must be at least " + show(min);
        if (v < min || v > max) return "must be from " + show(min) + " to " + show(max);
        return "";
      },
      "");
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
  option_->check(number_check(min, max, false));
  return *this;
}

Option& Option::at_least(double min) {
  option_->check(number_check(min, HUGE_VAL, false));
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
    // The help that says what was wrong: the subcommand's, once it is known.
    std::string help = "atrace";
    for (const CLI::App* sub : app.get_subcommands()) help += " " + sub->get_name();
    std::fprintf(stderr, "atrace: %s (see %s --help)\n", e.what(), help.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "atrace: %s\n", e.what());
    return 1;
  }
  return std::nullopt;
}

}  // namespace atrace::tools::cli

#include "uprobes/value_spec.h"

#include <cctype>

namespace atrace::uprobes {

namespace {

// ';'-separated items, spaces around them ignored, empty ones skipped.
std::vector<std::string> items(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(';', start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
    start = end + 1;
  }
  return out;
}

std::vector<Selector> selectors_of(const std::string& text, const std::string& option,
                                   const std::string& item) {
  if (text.empty()) throw ValueSpecError(option + ": '" + item + "' has no function selector");
  try {
    return parse_selectors(text);
  } catch (const SelectorError& e) {
    throw ValueSpecError(option + ": " + e.what());
  }
}

// "argN[/TYPE]"
ArgSpec parse_arg(const std::string& text, const std::string& item) {
  const std::string context = "--args: '" + item + "'";
  size_t slash = text.find('/');
  std::string reg = text.substr(0, slash);
  ArgSpec a;
  if (reg.size() != 4 || reg.compare(0, 3, "arg") != 0 || reg[3] < '1' ||
      reg[3] > '0' + formats::kMaxFuncArgs)
    throw ValueSpecError(context + ": '" + reg +
                         "' is not an argument register (arg1 to arg6: the x86-64 integer "
                         "argument registers)");
  a.slot = static_cast<uint8_t>(reg[3] - '0');
  if (slash != std::string::npos) a.type = parse_value_type(text.substr(slash + 1), context);
  return a;
}

}  // namespace

ValueType parse_value_type(const std::string& text, const std::string& context) {
  ValueType t;
  auto bad = [&] {
    return ValueSpecError(context + ": unknown type '" + text +
                          "' (i8..i64, u8..u64, x8..x64, i, u, x, p, s)");
  };
  // Floating-point values travel in the XMM registers. A uprobe's program
  // sees the trap's pt_regs, which hold only the integer registers; the
  // vector registers are still live in the CPU (saved to the task only at a
  // switch), and no BPF helper reads them (docs/arguments.md).
  if (text == "f" || text == "d" || text == "f32" || text == "f64")
    throw ValueSpecError(context + ": floating-point values ('" + text +
                         "') cannot be recorded: they travel in XMM registers, which uprobe "
                         "programs cannot read");
  if (text == "s") {
    t.is_string = true;
    t.is_signed = false;
    t.size = 8;
    return t;
  }
  if (text == "p") {
    t.is_signed = false;
    t.format = formats::ArgFormat::Pointer;
    return t;
  }
  if (text.empty() || (text[0] != 'i' && text[0] != 'u' && text[0] != 'x')) throw bad();
  t.is_signed = text[0] == 'i';
  if (text[0] == 'x') t.format = formats::ArgFormat::Hex;
  const std::string bits = text.substr(1);
  if (bits.empty() || bits == "64") t.size = 8;
  else if (bits == "32") t.size = 4;
  else if (bits == "16") t.size = 2;
  else if (bits == "8") t.size = 1;
  else throw bad();
  return t;
}

std::vector<ValueRule> parse_arg_rules(const std::string& list) {
  std::vector<ValueRule> rules;
  for (const auto& item : items(list)) {
    size_t at = item.rfind('@');
    if (at == std::string::npos || at + 1 == item.size())
      throw ValueSpecError("--args: '" + item +
                           "' is not SELECTOR@ARG[/TYPE],... (e.g. parse@arg1/s)");
    ValueRule r;
    r.text = item;
    r.selectors = selectors_of(item.substr(0, at), "--args", item);
    unsigned strings = 0;
    std::string rest = item.substr(at + 1);
    if (rest == "auto") {
      r.auto_args = true;
      rules.push_back(std::move(r));
      continue;
    }
    size_t start = 0;
    while (start <= rest.size()) {
      size_t end = rest.find(',', start);
      if (end == std::string::npos) end = rest.size();
      std::string one = rest.substr(start, end - start);
      size_t a = one.find_first_not_of(' '), b = one.find_last_not_of(' ');
      if (a == std::string::npos)
        throw ValueSpecError("--args: '" + item + "' has an empty argument");
      ArgSpec spec = parse_arg(one.substr(a, b - a + 1), item);
      for (const auto& prev : r.args)
        if (prev.slot == spec.slot)
          throw ValueSpecError("--args: '" + item + "' names arg" + std::to_string(spec.slot) +
                               " twice");
      if (spec.type.is_string && ++strings > kMaxStringArgs)
        throw ValueSpecError("--args: '" + item + "': at most " + std::to_string(kMaxStringArgs) +
                             " string arguments per function");
      r.args.push_back(spec);
      start = end + 1;
    }
    rules.push_back(std::move(r));
  }
  return rules;
}

// The type is what follows the last '/' when that is not part of a module
// path ("/usr/lib/libz.so.1:deflate" has none).
std::vector<ValueRule> parse_retval_rules(const std::string& list) {
  std::vector<ValueRule> rules;
  for (const auto& item : items(list)) {
    ValueRule r;
    r.text = item;
    r.has_retval = true;
    std::string sel = item;
    size_t slash = item.rfind('/');
    if (slash != std::string::npos && item.find(':', slash) == std::string::npos &&
        item.find('.', slash) == std::string::npos) {
      sel = item.substr(0, slash);
      r.retval = parse_value_type(item.substr(slash + 1), "--retval: '" + item + "'");
    }
    r.selectors = selectors_of(sel, "--retval", item);
    rules.push_back(std::move(r));
  }
  return rules;
}

}  // namespace atrace::uprobes

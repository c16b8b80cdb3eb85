#include "uprobes/usdt_select.h"

#include <fnmatch.h>

#include <map>
#include <set>

#include "uprobes/build_id.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/selector.h"

namespace atrace::uprobes {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "a:b,c:d(str,int)" -> items, commas inside parentheses kept.
std::vector<std::string> split_items(const std::string& list) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : list) {
    if (c == '(') depth++;
    if (c == ')') depth--;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(trim(cur));
  return out;
}

// What a spec is, for the errors that say what was expected instead.
constexpr const char* kForms = "expected provider:name or MODULE:provider:name, e.g. app:request";

UsdtSpec parse_one(const std::string& item) {
  auto bad = [&](const std::string& why) {
    return SelectorError("bad USDT spec '" + item + "': " + why);
  };
  UsdtSpec s;
  s.text = item;
  std::string probe = item;
  if (size_t open = item.find('('); open != std::string::npos) {
    if (item.back() != ')') throw bad("the argument types end with ')'");
    probe = item.substr(0, open);
    s.typed = true;
    std::string types = item.substr(open + 1, item.size() - open - 2);
    size_t i = 0, strings = 0;
    for (const auto& raw : split_items(types)) {
      std::string t = trim(raw);
      if (t == "str" || t == "string") {
        if (i >= kUsdtMaxArgs)
          throw bad("only the first " + std::to_string(kUsdtMaxArgs) + " arguments are recorded");
        if (++strings > kUsdtMaxStrings)
          throw bad("at most " + std::to_string(kUsdtMaxStrings) + " string arguments");
        s.string_mask |= 1u << i;
      } else if (!t.empty() && t != "int" && t != "-") {
        throw bad("unknown argument type '" + t + "' (str or int)");
      }
      i++;
    }
  }
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t c; (c = probe.find(':', start)) != std::string::npos; start = c + 1)
    parts.push_back(probe.substr(start, c - start));
  parts.push_back(probe.substr(start));
  if (parts.size() == 2) {
    s.provider_glob = parts[0];
    s.name_glob = parts[1];
  } else if (parts.size() == 3) {
    s.module_glob = parts[0];
    s.provider_glob = parts[1];
    s.name_glob = parts[2];
  } else {
    throw bad(kForms);
  }
  for (const auto& p : parts)
    if (trim(p).empty()) throw bad(std::string("empty part (") + kForms + ")");
  return s;
}

bool glob(const std::string& pattern, const std::string& s) {
  return fnmatch(pattern.c_str(), s.c_str(), 0) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "app:a, app:b, ..." (the first few distinct probes of a module).
std::string probe_names(const std::vector<UsdtProbe>& probes) {
  std::set<std::string> names;
  for (const auto& p : probes) names.insert(p.provider + ":" + p.name);
  std::string out;
  size_t shown = 0;
  for (const auto& n : names) {
    if (shown++ == 8) {
      out += ", ...";
      break;
    }
    out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}

}  // namespace

bool UsdtTarget::has_semaphore() const {
  for (const auto& s : sites)
    if (s.semaphore) return true;
  for (const auto& s : end_sites)
    if (s.semaphore) return true;
  return false;
}

std::vector<UsdtSpec> parse_usdt_specs(const std::string& list) {
  std::vector<UsdtSpec> out;
  if (trim(list).empty()) return out;
  for (const auto& item : split_items(list)) {
    if (item.empty()) throw SelectorError("bad USDT spec list '" + list + "': empty item");
    out.push_back(parse_one(item));
  }
  return out;
}

std::vector<UsdtTarget> resolve_usdt(const std::vector<UsdtSpec>& specs,
                                     const std::vector<Module>& modules, uint32_t first_id) {
  std::vector<UsdtTarget> out;
  uint32_t next_id = first_id;
  for (const auto& m : modules) {
    std::vector<const UsdtSpec*> wanted;
    for (const auto& s : specs)
      if (s.module_selector().matches_module(m.name, m.path, m.is_main)) wanted.push_back(&s);
    if (wanted.empty()) continue;
    std::vector<UsdtProbe> notes;
    try {
      notes = read_usdt_probes(m.path);
    } catch (const ElfError&) {
      if (m.is_main) throw;
      continue;  // a library glob may cover unreadable files; a miss is reported below
    }
    // (provider, name) -> sites, and the spec that chose it, in note order.
    std::map<std::pair<std::string, std::string>, std::vector<UsdtProbe>> chosen;
    std::map<std::pair<std::string, std::string>, uint32_t> masks;
    std::vector<std::pair<std::string, std::string>> order;
    for (const auto& n : notes) {
      // The first spec that gives the probe's argument types, otherwise the
      // first that names it: `app:*,app:request(str,int)` reads request's
      // first argument as a string whatever the order.
      const UsdtSpec* spec = nullptr;
      for (const auto* s : wanted) {
        if (!glob(s->provider_glob, n.provider) || !glob(s->name_glob, n.name)) continue;
        if (!spec || (s->typed && !spec->typed)) spec = s;
      }
      if (!spec) continue;
      auto key = std::make_pair(n.provider, n.name);
      if (!chosen.count(key)) order.push_back(key);
      chosen[key].push_back(n);
      masks[key] |= spec->string_mask;
    }
    std::string build_id = chosen.empty() ? "" : read_build_id(m.path);
    std::set<std::pair<std::string, std::string>> paired;
    for (const auto& key : order) {
      if (paired.count(key)) continue;
      UsdtTarget t;
      t.provider = key.first;
      t.module = m.name;
      t.path = m.path;
      t.build_id = build_id;
      t.string_mask = masks[key];
      t.sites = chosen[key];
      t.name = key.second;
      // NAME__begin with its NAME__end selected too: one interval.
      if (ends_with(key.second, "__begin")) {
        std::string base = key.second.substr(0, key.second.size() - 7);
        auto end = std::make_pair(key.first, base + "__end");
        if (chosen.count(end) && !paired.count(end)) {
          t.kind = formats::ProbeKind::Interval;
          t.name = base;
          t.end_sites = chosen[end];
          t.string_mask = 0;
          paired.insert(end);
        }
      } else if (ends_with(key.second, "__end")) {
        std::string base = key.second.substr(0, key.second.size() - 5);
        auto begin = std::make_pair(key.first, base + "__begin");
        if (chosen.count(begin)) continue;  // taken when its begin comes
      }
      t.id = next_id++;
      out.push_back(std::move(t));
    }
  }
  // Every spec must have found something, in some module.
  for (const auto& s : specs) {
    bool found = false;
    const Selector sel = s.module_selector();
    for (const auto& t : out) {
      bool module_ok = false;
      for (const auto& m : modules)
        if (m.path == t.path && sel.matches_module(m.name, m.path, m.is_main)) module_ok = true;
      auto matches = [&](const std::string& name) {
        return glob(s.provider_glob, t.provider) && glob(s.name_glob, name);
      };
      if (module_ok &&
          (matches(t.name) || (t.kind == formats::ProbeKind::Interval &&
                               (matches(t.name + "__begin") || matches(t.name + "__end")))))
        found = true;
    }
    if (found) continue;
    std::string where;
    std::vector<UsdtProbe> there;
    for (const auto& m : modules) {
      if (!sel.matches_module(m.name, m.path, m.is_main)) continue;
      where += (where.empty() ? "" : ", ") + m.name;
      try {
        auto n = read_usdt_probes(m.path);
        there.insert(there.end(), n.begin(), n.end());
      } catch (const ElfError&) {
      }
    }
    if (where.empty())
      throw NoMatchError("USDT spec '" + s.text + "': no loaded module matches '" + s.module_glob +
                         "'");
    std::string has = there.empty() ? "it has no USDT probes" : "it has " + probe_names(there);
    throw NoMatchError("USDT spec '" + s.text + "' matches no probe in " + where + " (" + has +
                       ")");
  }
  return out;
}

}  // namespace atrace::uprobes

// `record --usdt=SPECS`: which USDT probes to record, and how to read their
// arguments.
//
//   provider:name              in the main executable (globs allowed)
//   MODULE:provider:name       in a library, by file name or path glob
//   ...(str,int,...)           argument types by position: `str` reads the
//                              argument as the address of a NUL-terminated
//                              string; `int` (or empty) keeps the integer
//
// A probe several specs name takes its types from the first spec that
// gives types ("app:*,app:request(str,int)": request's are str and int).
//
// Probes named NAME__begin / NAME__end of one provider and module that are
// both selected become one interval probe "provider:NAME" (ATRACE_BEGIN /
// ATRACE_END of include/atrace/probe.h), recorded like a function call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "uprobes/proc_maps.h"
#include "uprobes/selector.h"
#include "uprobes/usdt_notes.h"

namespace atrace::uprobes {

// What a USDT record can carry (bpf/atrace.h's ATRACE_USDT_MAX_ARGS and
// ATRACE_USDT_MAX_STRS; record/record_decoder.cpp ties them): arguments
// recorded, and of those, string arguments copied.
inline constexpr unsigned kUsdtMaxArgs = 6;
inline constexpr unsigned kUsdtMaxStrings = 2;

struct UsdtSpec {
  std::string text;         // as written, for messages
  std::string module_glob;  // empty: the main executable
  std::string provider_glob, name_glob;
  uint32_t string_mask = 0;  // bit i: argument i is a string
  bool typed = false;        // written with "(types)": wins over an untyped spec of the probe
  // Its module part as a selector's: found, waited for and matched by the
  // one rule function selectors follow (docs/selectors.md).
  Selector module_selector() const { return Selector::of_module("USDT spec", text, module_glob); }
};

// Comma-separated specs; commas inside (...) belong to the types. Throws
// SelectorError naming the bad spec (empty part, unknown type, more than
// kUsdtMaxStrings strings).
std::vector<UsdtSpec> parse_usdt_specs(const std::string& list);

// One probe to attach: every site of (module, provider, name), or for an
// interval both the begin and the end probes.
struct UsdtTarget {
  uint32_t id = 0;
  formats::ProbeKind kind = formats::ProbeKind::Usdt;
  std::string provider, name;  // name without __begin/__end for an interval
  std::string module, path, build_id;
  uint32_t string_mask = 0;
  std::vector<UsdtProbe> sites;      // the probe's (an interval's begin) sites
  std::vector<UsdtProbe> end_sites;  // an interval's end sites
  std::string display_name() const { return provider + ":" + name; }
  bool has_semaphore() const;
};

// Specs x modules' notes -> targets, ids from first_id in module, note
// order. `modules` may hold modules not loaded yet (Module::waiting): their
// probes are read from the file, and attached to it like any module's. Throws SelectorError "USDT
// spec 'X' matches no probe in M (it has N: a:b, ...)" for the first spec that matches nothing;
// ElfError when a module a spec names cannot be read.
std::vector<UsdtTarget> resolve_usdt(const std::vector<UsdtSpec>& specs,
                                     const std::vector<Module>& modules, uint32_t first_id);

}  // namespace atrace::uprobes

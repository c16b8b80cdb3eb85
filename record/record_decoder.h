// BPF records (bpf/atrace.h) -> trace events (formats/trace_types.h): the
// one place that reads the record layout the programs write. Pure: no BPF,
// no rings; the recorder hands it each record its rings deliver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "record/func_values.h"
#include "record/module_watch.h"
#include "record/stack_joiner.h"
#include "uprobes/usdt_select.h"

namespace atrace {

struct DecodedRecord {
  enum class Type {
    Event,       // `event` is for the trace
    FilterHint,  // a program turned a function off: the filters decide now
    Values,      // `event` is the key and args of an event already decoded
                 // (--args/--retval: func_values.h, join_values)
    Stack,       // `event` is the key and stack of an entry already decoded
                 // (--stack: stack_joiner.h, join_stack)
    LinkMap,     // process `event.pid`'s dynamic linker changed its list of
                 // loaded objects (late_arrivals.h)
    Invalid,     // too short for its kind, or a kind this recorder does not know
  };
  Type type = Type::Invalid;
  formats::Event event;
  // A thread-exit or rename record's thread name (the Comm event's text
  // too); empty for every other record.
  std::string thread_name;
  bool names_thread = false;
};

class RecordDecoder {
 public:
  // `usdt`: the USDT probes being recorded, whose notes give each
  // argument's size and sign; `modules`: the watched modules, by the
  // index the module records carry; `values`: the functions whose
  // arguments or return values are recorded (--args/--retval).
  explicit RecordDecoder(const std::vector<uprobes::UsdtTarget>& usdt = {},
                         std::vector<WatchedModule> modules = {},
                         std::map<uint32_t, uprobes::FuncValues> values = {});
  DecodedRecord decode(const void* data, size_t size) const;

 private:
  void usdt_event(const void* data, size_t size, formats::Event& ev) const;
  std::map<uint32_t, std::vector<uprobes::UsdtArg>> usdt_args_;  // by probe id
  std::vector<WatchedModule> modules_;
  ValueDecoder values_;
};

}  // namespace atrace

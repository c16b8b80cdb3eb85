#include "record/features.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/capabilities.h"
#include "base/unique_fd.h"

namespace atrace {

namespace {

bool exists(const char* path) { return access(path, F_OK) == 0; }

// Syscalls that must not be called to probe them (sys_uretprobe raises
// SIGILL outside its trampoline): their entry points are looked for in the
// kernel's BTF instead, which the tracepoint probes load anyway. Reading
// /proc/kallsyms for them took 0.1-0.2 s of every start-up here; BTF has
// every non-inlined function kallsyms has.
void find_entry_points(const btf* vmlinux, KernelFeatures& f) {
  auto has = [vmlinux](const char* fn) {
    return btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) >= 0;
  };
  f.uretprobe_syscall = has("__x64_sys_uretprobe");
  f.uprobe_syscall = has("__x64_sys_uprobe");
  f.uprobe_multi = has("bpf_uprobe_multi_link_attach");
}

// The arguments a tp_btf program of tracepoint `name` gets: the parameters
// of the kernel's btf_trace_NAME prototype after its `void *__data`; -1 when
// the kernel has no such type (no tracepoint, or no tp_btf).
int tracepoint_args(const btf* vmlinux, const char* name) {
  const std::string type = std::string("btf_trace_") + name;
  int id = btf__find_by_name_kind(vmlinux, type.c_str(), BTF_KIND_TYPEDEF);
  if (id < 0) return -1;
  const btf_type* t = btf__type_by_id(vmlinux, static_cast<__u32>(id));
  while (t && (btf_is_typedef(t) || btf_is_ptr(t))) t = btf__type_by_id(vmlinux, t->type);
  if (!t || !btf_is_func_proto(t)) return -1;
  return btf_vlen(t) - 1;
}

// A sleepable uprobe program loads (the kernel refuses sleepable kprobe
// programs before 6.0): the smallest program, `return 0`, with the flag.
bool sleepable_uprobe_loads() {
  const bpf_insn prog[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);
  UniqueFd fd(bpf_prog_load(BPF_PROG_TYPE_KPROBE, nullptr, "GPL", prog, 2, &opts));
  return fd.get() >= 0;
}

// libbpf's warnings while probing say nothing the feature lines do not.
int quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

}  // namespace

KernelFeatures detect_kernel_features() {
  KernelFeatures f;
  struct utsname u {};
  if (uname(&u) == 0) f.release = u.release;
  f.uprobe_pmu = exists("/sys/bus/event_source/devices/uprobe/type");
  libbpf_print_fn_t old = libbpf_set_print(quiet);
  if (exists("/sys/kernel/btf/vmlinux")) {
    if (btf* vmlinux = btf__load_vmlinux_btf()) {
      f.btf = true;
      find_entry_points(vmlinux, f);
      const int switch_args = tracepoint_args(vmlinux, "sched_switch");
      f.tp_btf = switch_args >= 0;
      f.switch_prev_state = switch_args >= 4;
      f.exit_group_dead = tracepoint_args(vmlinux, "sched_process_exit") >= 2;
      f.copy_from_user_str =
          btf__find_by_name_kind(vmlinux, "bpf_copy_from_user_str", BTF_KIND_FUNC) >= 0;
      f.task_work =
          btf__find_by_name_kind(vmlinux, "bpf_task_work_schedule_resume_impl", BTF_KIND_FUNC) >= 0;
      btf__free(vmlinux);
    }
  }
  f.ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1;
  f.task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, nullptr) == 1;
  f.bpf_cookie =
      libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, nullptr) == 1;
  f.sleepable_uprobe = sleepable_uprobe_loads();
  f.loads_probed = can_trace();
  libbpf_set_print(old);
  return f;
}

bool release_at_least(const std::string& release, const std::string& minimum) {
  unsigned a = 0, b = 0, x = 0, y = 0;
  if (std::sscanf(release.c_str(), "%u.%u", &a, &b) != 2)
    return true;  // unknown: let probing decide
  if (std::sscanf(minimum.c_str(), "%u.%u", &x, &y) != 2) return true;
  return a != x ? a > x : b >= y;
}

std::string KernelFeatures::missing_requirement() const {
  const std::string need = std::string(": atrace needs Linux ") + kMinimumKernel + " or later";
  const std::string kernel = "kernel " + release;
  if (!release_at_least(release, kMinimumKernel))
    return kernel + " is too old" + need + " with BTF";
  if (!btf)
    return kernel + " has no BTF (/sys/kernel/btf/vmlinux)" + need +
           " built with CONFIG_DEBUG_INFO_BTF=y";
  if (!uprobe_pmu)
    return kernel + " has no uprobe PMU (/sys/bus/event_source/devices/uprobe)" + need +
           " built with CONFIG_UPROBE_EVENTS=y";
  // Only a process that may trace can test-load programs: a failure there
  // is reported later, as a permission, not as a missing feature.
  if (!can_trace()) return {};
  if (!ringbuf) return kernel + " has no BPF ring buffers" + need;
  if (!bpf_cookie) return kernel + " has no BPF cookies for uprobes" + need;
  if (!task_storage) return kernel + " has no BPF task storage" + need;
  if (!tp_btf) return kernel + " has no BTF tracepoint types (tp_btf)" + need;
  return {};
}

std::vector<KernelFeatures::Line> KernelFeatures::describe() const {
  const std::string required = "cannot record";
  // Found by loading a program: unknown without the capabilities.
  const bool loaded = loads_probed;
  return {
      {"BTF", true, btf, true, required},
      {"uprobe PMU", true, uprobe_pmu, true, required},
      {"BPF ring buffer", true, ringbuf, loaded, required},
      {"BPF cookies", true, bpf_cookie, loaded, required},
      {"task storage", true, task_storage, loaded, required},
      {"tp_btf tracepoints", true, tp_btf, true, required},
      {"uprobe_multi links", false, uprobe_multi, true,
       "one perf-event link per probe: attaching and detaching many functions is slower"},
      {"uretprobe syscall", false, uretprobe_syscall, true,
       "return probes trap (int3): each traced call costs more, measured durations include more"},
      {"NOP5 optimization", false, uprobe_syscall, true,
       "entry probes on a 5-byte NOP trap and are emulated: each traced call costs more"},
      {"sleepable uprobes", false, sleepable_uprobe, loaded,
       "USDT strings read without faulting pages in (as without bpf_copy_from_user_str)"},
      {"bpf_copy_from_user_str", false, copy_from_user_str, true,
       "USDT strings read without faulting pages in: a string on a page the program has not "
       "touched yet is recorded empty"},
      {"sched_switch prev_state", false, switch_prev_state, true,
       "the state is read from the task (same value); nothing lost"},
      {"sched_process_exit group_dead", false, exit_group_dead, true,
       "the last thread is told by the process's live count; nothing lost"},
  };
}

std::vector<std::string> KernelFeatures::limits() const {
  std::vector<std::string> out;
  if (!uretprobe_syscall)
    out.push_back(
        "no uretprobe syscall: return probes trap, so durations of traced functions "
        "include a larger probe cost (see report --compensate)");
  if (!uprobe_syscall)
    out.push_back(
        "no NOP5 optimization: entry probes on NOP5 sites trap and are emulated, "
        "so durations include a larger probe cost");
  if (!faulting_string_copy())
    out.push_back(
        "no sleepable string copy: a USDT string argument on a page the program has "
        "not touched yet is recorded empty");
  if (!uprobe_multi)
    out.push_back("no uprobe_multi links: one perf-event link per probe (counts are the same)");
  return out;
}

std::string kernel_features_text(const KernelFeatures& f) {
  std::string text = "Kernel " + f.release + ":\n";
  for (const auto& l : f.describe()) {
    text += "  " + l.name + (l.required ? " (required)" : "") + ": ";
    if (!l.known) text += "unknown without CAP_BPF and CAP_PERFMON (or root) -- if not, ";
    else if (l.present) text += "yes\n";
    else text += "no -- ";
    if (!l.known || !l.present) text += l.without + "\n";
  }
  return text;
}

void print_kernel_features(std::FILE* out, const KernelFeatures& f) {
  std::fputs(kernel_features_text(f).c_str(), out);
}

}  // namespace atrace

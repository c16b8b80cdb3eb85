// The BPF programs that exist in more than one form (bpf/atrace.bpf.c):
// a tracepoint whose signature changed, a kfunc newer kernels have. Each
// form is its own program; the one the running kernel can load keeps the
// autoload its caller chose and the others are not loaded, so nothing a
// kernel lacks stops the rest from loading. Decided from KernelFeatures
// (probed, never from the version number).
#pragma once

struct atrace_bpf;
struct bpf_program;

namespace atrace {

struct KernelFeatures;

// Call after choosing which programs to load, before loading.
void adapt_to_kernel(atrace_bpf* skel, const KernelFeatures& f);

// The program USDT probes with string arguments are attached to.
bpf_program* usdt_string_program(atrace_bpf* skel, const KernelFeatures& f);

// Whether the thread-exit program (whichever form) is attached.
bool thread_exit_attached(const atrace_bpf* skel);

}  // namespace atrace

/* SPDX-License-Identifier: MIT */
/*
 * atrace/probe.h: probes a program places on purpose, for atrace (and any
 * tool that reads USDT probes: bpftrace, perf, SystemTap). Header-only, C
 * and C++, gcc and clang, x86-64.
 *
 *   ATRACE_EVENT(provider, name, args...)  an event with 0 to 6 arguments
 *                                          (integers, pointers, strings)
 *   ATRACE_BEGIN(provider, name)           an interval on this thread begins
 *   ATRACE_END(provider, name)             ... and ends (pairs nest like calls)
 *   ATRACE_ENABLED(provider, name)         nonzero while a tool traces the event
 *
 * `provider` and `name` are C identifiers (not strings). Record them with
 *   atrace record --usdt='provider:*' -- ./program
 * and a string argument with `--usdt='provider:name(str,int)'` (docs/usdt.md).
 *
 * What a probe is: a standard `.note.stapsdt` USDT note, so every USDT tool
 * finds it, with two choices of our own:
 *   - a semaphore per (provider, name): the kernel counts the tools tracing
 *     the probe in it (uprobe ref_ctr_offset), and while it is 0 the probe is
 *     one load and one not-taken branch; its arguments are not even computed;
 *   - the probe instruction is the 5-byte NOP `0f 1f 44 00 00` (sys/sdt.h
 *     uses a 1-byte `nop`): the kernel's optimized uprobe path turns it into
 *     a call instead of a breakpoint trap when traced.
 * ATRACE_BEGIN/ATRACE_END are the probes `name__begin` and `name__end`;
 * atrace pairs them into intervals shown like function calls.
 *
 * Every argument is passed as a signed 64-bit value ("-8@" in the note);
 * pointers and strings by address. Arguments are evaluated only while the
 * probe is traced: they must not have side effects the program relies on.
 */
#ifndef ATRACE_PROBE_H
#define ATRACE_PROBE_H

#if !defined(__x86_64__)
#error "atrace/probe.h supports x86-64 only"
#endif

#define ATRACE_PROBE_H_VERSION 1

/* ---- public macros ---------------------------------------------------- */

#define ATRACE_EVENT(provider, name, ...) \
	_ATRACE_PROBE(provider, name, _ATRACE_NARG(__VA_ARGS__), ##__VA_ARGS__)
#define ATRACE_BEGIN(provider, name) _ATRACE_PROBE(provider, name##__begin, 0)
#define ATRACE_END(provider, name) _ATRACE_PROBE(provider, name##__end, 0)
#define ATRACE_ENABLED(provider, name) _ATRACE_ENABLED(provider, name)

/* ---- implementation --------------------------------------------------- */

#define _ATRACE_STR_(x) #x
#define _ATRACE_STR(x) _ATRACE_STR_(x)
#define _ATRACE_SEM(provider, name) atrace_semaphore_##provider##__##name

/* Argument -> signed 64-bit operand: integers widen, pointers by address. */
#ifdef __cplusplus
namespace atrace_probe_detail {
template <typename T>
inline long long arg(T v) noexcept { return static_cast<long long>(v); }
template <typename T>
inline long long arg(T* p) noexcept { return reinterpret_cast<long long>(p); }
}  // namespace atrace_probe_detail
#define _ATRACE_ARG(x) (::atrace_probe_detail::arg(x))
#else
#define _ATRACE_ARG(x) ((long long)(x))
#endif

/* Number of variadic arguments, 0 to 6 (GNU ", ##__VA_ARGS__"). */
#define _ATRACE_NARG(...) _ATRACE_NARG_(_, ##__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define _ATRACE_NARG_(_0, _1, _2, _3, _4, _5, _6, n, ...) n

/*
 * The semaphore: a 2-byte counter in section .probes, defined by the first
 * probe of a translation unit that uses it (`.ifndef`), weak and hidden so
 * that every unit of a module shares one, and invisible outside the module.
 * The compiler sees only a block-scope extern declaration, with the symbol
 * named by an asm label: in C++ (inside a namespace, too) it is not mangled.
 */
#define _ATRACE_SEM_DEFINE(provider, name)                                              \
	__asm__ __volatile__(                                                           \
		".ifndef " _ATRACE_STR(_ATRACE_SEM(provider, name)) "\n"                \
		".pushsection .probes, \"aw\", @progbits\n"                              \
		".weak " _ATRACE_STR(_ATRACE_SEM(provider, name)) "\n"                  \
		".hidden " _ATRACE_STR(_ATRACE_SEM(provider, name)) "\n"                \
		".balign 2\n"                                                            \
		_ATRACE_STR(_ATRACE_SEM(provider, name)) ": .2byte 0\n"                 \
		".type " _ATRACE_STR(_ATRACE_SEM(provider, name)) ", @object\n"         \
		".size " _ATRACE_STR(_ATRACE_SEM(provider, name)) ", 2\n"               \
		".popsection\n"                                                          \
		".endif\n")

#define _ATRACE_ENABLED(provider, name)                                                  \
	(__extension__({                                                                  \
		extern volatile unsigned short _ATRACE_SEM(provider, name) __asm__(       \
			_ATRACE_STR(_ATRACE_SEM(provider, name)))                          \
			__attribute__((visibility("hidden")));                            \
		_ATRACE_SEM_DEFINE(provider, name);                                       \
		_ATRACE_SEM(provider, name) != 0;                                         \
	}))

/* The note (as sys/sdt.h lays it out, readelf -n shows it) and the
 * instruction the probe sits on. */
#define _ATRACE_NOTE(provider, name, argfmt)                                            \
	"990: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"                                     \
	".pushsection .note.stapsdt, \"?\", \"note\"\n"                                  \
	".balign 4\n"                                                                    \
	".4byte 992f-991f, 994f-993f, 3\n"                                               \
	"991: .asciz \"stapsdt\"\n"                                                      \
	"992: .balign 4\n"                                                               \
	"993: .8byte 990b\n"                                                             \
	".8byte _.stapsdt.base\n"                                                        \
	".8byte " _ATRACE_STR(_ATRACE_SEM(provider, name)) "\n"                         \
	".asciz \"" #provider "\"\n"                                                     \
	".asciz \"" #name "\"\n"                                                         \
	".asciz \"" argfmt "\"\n"                                                        \
	"994: .balign 4\n"                                                               \
	".popsection\n"                                                                  \
	".ifndef _.stapsdt.base\n"                                                       \
	".pushsection .stapsdt.base, \"aG\", \"progbits\", .stapsdt.base, comdat\n"      \
	".weak _.stapsdt.base\n"                                                         \
	".hidden _.stapsdt.base\n"                                                       \
	"_.stapsdt.base: .space 1\n"                                                     \
	".size _.stapsdt.base, 1\n"                                                      \
	".popsection\n"                                                                  \
	".endif\n"

#define _ATRACE_OP(x) "nr"(_ATRACE_ARG(x))
#define _ATRACE_ASM0(p, n) __asm__ __volatile__(_ATRACE_NOTE(p, n, "") ::)
#define _ATRACE_ASM1(p, n, a) __asm__ __volatile__(_ATRACE_NOTE(p, n, "-8@%0") :: _ATRACE_OP(a))
#define _ATRACE_ASM2(p, n, a, b) \
	__asm__ __volatile__(_ATRACE_NOTE(p, n, "-8@%0 -8@%1") :: _ATRACE_OP(a), _ATRACE_OP(b))
#define _ATRACE_ASM3(p, n, a, b, c)                                              \
	__asm__ __volatile__(_ATRACE_NOTE(p, n, "-8@%0 -8@%1 -8@%2")             \
			     :: _ATRACE_OP(a), _ATRACE_OP(b), _ATRACE_OP(c))
#define _ATRACE_ASM4(p, n, a, b, c, d)                                           \
	__asm__ __volatile__(_ATRACE_NOTE(p, n, "-8@%0 -8@%1 -8@%2 -8@%3")       \
			     :: _ATRACE_OP(a), _ATRACE_OP(b), _ATRACE_OP(c), _ATRACE_OP(d))
#define _ATRACE_ASM5(p, n, a, b, c, d, e)                                        \
	__asm__ __volatile__(_ATRACE_NOTE(p, n, "-8@%0 -8@%1 -8@%2 -8@%3 -8@%4") \
			     :: _ATRACE_OP(a), _ATRACE_OP(b), _ATRACE_OP(c),     \
				_ATRACE_OP(d), _ATRACE_OP(e))
#define _ATRACE_ASM6(p, n, a, b, c, d, e, f)                                           \
	__asm__ __volatile__(_ATRACE_NOTE(p, n, "-8@%0 -8@%1 -8@%2 -8@%3 -8@%4 -8@%5") \
			     :: _ATRACE_OP(a), _ATRACE_OP(b), _ATRACE_OP(c),           \
				_ATRACE_OP(d), _ATRACE_OP(e), _ATRACE_OP(f))
#define _ATRACE_ASM_(n, ...) _ATRACE_ASM##n(__VA_ARGS__)
#define _ATRACE_ASM(n, ...) _ATRACE_ASM_(n, __VA_ARGS__)

#define _ATRACE_PROBE(provider, name, n, ...)                                    \
	do {                                                                      \
		if (__builtin_expect(_ATRACE_ENABLED(provider, name), 0))         \
			_ATRACE_ASM(n, provider, name, ##__VA_ARGS__);            \
	} while (0)

#endif /* ATRACE_PROBE_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The argument spec of one USDT site as libbpf's usdt.bpf.h reads it
 * (bpf_usdt_arg(), bpf_usdt_cookie()), for the sites atrace registers
 * itself on uprobe_multi links (record/usdt_specs.h) instead of through
 * libbpf's bpf_program__attach_usdt(), which only knows perf-event links.
 *
 * The layout is libbpf's struct __bpf_usdt_spec (libbpf 1.1, "internal
 * implementation details ... subject to change"); bpf/atrace_usdt.bpf.h
 * asserts that the two agree, so a libbpf that changes it fails the build
 * rather than the reading of arguments.
 */
#ifndef ATRACE_BPF_USDT_SPEC_H
#define ATRACE_BPF_USDT_SPEC_H

#ifdef __BPF__
/* vmlinux.h provides the __u* types for the BPF side. */
#else
#include <linux/types.h>
#endif

#define ATRACE_USDT_SPEC_ARGS 12 /* libbpf's BPF_USDT_MAX_ARG_CNT */

/* libbpf's enum __bpf_usdt_arg_type */
enum atrace_usdt_arg_type {
	ATRACE_USDT_ARG_CONST = 0,     /* val_off is the value */
	ATRACE_USDT_ARG_REG = 1,       /* the register at reg_off */
	ATRACE_USDT_ARG_REG_DEREF = 2, /* memory at register + val_off */
};

struct atrace_usdt_arg_spec {
	__u64 val_off;
	__u32 arg_type; /* enum atrace_usdt_arg_type */
	short reg_off;  /* offset of the register in struct pt_regs */
	__u8 arg_signed; /* bool */
	char arg_bitshift; /* 64 - 8 * size: bits cleared (or sign-extended) */
};

struct atrace_usdt_spec {
	struct atrace_usdt_arg_spec args[ATRACE_USDT_SPEC_ARGS];
	__u64 usdt_cookie; /* what bpf_usdt_cookie() returns */
	short arg_cnt;
};

#endif

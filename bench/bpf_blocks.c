// bpf_blocks OBJ TARGET FUNCTION N PROGRAM...: for each PROGRAM of OBJ
// (bpf_blocks.bpf.o), attaches it as a uprobe on FUNCTION of TARGET (a fresh
// copy of the object each time, so every program starts with empty rings),
// runs `TARGET FUNCTION N` (uprobe_target), and prints the program's average
// run time from the kernel's statistics and the target's CPU ns per call.
// Run time statistics are on only while this program runs (BPF_ENABLE_STATS);
// they add two clock reads per run, which the `empty` program shows.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int run_target(const char *target, const char *fn, const char *n, char *out, size_t len)
{
	int fds[2];
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(target, target, fn, n, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], out, len - 1);
	out[got > 0 ? got : 0] = 0;
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int measure(const char *obj_path, const char *target, const char *fn, const char *n,
		   const char *prog_name)
{
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "bpf_blocks: cannot open %s: %s\n", obj_path, strerror(errno));
		return -1;
	}
	int ncpu = libbpf_num_possible_cpus();
	struct bpf_map *outer = bpf_object__find_map_by_name(obj, "rings");
	int inner[1024], ninner = 0, rc = -1;
	struct bpf_link *link = NULL;
	if (ncpu <= 0 || ncpu > 1024 || !outer)
		goto out;
	bpf_map__set_max_entries(outer, ncpu);
	for (; ninner < ncpu; ninner++) {
		inner[ninner] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, 1 << 24, NULL);
		if (inner[ninner] < 0) {
			fprintf(stderr, "bpf_blocks: cannot create a ring buffer: %s\n", strerror(errno));
			goto out;
		}
	}
	bpf_map__set_inner_map_fd(outer, inner[0]);
	struct bpf_map *lanes = bpf_object__find_map_by_name(obj, "lanes");
	struct bpf_map *slots = bpf_object__find_map_by_name(obj, "slots");
	if (lanes && slots) {
		bpf_map__set_max_entries(lanes, ncpu);
		bpf_map__set_max_entries(slots, ncpu * (1u << 16));
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "bpf_blocks: cannot load %s\n", obj_path);
		goto out;
	}
	for (int i = 0; i < ncpu; i++) {
		__u32 k = i;
		bpf_map_update_elem(bpf_map__fd(outer), &k, &inner[i], 0);
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, prog_name);
	if (!prog) {
		fprintf(stderr, "bpf_blocks: no program %s\n", prog_name);
		goto out;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = fn, .bpf_cookie = 1);
	link = bpf_program__attach_uprobe_opts(prog, -1, target, 0, &opts);
	if (!link) {
		fprintf(stderr, "bpf_blocks: cannot attach to %s:%s: %s\n", target, fn, strerror(errno));
		goto out;
	}
	char line[512];
	if (run_target(target, fn, n, line, sizeof line)) {
		fprintf(stderr, "bpf_blocks: %s failed\n", target);
		goto out;
	}
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		goto out;
	const char *cpu = strstr(line, "cpu_ns_per_call=");
	printf("%s runs=%llu prog_ns=%.1f target_%s", prog_name, (unsigned long long)info.run_cnt,
	       info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0,
	       cpu ? cpu : "cpu_ns_per_call=?\n");
	rc = 0;
out:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	for (int i = 0; i < ninner; i++)
		close(inner[i]);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: %s OBJ TARGET FUNCTION N PROGRAM...\n", argv[0]);
		return 2;
	}
	libbpf_set_print(NULL);
	int stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats < 0) {
		fprintf(stderr, "bpf_blocks: cannot enable BPF run-time statistics: %s (root?)\n",
			strerror(errno));
		return 1;
	}
	int rc = 0;
	for (int i = 5; i < argc; i++)
		rc |= measure(argv[1], argv[2], argv[3], argv[4], argv[i]);
	close(stats);
	return rc ? 1 : 0;
}

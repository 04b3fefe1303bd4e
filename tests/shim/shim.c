// SPDX-License-Identifier: GPL-2.0
/*
 * Runtime of the kernel-API shim (linux-shim.h): warnings, allocations
 * that can be made to fail, per-CPU arrays and the simulated current CPU.
 */
#include "linux-shim.h"

unsigned long shim_warnings;
bool shim_quiet_warnings;
long shim_fail_alloc_after = -1;
long shim_live_allocs;
#ifdef SIM_THREADS
__thread int shim_cpu;
#else
int shim_cpu;
#endif

void shim_warn(const char *file, int line, const char *cond)
{
	__atomic_fetch_add(&shim_warnings, 1, __ATOMIC_RELAXED);
	if (!shim_quiet_warnings)
		fprintf(stderr, "WARNING: %s:%d: %s\n", file, line, cond);
}

void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	void *p;

	(void)gfp;
	if (shim_fail_alloc_after == 0)
		return NULL;
	if (shim_fail_alloc_after > 0)
		shim_fail_alloc_after--;
	p = calloc(n ? n : 1, size ? size : 1);
	if (p)
		shim_live_allocs++;
	return p;
}

void kvfree(const void *p)
{
	if (!p)
		return;
	shim_live_allocs--;
	free((void *)p);
}

void *shim_alloc_percpu(size_t size)
{
	return kvcalloc(SHIM_NR_CPUS, size, GFP_KERNEL);
}

int shim_check_cpu(int cpu)
{
	if (cpu < 0 || cpu >= SHIM_NR_CPUS) {
		fprintf(stderr, "shim: cpu %d out of range\n", cpu);
		abort();
	}
	return cpu;
}

/* thread_linux.c - os_thread.h on Linux.
 * SPDX-License-Identifier: Apache-2.0 */
#if defined(__linux__)
#include "os_thread.h"

#include <sys/syscall.h>
#include <unistd.h>

/* syscall(), not gettid(): async-signal-safe, and glibc before 2.30 has
 * no gettid(). */
int64_t ptw_os_thread_id(void) { return (int64_t)syscall(SYS_gettid); }

void ptw_os_thread_name(char *buf, size_t n)
{
	if (pthread_getname_np(pthread_self(), buf, n) != 0)
		buf[0] = '\0';
	buf[n - 1] = '\0';
}

void ptw_os_thread_set_name(pthread_t th, const char *name)
{
	(void)pthread_setname_np(th, name);
}
uintptr_t ptw_os_thread_stack_top(void)
{
	pthread_attr_t a;
	void *lo;
	size_t size;
	uintptr_t top = 0;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return 0;
	if (pthread_attr_getstack(&a, &lo, &size) == 0)
		top = (uintptr_t)lo + size;
	pthread_attr_destroy(&a);
	return top;
}
#endif /* __linux__ */

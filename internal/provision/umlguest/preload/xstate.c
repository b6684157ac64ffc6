// A preload for Debian's user-mode-linux 6.1 on hosts whose CPU state
// (XSAVE) is larger than the guest kernel's buffer for it, e.g. with
// AVX-512 and AMX: the host's PTRACE_SETREGSET of NT_X86_XSTATE takes only
// a buffer of the host's whole size and refuses UML's smaller one with
// EFAULT ("ptrace set fp regs failed, errno = 14", then a panic). This
// fills the rest from the thread's current state: the parts UML knows
// (x87, SSE, AVX) are UML's; the host-only parts stay as they are.
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define NT_X86_XSTATE_NOTE 0x202
#define LEGACY_SIZE 512
#define HEADER_END 576

static __thread unsigned char whole[1 << 16];

static long set_xstate(pid_t pid, const struct iovec *uml)
{
	struct iovec cur = { whole, sizeof(whole) };
	if (syscall(SYS_ptrace, PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE_NOTE, &cur) < 0)
		return -1;
	size_t n = uml->iov_len;
	if (n >= cur.iov_len) {
		struct iovec all = { uml->iov_base, cur.iov_len };
		return syscall(SYS_ptrace, PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE_NOTE, &all);
	}
	const unsigned char *src = uml->iov_base;
	memcpy(whole, src, n < LEGACY_SIZE ? n : LEGACY_SIZE);
	if (n > HEADER_END)
		memcpy(whole + HEADER_END, src + HEADER_END, n - HEADER_END);
	if (n >= HEADER_END) {
		// The header's bitmap: UML's for the components inside its
		// buffer, the current state's for the others.
		uint64_t mask = 3, umlbv, curbv;
		for (unsigned i = 2; i < 63; i++) {
			unsigned a, b, c, d;
			if (!__get_cpuid_count(0xd, i, &a, &b, &c, &d) || a == 0 || (c & 1))
				continue;
			if ((size_t)b + a <= n)
				mask |= 1ull << i;
		}
		memcpy(&umlbv, src + LEGACY_SIZE, 8);
		memcpy(&curbv, whole + LEGACY_SIZE, 8);
		curbv = (umlbv & mask) | (curbv & ~mask);
		memcpy(whole + LEGACY_SIZE, &curbv, 8);
	}
	struct iovec out = { whole, cur.iov_len };
	return syscall(SYS_ptrace, PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE_NOTE, &out);
}

long ptrace(enum __ptrace_request req, ...)
{
	static long (*next)(enum __ptrace_request, ...);
	va_list ap;
	va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	if (req == PTRACE_SETREGSET && (uintptr_t)addr == NT_X86_XSTATE_NOTE)
		return set_xstate(pid, data);
	if (!next)
		next = (long (*)(enum __ptrace_request, ...))dlsym(RTLD_NEXT, "ptrace");
	return next(req, pid, addr, data);
}

// A preload for Debian's user-mode-linux 6.1 on hosts whose CPU state
// (XSAVE) is larger than the guest kernel's buffer for it, e.g. with
// AVX-512 and AMX: the host's PTRACE_SETREGSET of NT_X86_XSTATE takes only
// a buffer of the host's whole size and refuses UML's smaller one with
// EFAULT ("ptrace set fp regs failed, errno = 14", then a panic).
//
// UML saves a guest thread's registers into a buffer of that thread
// (PTRACE_GETREGSET) and restores them from it (PTRACE_SETREGSET). This
// library keeps, for each such buffer, the whole state the host gave when
// it was last saved, and restores that whole state with UML's part (x87,
// SSE, AVX: what UML may have changed) laid over it, so that a guest
// thread gets its own AVX-512 and AMX registers back. Not exactly so: a
// new thread whose buffer sits where a dead one's was starts with that
// one's AVX-512 and AMX registers (it has set none yet), and when the
// table of buffers is full the rest share the current state.
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define NT_X86_XSTATE_NOTE 0x202
#define LEGACY_SIZE 512
#define HEADER_END 576
#define SLOTS 16384
#define MAX_STATE (1 << 16)

struct slot {
	const void *owner; // UML's buffer of one guest thread
	unsigned char *state; // the whole state saved with it
};

static struct slot slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char scratch[MAX_STATE];
static size_t host_size; // the host's whole state, once read

static long regset(long req, pid_t pid, struct iovec *iov)
{
	return syscall(SYS_ptrace, req, pid, (void *)NT_X86_XSTATE_NOTE, iov);
}

// slot_of returns the saved state of UML's buffer owner, made (of the
// host's size) when create is set; NULL when there is none, or no room
// (then the current state stands in).
static struct slot *slot_of(const void *owner, int create)
{
	size_t h = ((uintptr_t)owner >> 4) % SLOTS;
	for (size_t i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[(h + i) % SLOTS];
		if (s->owner == owner)
			return s;
		if (s->owner == NULL) {
			if (!create || (s->state = malloc(host_size)) == NULL)
				return NULL;
			s->owner = owner;
			return s;
		}
	}
	return NULL;
}

// inside is the bitmap of the state components that lie within UML's n
// bytes (x87 and SSE are in the legacy area). It is worked out once: CPUID
// in a virtual machine exits to the hypervisor, and 61 of them on every
// switch made each of the guest's system calls take over a millisecond.
static uint64_t inside(size_t n)
{
	static size_t known_n;
	static uint64_t known;
	if (known_n == n)
		return known;
	uint64_t mask = 3;
	for (unsigned i = 2; i < 63; i++) {
		unsigned a, b, c, d;
		if (!__get_cpuid_count(0xd, i, &a, &b, &c, &d) || a == 0 || (c & 1))
			continue;
		if ((size_t)b + a <= n)
			mask |= 1ull << i;
	}
	known = mask;
	known_n = n;
	return mask;
}

// overlay lays UML's part of a state (n bytes) over a whole one.
static void overlay(unsigned char *whole, const unsigned char *uml, size_t n)
{
	memcpy(whole, uml, n < LEGACY_SIZE ? n : LEGACY_SIZE);
	if (n > HEADER_END)
		memcpy(whole + HEADER_END, uml + HEADER_END, n - HEADER_END);
	if (n >= HEADER_END) {
		uint64_t mask = inside(n), umlbv, wholebv;
		memcpy(&umlbv, uml + LEGACY_SIZE, 8);
		memcpy(&wholebv, whole + LEGACY_SIZE, 8);
		wholebv = (umlbv & mask) | (wholebv & ~mask);
		memcpy(whole + LEGACY_SIZE, &wholebv, 8);
	}
}

static long get_xstate(pid_t pid, struct iovec *uml)
{
	pthread_mutex_lock(&lock);
	struct iovec whole = { scratch, MAX_STATE };
	long r = regset(PTRACE_GETREGSET, pid, &whole);
	if (r == 0) {
		host_size = whole.iov_len;
		struct slot *s = slot_of(uml->iov_base, 1);
		if (s != NULL)
			memcpy(s->state, scratch, host_size);
		if (uml->iov_len > host_size)
			uml->iov_len = host_size;
		memcpy(uml->iov_base, scratch, uml->iov_len);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static long set_xstate(pid_t pid, const struct iovec *uml)
{
	pthread_mutex_lock(&lock);
	struct slot *s = slot_of(uml->iov_base, 0);
	unsigned char *whole = s ? s->state : scratch;
	long r = 0;
	if (s == NULL || host_size == 0) {
		// A buffer never saved (a new thread's): the current state.
		struct iovec cur = { whole, MAX_STATE };
		r = regset(PTRACE_GETREGSET, pid, &cur);
		host_size = cur.iov_len;
	}
	if (r == 0) {
		struct iovec out = { uml->iov_base, host_size };
		if (uml->iov_len < host_size) {
			overlay(whole, uml->iov_base, uml->iov_len);
			out.iov_base = whole;
		}
		r = regset(PTRACE_SETREGSET, pid, &out);
	}
	pthread_mutex_unlock(&lock);
	return r;
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
	if ((uintptr_t)addr == NT_X86_XSTATE_NOTE && data != NULL) {
		if (req == PTRACE_SETREGSET)
			return set_xstate(pid, data);
		if (req == PTRACE_GETREGSET)
			return get_xstate(pid, data);
	}
	if (!next)
		next = (long (*)(enum __ptrace_request, ...))dlsym(RTLD_NEXT, "ptrace");
	return next(req, pid, addr, data);
}

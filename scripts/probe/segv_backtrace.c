// Diagnostic preload: on SIGSEGV/SIGBUS/SIGABRT print the faulting thread's frames as "module offset"
// (for addr2line), then die with the signal.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void handler(int sig, siginfo_t* info, void* ctx) {
  (void)ctx;
  fprintf(stderr, "\n*** SEGV-PROBE signal %d address %p thread %ld\n", sig, info->si_addr, (long)syscall(SYS_gettid));
  void* frames[80];
  int n = backtrace(frames, 80);
  for (int i = 0; i < n; ++i) {
    Dl_info d;
    if (dladdr(frames[i], &d) && d.dli_fname) {
      fprintf(stderr, "FRAME %s 0x%lx %s\n", d.dli_fname, (unsigned long)((char*)frames[i] - (char*)d.dli_fbase) - 1,
              d.dli_sname ? d.dli_sname : "?");
    } else {
      fprintf(stderr, "FRAME ? %p\n", frames[i]);
    }
  }
  fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, 0);
  sigaction(SIGBUS, &sa, 0);
  sigaction(SIGABRT, &sa, 0);
}

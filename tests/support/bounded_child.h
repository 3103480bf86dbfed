// Runs a piece of code in a forked child under a time limit and, optionally, an address-space
// limit, so that a test can reproduce a hang or a memory blow-up without hanging or exhausting
// the test binary: a regression ends the child (SIGALRM, or std::bad_alloc) and fails the test.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace ditbench::test {

struct ChildOutcome {
  bool exited = false;  // ended by _exit, not by a signal
  int exit_code = -1;
  int signal = 0;  // the signal that ended it (SIGALRM: the time limit passed)
  bool passed() const { return exited && exit_code == 0; }
  std::string ToString() const {
    return exited ? "exited with " + std::to_string(exit_code)
                  : "killed by signal " + std::to_string(signal);
  }
};

// Forks; the child sets its limits, runs `body` and exits 0 when it returns true, 1 when false,
// 2 on an exception (std::bad_alloc under the address-space limit). `seconds` of wall time at
// most (alarm), `address_space_bytes` of virtual memory when not 0 (not applied under
// AddressSanitizer).
inline ChildOutcome RunInBoundedChild(const std::function<bool()>& body, unsigned seconds,
                                      std::uint64_t address_space_bytes = 0) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Not under AddressSanitizer: its shadow memory alone reserves terabytes of address space,
    // so the limit would refuse ASan's own next mapping ("Failed to mmap"), not the code's; the
    // release build checks the memory bound, and both check the time bound.
#if defined(__SANITIZE_ADDRESS__)
    (void)address_space_bytes;
#else
    if (address_space_bytes != 0) {
      const rlimit limit{address_space_bytes, address_space_bytes};
      ::setrlimit(RLIMIT_AS, &limit);
    }
#endif
    ::alarm(seconds);
    int code = 2;
    try {
      code = body() ? 0 : 1;
    } catch (...) {
    }
    ::_exit(code);
  }
  ChildOutcome outcome;
  if (pid < 0) return outcome;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) {
    outcome.exited = true;
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace ditbench::test

#include "launch/interrupt.h"

#include <signal.h>

#include <csignal>

namespace ditbench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void OnSignal(int) { g_interrupted = 1; }

// SIGPIPE: nothing. A write to a closed pipe then fails with EPIPE instead of killing the
// process. A handler rather than SIG_IGN, because an ignored signal stays ignored across exec
// and the ranks must start with the default; a caught one is reset to it.
extern "C" void OnBrokenPipe(int) {}

// Installs OnSignal for `signal` unless the process was started with it ignored: `nohup`
// ignores SIGHUP, and a shell without job control ignores SIGINT for background jobs, so that
// those runs survive the terminal. That choice is the user's and is kept.
void CatchUnlessIgnored(int signal) {
  struct sigaction current {};
  if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) return;
  std::signal(signal, OnSignal);
}

}  // namespace

SignalInterrupt::SignalInterrupt() {
  CatchUnlessIgnored(SIGINT);
  CatchUnlessIgnored(SIGHUP);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGPIPE, OnBrokenPipe);
}

bool SignalInterrupt::Requested() const { return g_interrupted != 0; }

}  // namespace ditbench

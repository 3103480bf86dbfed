#include "runner/interrupt.h"

#include <csignal>

namespace ditbench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void OnSignal(int) { g_interrupted = 1; }

}  // namespace

SignalInterrupt::SignalInterrupt() {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGHUP, OnSignal);
}

bool SignalInterrupt::Requested() const { return g_interrupted != 0; }

}  // namespace ditbench

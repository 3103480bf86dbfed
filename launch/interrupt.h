// Ctrl-C for the coordinator, behind a small interface so that the sweep loop can be tested
// with a fake. The sweep loop asks Requested() between waits and cancels the trials in flight
// (their ranks live in their own process groups and never see the terminal's signal);
// finished trials are already committed. Launchers never read it.
#pragma once

namespace ditbench {

class InterruptSource {
 public:
  virtual ~InterruptSource() = default;
  // True once the user has asked the run to stop. Cheap; called often.
  virtual bool Requested() const = 0;
};

// SIGINT, SIGTERM and SIGHUP (a closed ssh session ends the run as Ctrl-C does). Constructing
// one installs the handlers (process-wide: make one, in the command that runs the sweep);
// SIGHUP and SIGINT stay ignored when the process started with them ignored (`nohup`, a
// background job of a shell without job control). Requested() reads an async-signal-safe flag.
// A closed stdout (`ditbench run ... | head`) neither kills the process nor interrupts the run:
// SIGPIPE is caught and does nothing, so the failed write only sets the stream's error state,
// what is printed afterwards is lost, and the sweep goes on to its end (the ranks start with
// SIGPIPE's default action).
class SignalInterrupt final : public InterruptSource {
 public:
  SignalInterrupt();
  bool Requested() const override;
};

}  // namespace ditbench

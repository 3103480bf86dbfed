// Ctrl-C for the coordinator: the first SIGINT/SIGTERM asks the run loop to stop after killing
// the trial in flight (its ranks live in their own process group and never see the terminal's
// signal); finished trials are already committed.
#pragma once

namespace ditbench {

void InstallInterruptHandler();
bool InterruptRequested();

}  // namespace ditbench

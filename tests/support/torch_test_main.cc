// main() of the LibTorch test binaries: the CPU ISA guard first, as in ditbench-worker, so that
// bf16/fp16 tests run on machines that advertise instructions they cannot execute.
//
// c10d's flight recorder (a process-wide record of collectives, for debugging hangs) is turned
// off: the parallel tests run their ranks as threads of one process, each with its own Gloo
// process group, and LibTorch 2.11's recorder is not safe for collectives enqueued from several
// threads at once (a segfault inside FlightRecorder::recordWithResetEnabled, in about half of
// the runs of the counted-communication tests once the Wan cases were added). A worker is one
// rank per process and keeps it.
#include <stdlib.h>

#include <gtest/gtest.h>

#include "worker/cpu_isa_guard.h"

int main(int argc, char** argv) {
  ::setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/1);
  ditbench::GuardCpuIsa();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// main() of the LibTorch test binaries: the CPU ISA guard first, as in ditbench-worker, so that
// bf16/fp16 tests run on machines that advertise instructions they cannot execute.
#include <gtest/gtest.h>

#include "worker/cpu_isa_guard.h"

int main(int argc, char** argv) {
  ditbench::GuardCpuIsa();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

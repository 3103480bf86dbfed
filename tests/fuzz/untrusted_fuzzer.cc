// libFuzzer target over one untrusted reader (untrusted_readers.h), chosen at build time by
// DITBENCH_FUZZ_READER (scripts/fuzz builds one binary per reader). Built only with
// -DDITBENCH_FUZZ=ON and clang.
#include <cstdlib>

#include "tests/fuzz/untrusted_readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* reader = ditbench::fuzz::FindUntrustedReader(DITBENCH_FUZZ_READER);
  if (!reader) std::abort();
  reader->read(data, size);
  return 0;
}

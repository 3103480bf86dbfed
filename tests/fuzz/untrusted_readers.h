// The readers of untrusted input, each as a fuzz entry point over raw bytes: a rank file, a
// profiler trace, a safetensors header, a weights index, a .npy output, a diffusers config.json
// and a run folder's note. Each reader must take any bytes to a result or to one
// std::exception whose message is one line; anything else (a crash, a sanitizer report, another
// exception, a message over several lines) fails. One table, walked by the libFuzzer targets
// (scripts/fuzz, one per reader) and by the corpus replay that the test suite runs over
// tests/fuzz/untrusted/<reader>/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ditbench::fuzz {

struct UntrustedReader {
  const char* name;  // also its corpus folder: tests/fuzz/untrusted/<name>/
  void (*read)(const std::uint8_t* data, std::size_t size);
};

// Every reader, once.
extern const UntrustedReader kUntrustedReaders[];
extern const std::size_t kUntrustedReaderCount;

// The reader named `name`, or nullptr.
const UntrustedReader* FindUntrustedReader(std::string_view name);

}  // namespace ditbench::fuzz

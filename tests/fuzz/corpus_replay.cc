// Replays the fuzzer's regression corpus through the same entry point as the fuzzer
// (sweep_fuzzer.cc), without libFuzzer: a plain driver that any compiler builds, so CI can run
// every corpus file under gcc's address and undefined sanitizers (build-asan).
//
//   sweep_corpus_replay PATH...   each PATH a file or a folder of files (not recursive)
//
// Exit 0 when every input passed; 1 when no input was found or one could not be read. A
// crash, a sanitizer report or an abort() in the entry point ends the process on its own.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path = argv[i];
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, ec))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else {
      inputs.push_back(path);
    }
  }
  if (inputs.empty()) {
    std::cerr << "sweep_corpus_replay: error: no inputs (give corpus files or folders)\n";
    return 1;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "sweep_corpus_replay: error: cannot read " << path.string() << "\n";
      return 1;
    }
    const std::string data{std::istreambuf_iterator<char>(in), {}};
    std::cout << path.filename().string() << " (" << data.size() << " bytes)\n" << std::flush;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::cout << inputs.size() << " input(s) passed\n";
  return 0;
}

// Replays the untrusted readers' corpora (tests/fuzz/untrusted/<reader>/) through the same entry
// points as their fuzzers (untrusted_readers.h), without libFuzzer, so that CI runs every corpus
// file under gcc's address and undefined sanitizers.
//
//   untrusted_corpus_replay CORPUS_ROOT     every reader's folder under CORPUS_ROOT
//
// Exit 0 when every input passed; 1 when a reader's folder is missing or empty, or a folder
// names no reader. A crash, a sanitizer report or an abort() ends the process on its own.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <string>

#include "tests/fuzz/untrusted_readers.h"

int main(int argc, char** argv) {
  using namespace ditbench::fuzz;
  if (argc != 2) {
    std::cerr << "untrusted_corpus_replay: error: expected one argument, the corpus root\n";
    return 1;
  }
  const std::filesystem::path root = argv[1];
  std::error_code ec;
  for (const auto& folder : std::filesystem::directory_iterator(root, ec))
    if (!FindUntrustedReader(folder.path().filename().string())) {
      std::cerr << "untrusted_corpus_replay: error: " << folder.path().string()
                << " names no reader\n";
      return 1;
    }
  std::size_t total = 0;
  for (std::size_t r = 0; r < kUntrustedReaderCount; ++r) {
    const UntrustedReader& reader = kUntrustedReaders[r];
    std::set<std::filesystem::path> inputs;  // in name order: the same run every time
    for (const auto& entry : std::filesystem::directory_iterator(root / reader.name, ec))
      if (entry.is_regular_file()) inputs.insert(entry.path());
    if (inputs.empty()) {
      std::cerr << "untrusted_corpus_replay: error: no inputs in " << (root / reader.name).string()
                << "\n";
      return 1;
    }
    for (const auto& path : inputs) {
      std::ifstream in(path, std::ios::binary);
      const std::string data{std::istreambuf_iterator<char>(in), {}};
      std::cout << reader.name << "/" << path.filename().string() << " (" << data.size()
                << " bytes)\n"
                << std::flush;
      reader.read(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
    }
    total += inputs.size();
  }
  std::cout << total << " input(s) passed\n";
  return 0;
}

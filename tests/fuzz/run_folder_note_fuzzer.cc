// Fuzz target over ReadRunFolderNote (base/run_folder_file.h), the reader of a run folder's
// note that `report` shows (why a picture is missing). Each input is written as the note in a
// scratch run folder and read back; the note must be the input's first line, without its end
// of line, cut to kMaxRunFolderNoteBytes. A crash, a sanitizer report or a wrong note aborts.
// Replayed over tests/fuzz/corpus-run-folder-note by run_folder_note_corpus_replay.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/run_folder_file.h"

namespace {

// A scratch run folder for this process, made once.
const std::filesystem::path& ScratchFolder() {
  static const std::filesystem::path folder = [] {
    auto path = std::filesystem::temp_directory_path() /
                ("ditbench-note-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::ofstream(ScratchFolder() / "note.txt", std::ios::binary | std::ios::trunc) << text;
  const std::string note = ditbench::ReadRunFolderNote(ScratchFolder(), "note.txt");
  std::string expected = text.substr(0, ditbench::kMaxRunFolderNoteBytes);
  expected.resize(std::min(expected.find('\n'), expected.size()));
  if (!expected.empty() && expected.back() == '\r') expected.pop_back();
  if (note != expected) std::abort();
  return 0;
}

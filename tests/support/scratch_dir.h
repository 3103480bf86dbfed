// test::TempDir for the binaries that link LibTorch: there std::filesystem::remove_all resolves
// to libtorch's own copy and crashes, so the folder (flat: files only) is removed with POSIX
// calls. tests/worker/profiler_pass_test.cc and tests/model_zoo/weights/safetensors_test.cc
// each hold a copy of this that predates it.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace ditbench::test {

class ScratchDir {
 public:
  // A fresh folder under /tmp. Throws std::runtime_error.
  ScratchDir() {
    std::string pattern = "/tmp/ditbench-test-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create " + pattern);
    path_ = pattern;
  }
  // Removes the files in the folder, then the folder; never throws.
  ~ScratchDir() {
    if (DIR* dir = ::opendir(path_.c_str())) {
      while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") ::unlink((path_.string() + "/" + name).c_str());
      }
      ::closedir(dir);
    }
    ::rmdir(path_.c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace ditbench::test

#include "report/output_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ostream>

#include <fmt/format.h>

namespace ditbench {

void WriteOutputFile(const std::filesystem::path& path, std::string_view text) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {  // a device, a FIFO
    WriteIntoExistingFile(path, text);
    return;
  }
  WriteFileAtomically(path, text);
}

void CheckOutput(std::ostream& out, std::string_view what) {
  int error = errno;  // a write that failed before this call left its cause here
  if (out) {
    errno = 0;
    out.flush();
    if (out) return;
    error = errno;  // the flush's own failure
  }
  throw OutputWriteError(fmt::format("cannot write {}: {}", what,
                                     error ? std::strerror(error) : "a write failed"));
}

}  // namespace ditbench

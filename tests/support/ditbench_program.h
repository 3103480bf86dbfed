// The real `ditbench` program run as a user runs it, for tests that hold every command to one
// convention (exit codes, --format): `ditbench ARGS` in a folder, its standard output to
// out.txt there, its exit code and standard error returned.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ditbench::test {

struct ProgramResult {
  int exit_code = -1;  // -1: not exited (a signal)
  std::string err;
};

// REQUIRES: DITBENCH_BIN (the test target's compile definition) names the built program.
inline ProgramResult RunDitbench(const std::filesystem::path& dir, const std::string& args) {
  const auto err = dir / "err.txt";
  const std::string command = "cd '" + dir.string() + "' && '" + DITBENCH_BIN + "' " + args +
                              " > out.txt 2> '" + err.string() + "'";
  const int status = std::system(command.c_str());
  std::ifstream in(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          std::string(std::istreambuf_iterator<char>(in), {})};
}

}  // namespace ditbench::test

#include "launch/slurm/slurm_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <thread>

#include <boost/process.hpp>
#include <fmt/format.h>

#include "base/untrusted_input.h"
#include "machine/text_fields.h"

namespace ditbench {
namespace bp = boost::process;

ProgramOutput RunProgram(const std::string& program, const std::vector<std::string>& arguments,
                         std::chrono::milliseconds time_limit) {
  ProgramOutput result;
  // Output goes to an unlinked temp file, not a pipe: the child is then polled against the
  // time limit (a Slurm client waiting on an unreachable controller blocks for minutes) and a
  // daemon that keeps the descriptor open cannot hold us up.
  char name[] = "/tmp/ditbench-slurm-XXXXXX";
  const UniqueFd fd(::mkstemp(name));
  if (!fd) {
    result.text = fmt::format("cannot run {}: no temp file for its output", program);
    return result;
  }
  ::unlink(name);
  try {
    const boost::filesystem::path path =
        program.find('/') != std::string::npos ? boost::filesystem::path(program)
                                               : bp::search_path(program);
    if (path.empty()) {
      result.text = fmt::format("{} not found on PATH", program);
      return result;
    }
    // The child's stdout and stderr: a FILE* closed however the child's start ends (its
    // constructor throws when the program cannot be executed).
    const std::unique_ptr<FILE, int (*)(FILE*)> out(::fdopen(::dup(fd.get()), "w"), &::fclose);
    if (!out) {
      result.text = fmt::format("cannot run {}: no stream for its output", program);
      return result;
    }
    bp::child child(path, bp::args(arguments), bp::std_in < bp::null, bp::std_out > out.get(),
                    bp::std_err > out.get());
    const auto give_up = std::chrono::steady_clock::now() + time_limit;
    std::error_code ec;
    bool killed = false;
    while (child.running(ec)) {
      if (std::chrono::steady_clock::now() >= give_up) {
        child.terminate(ec);  // SIGKILL; reaps it
        killed = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const int status = child.native_exit_code();
    result.exit_code = !killed && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::string text(64 * 1024, '\0');
    const ssize_t n = ::pread(fd.get(), text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    result.text = std::move(text);
    if (killed)
      result.text += fmt::format("{} did not answer within {} s and was killed\n", program,
                                 time_limit.count() / 1000);
  } catch (const std::exception& e) {
    result.exit_code = -1;
    result.text = fmt::format("cannot run {}: {}", program, e.what());
  }
  return result;
}

std::string SlurmCommands::Submit(const std::vector<std::string>& arguments) {
  const ProgramOutput out = RunProgram("sbatch", arguments);
  // --parsable prints "JOBID" or "JOBID;CLUSTER" (warnings may come first).
  std::string last;
  for (std::size_t start = 0; start < out.text.size();) {
    const auto end = out.text.find('\n', start);
    const std::string line = TrimBlanks(out.text.substr(start, end - start));
    if (!line.empty()) last = line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  const std::string id = last.substr(0, last.find(';'));
  if (out.exit_code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
  {
    std::string said = TrimBlanks(out.text);
    for (std::size_t at; (at = said.find('\n')) != std::string::npos;) said.replace(at, 1, "; ");
    throw std::runtime_error(
        fmt::format("sbatch did not accept the job (exit {}): {}", out.exit_code, said));
  }
  return id;
}

std::optional<SlurmJobState> SlurmCommands::Query(const std::string& job_id) {
  const ProgramOutput shown = RunProgram("scontrol", {"show", "job", "-o", job_id});
  if (shown.exit_code == 0)
    if (auto job = ParseScontrolJob(shown.text)) return job;
  const ProgramOutput accounted =
      RunProgram("sacct", {"-n", "-P", "-X", "-o", "State,ExitCode", "-j", job_id});
  if (accounted.exit_code == 0) return ParseSacctLine(accounted.text);
  return std::nullopt;
}

void SlurmCommands::Cancel(const std::string& job_id) { RunProgram("scancel", {job_id}); }

}  // namespace ditbench

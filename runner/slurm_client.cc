#include "runner/slurm_client.h"

#include <sys/wait.h>

#include <stdexcept>

#include <boost/process.hpp>
#include <fmt/format.h>

namespace ditbench {
namespace bp = boost::process;

namespace {

std::string Trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

ProgramOutput RunProgram(const std::string& program, const std::vector<std::string>& arguments) {
  ProgramOutput result;
  try {
    const boost::filesystem::path path =
        program.find('/') != std::string::npos ? boost::filesystem::path(program)
                                               : bp::search_path(program);
    if (path.empty()) {
      result.text = fmt::format("{} not found on PATH", program);
      return result;
    }
    bp::ipstream output;  // one pipe for both streams (design section 11)
    bp::child child(path, bp::args(arguments), bp::std_in < bp::null,
                    (bp::std_out & bp::std_err) > output);
    for (std::string line; std::getline(output, line);) result.text += line + "\n";
    child.wait();
    const int status = child.native_exit_code();
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
    const std::string line = Trimmed(out.text.substr(start, end - start));
    if (!line.empty()) last = line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  const std::string id = last.substr(0, last.find(';'));
  if (out.exit_code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error(fmt::format("sbatch did not accept the job (exit {}): {}",
                                         out.exit_code, Trimmed(out.text)));
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

#include "runner/engine_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/run_folder_file.h"

#include "launch/command_program.h"

namespace ditbench {
namespace {

std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("the server was killed by signal {}", WTERMSIG(status));
  return fmt::format("the server exited with status {}", WEXITSTATUS(status));
}

// The start time of process `pid` in clock ticks since boot (/proc/PID/stat's 22nd field), or
// nullopt when it does not run or its stat cannot be read.
std::optional<unsigned long long> StartTicks(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces or ')': the fields after
  // it start past the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i < 22; ++i)
    if (!(fields >> field)) return std::nullopt;
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return std::nullopt;
  return ticks;
}

bool GroupRuns(pid_t group) { return ::kill(-group, 0) == 0 || errno == EPERM; }

}  // namespace

void RecordServerProcess(const std::filesystem::path& run_dir, pid_t pid) {
  nlohmann::json file = {{"pid", pid}};
  if (const auto ticks = StartTicks(pid)) file["start_ticks"] = *ticks;
  WriteFileAtomically(run_dir / kEngineServerFile, file.dump());
}

void ForgetServerProcess(const std::filesystem::path& run_dir) noexcept {
  std::error_code ignored;
  std::filesystem::remove(run_dir / kEngineServerFile, ignored);
}

std::optional<std::string> StopLeftoverServer(const std::filesystem::path& run_dir,
                                              std::chrono::milliseconds grace) {
  const std::filesystem::path path = run_dir / kEngineServerFile;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  nlohmann::json file;
  try {
    file = nlohmann::json::parse(ReadRunFolderFile(run_dir, kEngineServerFile, 4096));
  } catch (const std::exception&) {
  }
  ForgetServerProcess(run_dir);
  const nlohmann::json* pid_value =
      file.is_object() && file.contains("pid") ? &file["pid"] : nullptr;
  if (!pid_value || !pid_value->is_number_integer() || pid_value->get<long long>() <= 1 ||
      pid_value->get<long long>() > 4'194'304)
    return fmt::format("{} names no server process (expected {{\"pid\": N}}); nothing stopped",
                       path.string());
  const auto pid = static_cast<pid_t>(pid_value->get<long long>());
  if (!GroupRuns(pid)) return std::nullopt;  // the server went with its client
  // A leader that runs must be the one the client started; with the leader gone, the group's
  // id cannot have been given to another process while members of the group remain.
  if (const auto ticks = StartTicks(pid);
      ticks && file.contains("start_ticks") && file["start_ticks"] != *ticks)
    return fmt::format("process {} runs but started after the server {} names; it was left alone",
                       pid, path.string());
  ::kill(-pid, SIGTERM);
  const auto step = std::chrono::milliseconds(50);
  for (auto waited = std::chrono::milliseconds(0); GroupRuns(pid) && waited < grace; waited += step)
    std::this_thread::sleep_for(step);
  const bool killed = GroupRuns(pid);
  if (killed) ::kill(-pid, SIGKILL);
  return fmt::format(
      "stopped the engine server (process group {}) left by a killed client in "
      "{}{}",
      pid, run_dir.string(), killed ? " (SIGKILL: it outlived SIGTERM)" : "");
}

EngineServer::EngineServer(const std::vector<std::string>& argv,
                           const std::filesystem::path& folder, const std::filesystem::path& log) {
  if (argv.empty()) throw std::runtime_error("the engine's start command is empty");
  const std::filesystem::path program = ResolveProgram(argv[0], folder, ProcessPath());
  if (program.empty())
    throw std::runtime_error(ProgramProblem(argv[0], folder, ProcessPath())
                                 .value_or("the engine's program cannot be found"));
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = argv;
  args[0] = program.string();
  std::vector<char*> cargs;
  for (std::string& arg : args) cargs.push_back(arg.data());
  cargs.push_back(nullptr);
  const std::string dir = folder.string(), log_path = log.string();
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    throw std::runtime_error(fmt::format("cannot open {}: {}", log_path, std::strerror(errno)));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    // A client killed outright (SIGKILL: its timeout, a killed coordinator) cannot stop its
    // server: the kernel sends the server SIGTERM then. Checked after, in case it died first.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(125);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execv(cargs[0], cargs.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(log_fd);
  if (pid < 0)
    throw std::runtime_error(fmt::format("cannot start the server: {}", std::strerror(fork_errno)));
  ::setpgid(pid, pid);  // also here, so that the group exists before any signal is sent to it
  pid_ = pid;
}

EngineServer::~EngineServer() { Stop(); }

std::optional<std::string> EngineServer::ExitReason() {
  if (!reaped_) {
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    reaped_ = true;
    status_ = status;
  }
  return DescribeStatus(status_);
}

bool EngineServer::Stop(std::chrono::milliseconds grace) noexcept {
  if (pid_ <= 0) return true;
  ::kill(-pid_, SIGTERM);
  const auto step = std::chrono::milliseconds(50);
  bool exited = reaped_;
  for (auto waited = std::chrono::milliseconds(0); !exited && waited < grace; waited += step) {
    if (ExitReason())
      exited = true;
    else
      std::this_thread::sleep_for(step);
  }
  // The whole group, leader gone or not: a worker the server forked may outlive it.
  ::kill(-pid_, SIGKILL);
  if (!reaped_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_ = status;
  }
  pid_ = -1;
  return exited;
}

}  // namespace ditbench

// An engine trial's server process (the `engine` workload's `start`): started in its own
// process group with its output in a log file, and stopped with the whole group: SIGTERM, a
// bounded grace period, then SIGKILL, and reaped. Not copyable; the destructor stops it, and a
// client killed outright has the kernel send the server's leader SIGTERM (PR_SET_PDEATHSIG):
// what the leader started itself is then the leader's to stop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ditbench {

class EngineServer {
 public:
  // Starts `argv` (argv[0] resolved against `folder` and PATH, launch/command_program.h) in
  // `folder`, stdin from /dev/null, stdout and stderr to `log`. Throws std::runtime_error with
  // one line when it cannot be started.
  EngineServer(const std::vector<std::string>& argv, const std::filesystem::path& folder,
               const std::filesystem::path& log);
  ~EngineServer();
  EngineServer(const EngineServer&) = delete;
  EngineServer& operator=(const EngineServer&) = delete;

  pid_t pid() const { return pid_; }  // also the process group's id
  // Why the server is gone ("the server exited with status 3", "... was killed by signal 9"),
  // reaping it; nullopt while it runs.
  std::optional<std::string> ExitReason();
  // SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the group,
  // and the leader reaped. Idempotent. Returns true when it exited within the grace period.
  bool Stop(std::chrono::milliseconds grace = std::chrono::seconds(10)) noexcept;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace ditbench

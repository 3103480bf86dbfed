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
  // `folder`, stdin from /dev/null, stdout and stderr appended to `log`. Throws std::runtime_error
  // with one line when it cannot be started.
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

// A server a killed client left running. The client writes RUN_DIR/engine-server.json once
// its server started ({"pid": P, "start_ticks": T}, T the leader's start time in clock ticks
// since boot, /proc/P/stat) and removes it once the server is stopped, so the file outlives
// the trial only when the client was killed outright; the next `run` of the campaign then
// stops what is left of that server (runner/campaign_setup.cc).
inline constexpr const char* kEngineServerFile = "engine-server.json";
void RecordServerProcess(const std::filesystem::path& run_dir, pid_t pid);
void ForgetServerProcess(const std::filesystem::path& run_dir) noexcept;

// What is left of the server `run_dir`'s engine-server.json names, stopped (SIGTERM to its
// group, `grace`, SIGKILL): one line saying what was done, or nullopt when nothing was left.
// The file is untrusted: a pid that is not a positive number, or a leader that runs but
// started at another time (its pid reused by a process that is not the server), is left alone
// and said so. The file is removed once handled.
std::optional<std::string> StopLeftoverServer(
    const std::filesystem::path& run_dir,
    std::chrono::milliseconds grace = std::chrono::seconds(5));

}  // namespace ditbench

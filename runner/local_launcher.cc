#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include <boost/process.hpp>
#include <fmt/format.h>

#include "runner/interrupt.h"
#include "runner/launcher.h"

namespace ditbench {
namespace bp = boost::process;

namespace {

// SIGKILL to the trial's process group. A group whose members have all exited already (or that
// never got one) is not an error: there is nothing left to kill.
void KillAll(bp::group& group) {
  std::error_code ignored;
  group.terminate(ignored);
}

}  // namespace

int FindFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("cannot create a socket to find a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a socket to find a free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

LaunchOutcome LocalLauncher::Run(const LaunchRequest& request) {
  LaunchOutcome outcome;
  outcome.ranks.resize(request.world_size);
  const auto start = std::chrono::steady_clock::now();
  const int port = FindFreePort();
  std::string visible;
  for (int gpu : request.gpus) visible += (visible.empty() ? "" : ",") + std::to_string(gpu);

  bp::group group;
  std::vector<bp::child> children;
  try {
    for (int rank = 0; rank < request.world_size; ++rank) {
      bp::environment env = boost::this_process::environment();  // a copy, not our own
      env["RANK"] = std::to_string(rank);
      env["LOCAL_RANK"] = std::to_string(rank);
      env["WORLD_SIZE"] = std::to_string(request.world_size);
      env["LOCAL_WORLD_SIZE"] = std::to_string(request.world_size);
      env["MASTER_ADDR"] = "127.0.0.1";
      env["MASTER_PORT"] = std::to_string(port);
      env["CUDA_VISIBLE_DEVICES"] = visible;  // empty on CPU trials: no GPU leaks in
      env["DITBENCH_TRIAL"] = (request.run_dir / "trial.json").string();
      env["DITBENCH_RESULT"] = request.run_dir.string();
      const auto log = request.run_dir / fmt::format("rank{}.log", rank);
      children.emplace_back(request.worker.string(), bp::args(request.args), env,
                            bp::std_in < bp::null, (bp::std_out & bp::std_err) > log.string(),
                            group);
    }
  } catch (const std::exception& e) {
    outcome.launch_error = fmt::format("cannot start {}: {}", request.worker.string(), e.what());
    KillAll(group);
    for (auto& child : children) child.wait();
    return outcome;
  }

  // Supervise from this thread only, polling (Boost.Process 1.74's wait_for is not safe to mix
  // with several children). Stop everything at the first failure or at the deadline.
  const auto deadline = start + std::chrono::duration<double>(request.timeout_s);
  std::size_t finished = 0;
  bool killed = false;
  while (finished < children.size()) {
    for (std::size_t r = 0; r < children.size(); ++r) {
      RankExit& exit = outcome.ranks[r];
      if (exit.exited || children[r].running()) continue;
      const int status = children[r].native_exit_code();
      exit.exited = true;
      if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
      else exit.exit_code = WEXITSTATUS(status);
      exit.killed_by_us = killed;
      ++finished;
      if ((exit.signal != 0 || exit.exit_code != 0) && !killed) {
        outcome.first_failed_rank = static_cast<int>(r);
        KillAll(group);
        killed = true;
      }
    }
    if (finished == children.size()) break;
    if (!killed && InterruptRequested()) {
      KillAll(group);
      killed = true;
    }
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      outcome.timed_out = true;
      KillAll(group);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  outcome.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace ditbench

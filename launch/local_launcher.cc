#include "launch/local_launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <fmt/format.h>

#include "base/untrusted_input.h"

namespace ditbench {
namespace bp = boost::process;

namespace {

using Clock = std::chrono::steady_clock;

// Hands execve a ready-made environment ("NAME=value" strings, owned by the caller, alive
// until the child has started) and asks for SIGKILL when the coordinator dies. A coordinator
// that died between fork and that request is caught by comparing the parent pid after it.
class ExecEnvironment : public bp::extend::handler {
 public:
  explicit ExecEnvironment(const std::vector<std::string>& env) : coordinator_(::getpid()) {
    for (const auto& entry : env) pointers_.push_back(const_cast<char*>(entry.c_str()));
    pointers_.push_back(nullptr);
  }
  template <class Executor>
  void on_setup(Executor& exec) const {
    exec.env = const_cast<char**>(pointers_.data());
  }
  template <class Executor>
  void on_exec_setup(Executor&) const {
    // In the child, between fork and exec: async-signal-safe calls only.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != coordinator_) ::_exit(127);  // orphaned already: never run the worker
  }

 private:
  pid_t coordinator_;
  std::vector<char*> pointers_;
};

// Pins the child to a set of cores before it runs the program (sched_setaffinity between fork
// and exec: a plain system call). A child that cannot be pinned exits 126 rather than run
// where its placement says it does not. An empty set pins nothing.
class PinCpus : public bp::extend::handler {
 public:
  explicit PinCpus(const std::vector<int>& cpus) : pin_(!cpus.empty()) {
    CPU_ZERO(&set_);
    for (int cpu : cpus)
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set_);
  }
  template <class Executor>
  void on_exec_setup(Executor&) const {
    if (pin_ && ::sched_setaffinity(0, sizeof(set_), &set_) != 0) ::_exit(126);
  }

 private:
  bool pin_;
  cpu_set_t set_;
};

// A pidfd of a child (Linux 5.3 and later): readable once the child has exited, so that Wait()
// wakes up the moment a rank ends instead of polling on a timer. -1 where the kernel has none;
// Wait() then polls. Move-only; closes its descriptor.
class ExitWatch {
 public:
  explicit ExitWatch(pid_t pid) {
#ifdef SYS_pidfd_open
    fd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
    (void)pid;
#endif
  }
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
};

}  // namespace

// One trial in flight: its process group and ranks, and what is known so far.
struct LocalLauncher::Trial {
  bp::group group;
  std::vector<bp::child> children;
  std::vector<ExitWatch> watches;  // one per child, same order
  LaunchOutcome outcome;
  Clock::time_point start;
  Clock::time_point deadline;
  bool killed = false;

  // SIGKILL to the whole process group. A group whose members have all exited already (or
  // that never got one) is not an error: there is nothing left to kill.
  void KillAll() {
    std::error_code ignored;
    group.terminate(ignored);
    killed = true;
  }

  // Notes ranks that have ended; kills the rest at the first failure or at the deadline.
  // Returns true when every rank has ended.
  bool Poll(Clock::time_point now) {
    std::size_t ended = 0;
    for (std::size_t r = 0; r < children.size(); ++r) {
      RankExit& exit = outcome.ranks[r];
      if (!exit.exited) {
        std::error_code ec;
        if (children[r].running(ec)) continue;
        exit.exited = true;
        if (ec) {
          exit.exit_code = -1;  // cannot be waited for: its status is lost, count it a failure
        } else {
          const int status = children[r].native_exit_code();
          if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
          else exit.exit_code = WEXITSTATUS(status);
        }
        exit.killed_by_us = killed;
        if ((exit.signal != 0 || exit.exit_code != 0) && !killed) {
          outcome.first_failed_rank = static_cast<int>(r);
          KillAll();
        }
      }
      ++ended;
    }
    if (ended == children.size()) return true;
    if (!killed && now >= deadline) {
      outcome.timed_out = true;
      KillAll();
    }
    return false;
  }
};

int FindFreePort() {
  const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error("cannot create a socket to find a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot bind a socket to find a free port");
  return ntohs(addr.sin_port);
}

namespace {

// A socket listening on 127.0.0.1 at a port the kernel chose (in `*port`), close-on-exec.
// Throws std::runtime_error.
UniqueFd ListeningSocket(int* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error("cannot create the rendezvous socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd.get(), SOMAXCONN) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot listen on a rendezvous port");
  *port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

bool PortIsFree(int port) {
  const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return false;
  const int on = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

LocalLauncher::LocalLauncher(std::vector<std::string> environment)
    : environment_(std::move(environment)) {}

LocalLauncher::~LocalLauncher() {
  for (auto& [handle, trial] : trials_) {
    trial->KillAll();
    for (auto& child : trial->children) {
      std::error_code ignored;
      child.wait(ignored);
    }
  }
}

LaunchHandle LocalLauncher::Start(const LaunchRequest& request) {
  auto trial = std::make_unique<Trial>();
  trial->start = Clock::now();
  trial->deadline = trial->start + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(request.timeout_s));
  trial->outcome.ranks.resize(std::max(0, request.world_size));
  try {
    // The rendezvous port: for ditbench-worker one already listening, handed to rank 0 (no
    // other process can take it meanwhile); for any other program one free a moment ago.
    int port = 0;
    UniqueFd listening;
    if (request.rendezvous_socket && request.world_size > 1)
      listening = ListeningSocket(&port);
    else
      port = FindFreePort();
    for (int rank = 0; rank < request.world_size; ++rank) {
      // Rank 0 inherits a copy without close-on-exec, closed here once it is started, so no
      // other rank holds the socket.
      UniqueFd inherited(rank == 0 && listening ? ::fcntl(listening.get(), F_DUPFD, 3) : -1);
      if (rank == 0 && listening && !inherited)
        throw std::runtime_error("cannot pass the rendezvous socket on");
      const std::vector<std::string> env =
          BuildRankEnvironment(environment_, request, rank, port, inherited ? inherited.get() : -1);
      const auto log = request.run_dir / fmt::format("rank{}.log", rank);
      const std::string start_dir =
          request.working_dir.empty() ? std::filesystem::current_path().string()
                                      : request.working_dir.string();
      const std::filesystem::path program =
          request.worker.is_relative() && !request.working_dir.empty()
              ? request.working_dir / request.worker
              : request.worker;
      const std::vector<int> no_cpus;
      const std::vector<int>& cpus =
          rank < static_cast<int>(request.rank_cpus.size()) ? request.rank_cpus[rank] : no_cpus;
      trial->children.emplace_back(program.string(), bp::args(request.args),
                                   ExecEnvironment(env), PinCpus(cpus), bp::std_in < bp::null,
                                   (bp::std_out & bp::std_err) > log.string(),
                                   bp::start_dir(start_dir), trial->group);
      trial->watches.emplace_back(static_cast<pid_t>(trial->children.back().id()));
    }
  } catch (const std::exception& e) {
    trial->outcome.launch_error =
        fmt::format("cannot start {}: {}", request.worker.string(), e.what());
    trial->KillAll();
    for (std::size_t r = 0; r < trial->children.size(); ++r) {
      std::error_code ignored;
      trial->children[r].wait(ignored);
      trial->outcome.ranks[r].exited = true;
      trial->outcome.ranks[r].killed_by_us = true;
      trial->outcome.ranks[r].signal = SIGKILL;
    }
    trial->children.clear();
    trial->watches.clear();
  }
  const LaunchHandle handle = next_handle_++;
  trials_.emplace(handle, std::move(trial));
  return handle;
}

std::optional<FinishedTrial> LocalLauncher::Wait(std::chrono::milliseconds up_to) {
  const auto give_up = Clock::now() + up_to;
  // Between looks: until a rank exits (its pidfd becomes readable) or kMaxPause passes (for
  // deadlines). Without pidfds, a sleep that starts short, since a command that writes its
  // result and exits ends within milliseconds, and backs off to kMaxPause.
  constexpr auto kFirstPause = std::chrono::microseconds(100);
  constexpr auto kMaxPause = std::chrono::microseconds(10000);
  auto pause = kFirstPause;
  while (!trials_.empty()) {
    const auto now = Clock::now();
    for (auto it = trials_.begin(); it != trials_.end(); ++it) {
      Trial& trial = *it->second;
      if (!trial.outcome.launch_error.empty() || trial.Poll(now)) {
        FinishedTrial finished{it->first, std::move(trial.outcome)};
        finished.outcome.wall_s = std::chrono::duration<double>(Clock::now() - trial.start).count();
        trials_.erase(it);
        return finished;
      }
    }
    const auto left = give_up - Clock::now();
    if (left <= Clock::duration::zero()) break;
    std::vector<pollfd> running;
    bool watched = true;
    for (const auto& [handle, trial] : trials_)
      for (std::size_t r = 0; r < trial->watches.size(); ++r) {
        if (trial->outcome.ranks[r].exited) continue;
        if (trial->watches[r].fd() < 0) watched = false;
        running.push_back({trial->watches[r].fd(), POLLIN, 0});
      }
    if (watched && !running.empty()) {
      const auto wait = std::min<Clock::duration>(left, kMaxPause);
      const int ms = static_cast<int>(
          std::chrono::ceil<std::chrono::milliseconds>(wait).count());
      ::poll(running.data(), running.size(), ms);  // EINTR or a timeout: look again
    } else {
      std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
      pause = std::min(pause * 5 / 4, kMaxPause);
    }
  }
  return std::nullopt;
}

void LocalLauncher::Cancel(LaunchHandle handle) {
  auto it = trials_.find(handle);
  if (it == trials_.end() || it->second->killed) return;
  it->second->outcome.cancelled = true;
  it->second->KillAll();
}

std::filesystem::path DefaultWorkerProgram() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path("ditbench-worker") : self.parent_path() / "ditbench-worker";
}

}  // namespace ditbench

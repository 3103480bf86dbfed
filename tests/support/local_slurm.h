// A real single-node Slurm for tests: munged with its own key and socket, slurmctld and
// `slurmd -N localhost`, all configured in a temp dir with the settings the tests need
// (proctrack/cgroup so that scancel reaches double-forked ranks, CR_Core_Memory with
// DefMemPerCPU, no scheduling delays), on ports that were free a moment ago. SLURM_CONF is set
// in this process's environment, so every Slurm client it starts (sbatch, srun in the jobs,
// scontrol) talks to this cluster.
//
// LocalSlurm::Start() returns nullptr with `why_not` set when Slurm cannot run here (not
// root, the Debian packages slurmctld/slurmd/slurm-client/munge missing): tests then
// GTEST_SKIP with that message. When everything is installed but the cluster does not come
// up, `why_not` carries the daemons' logs and the test should fail.
//
// Destroying it cancels every job, shuts the daemons down and removes the folder.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "launch/local_launcher.h"
#include "launch/slurm/slurm_client.h"
#include "tests/support/temp_dir.h"

namespace ditbench::test {

class LocalSlurm {
 public:
  // `ready`: false when the cluster should run here but did not come up.
  static std::unique_ptr<LocalSlurm> Start(std::string* why_not, bool* installed) {
    *installed = false;
    if (::geteuid() != 0) {
      *why_not = "the Slurm tests need root (slurmd runs jobs as their user); run as root";
      return nullptr;
    }
    for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "srun",
                                "scancel", "sinfo", "squeue"}) {
      if (Find(program).empty()) {
        *why_not = std::string(program) +
                   " not found: install Debian's slurm-wlm and munge (scripts/setup does)";
        return nullptr;
      }
    }
    *installed = true;
    std::unique_ptr<LocalSlurm> slurm(new LocalSlurm());
    if (!slurm->Boot(why_not)) return nullptr;
    return slurm;
  }

  ~LocalSlurm() {
    RunProgram("scancel", {"--user=root"});
    WaitFor([] { return RunProgram("squeue", {"-h"}).text.empty(); }, 10);
    RunProgram("scontrol", {"shutdown"});
    for (const char* pid_file : {"slurmctld.pid", "slurmd.pid", "munged.pid"}) {
      const pid_t pid = ReadPid(dir_ / pid_file);
      if (pid <= 0) continue;
      if (std::string(pid_file) == "munged.pid") ::kill(pid, SIGTERM);
      if (!WaitFor([pid] { return ::kill(pid, 0) != 0; }, 5)) ::kill(pid, SIGKILL);
    }
    ::unsetenv("SLURM_CONF");
  }
  LocalSlurm(const LocalSlurm&) = delete;
  LocalSlurm& operator=(const LocalSlurm&) = delete;

  const std::filesystem::path& dir() const { return dir_.path(); }
  std::string Logs() const {
    std::string logs;
    for (const char* log : {"slurmctld.log", "slurmd.log", "munged.log"}) {
      std::ifstream in(dir_ / log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.size() > 3000) text = text.substr(text.size() - 3000);
      logs += std::string("--- ") + log + "\n" + text;
    }
    return logs;
  }

  // Polls `done` every 50 ms for at most `seconds`; returns whether it became true.
  template <class Predicate>
  static bool WaitFor(Predicate done, double seconds) {
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    while (!done()) {
      if (std::chrono::steady_clock::now() >= give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

 private:
  LocalSlurm() = default;

  // `program` on PATH, else in /usr/sbin (daemons, when PATH lacks it); "" when in neither.
  static std::string Find(const std::string& program) {
    const ProgramOutput found = RunProgram("sh", {"-c", "command -v " + program});
    if (found.exit_code == 0 && !found.text.empty()) return found.text.substr(0, found.text.find('\n'));
    const std::string sbin = "/usr/sbin/" + program;
    return ::access(sbin.c_str(), X_OK) == 0 ? sbin : "";
  }

  static pid_t ReadPid(const std::filesystem::path& file) {
    std::ifstream in(file);
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  bool Boot(std::string* why_not) {
    const std::string d = dir_.path().string();
    std::filesystem::create_directories(dir_ / "state");
    std::filesystem::create_directories(dir_ / "spool");
    {
      std::random_device random;
      std::ofstream key(dir_ / "munge.key", std::ios::binary);
      for (int i = 0; i < 1024; ++i) key.put(static_cast<char>(random()));
    }
    std::filesystem::permissions(dir_ / "munge.key", std::filesystem::perms::owner_read);
    const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    long memory_mb = 1024;
    {
      std::ifstream meminfo("/proc/meminfo");
      std::string name;
      long kb = 0;
      if (meminfo >> name >> kb && name == "MemTotal:") memory_mb = kb / 1024 / 2;
    }
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=ditbenchtest\n"
        << "SlurmctldHost=localhost\n"
        << "SlurmUser=root\nSlurmdUser=root\n"
        << "AuthType=auth/munge\nCredType=cred/munge\n"
        << "AuthInfo=socket=" << d << "/munge.sock\n"
        << "StateSaveLocation=" << d << "/state\n"
        << "SlurmdSpoolDir=" << d << "/spool\n"
        << "SlurmctldPidFile=" << d << "/slurmctld.pid\n"
        << "SlurmdPidFile=" << d << "/slurmd.pid\n"
        << "SlurmctldLogFile=" << d << "/slurmctld.log\n"
        << "SlurmdLogFile=" << d << "/slurmd.log\n"
        << "SlurmctldPort=" << FindFreePort() << "\n"
        << "SlurmdPort=" << FindFreePort() << "\n"
        << "ProctrackType=proctrack/cgroup\nTaskPlugin=task/none\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\n"
        << "DefMemPerCPU=100\n"
        << "SchedulerType=sched/backfill\n"
        << "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0\n"
        << "MailProg=/bin/true\nReturnToService=2\nMinJobAge=600\n"
        << "JobAcctGatherType=jobacct_gather/none\n"
        << "AccountingStorageType=accounting_storage/none\n"
        << "NodeName=localhost CPUs=" << cpus << " RealMemory=" << memory_mb
        << " State=UNKNOWN\n"
        << "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n";
    std::ofstream(dir_ / "cgroup.conf") << "CgroupAutomount=yes\nConstrainCores=no\n"
                                        << "ConstrainRAMSpace=no\n";
    ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
    auto daemon = [&](const std::string& program, const std::vector<std::string>& args) {
      const ProgramOutput out = RunProgram(Find(program), args);
      if (out.exit_code == 0) return true;
      *why_not = program + " did not start (exit " + std::to_string(out.exit_code) + "): " +
                 out.text + "\n" + Logs();
      return false;
    };
    if (!daemon("munged", {"--force", "--socket=" + d + "/munge.sock",
                           "--key-file=" + d + "/munge.key", "--log-file=" + d + "/munged.log",
                           "--pid-file=" + d + "/munged.pid", "--seed-file=" + d + "/munged.seed"}))
      return false;
    if (!daemon("slurmctld", {"-i"}) || !daemon("slurmd", {"-N", "localhost"})) return false;
    if (!WaitFor([] { return RunProgram("sinfo", {"-h", "-o", "%T"}).text == "idle\n"; }, 20)) {
      *why_not = "the Slurm node did not become idle within 20 s: sinfo says '" +
                 RunProgram("sinfo", {"-h", "-o", "%T"}).text + "'\n" + Logs();
      return false;
    }
    return true;
  }

  TempDir dir_;
};

}  // namespace ditbench::test

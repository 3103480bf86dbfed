// The reference engine (python/ditbench_engine_server.py) as a real local process for tests:
// started in its own process group with the project's Python (DITBENCH_ENGINE_PYTHON, the
// .venv that scripts/setup --tests fills), its stderr in a log file, and the whole group killed
// and reaped when the object dies, so that no server outlives its test. The tiny diffusers
// pipeline it serves is made once per test process (python/make_tiny_pipeline.py), or taken from
// DITBENCH_TINY_PIPELINE when ctest's fixture has made it already. Every wait is bounded.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/http_client.h"
#include "tests/support/temp_dir.h"

namespace ditbench::test {

inline std::string EnginePython() { return DITBENCH_ENGINE_PYTHON; }
inline std::filesystem::path EngineScript(const char* name) {
  return std::filesystem::path(DITBENCH_PYTHON_DIR) / name;
}

// Runs `argv` to its end (bounded by `seconds`), its output into `log`; its exit status, or -1
// when it did not exit by itself in time (then it is killed).
inline int RunToEnd(const std::vector<std::string>& argv, const std::filesystem::path& log,
                    int seconds) {
  // Made before fork: the child only calls what is safe after a fork (no allocation).
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  for (int i = 0; i < seconds * 10; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

inline std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A tiny pipeline folder, made on the first call in this process for each kind unless the
// environment variable `made_in` names one already made (ctest's fixtures make them).
// Throws std::runtime_error with the maker's output when it fails.
inline std::filesystem::path MadeTinyPipeline(const char* made_in, bool video) {
  if (const char* made = std::getenv(made_in)) {
    if (std::filesystem::exists(std::filesystem::path(made) / "model_index.json")) return made;
  }
  static std::unique_ptr<TempDir> folders[2];  // removed when the process ends
  std::unique_ptr<TempDir>& folder = folders[video ? 1 : 0];
  if (!folder) {
    auto made = std::make_unique<TempDir>();
    const std::filesystem::path log = *made / "make.log";
    std::vector<std::string> argv = {EnginePython(), EngineScript("make_tiny_pipeline.py").string(),
                                     (*made / "pipe").string()};
    if (video) argv.push_back("--video");
    const int status = RunToEnd(argv, log, 300);
    if (status != 0) {
      throw std::runtime_error("make_tiny_pipeline.py exited with " + std::to_string(status) +
                               ": " + ReadWholeFile(log));
    }
    folder = std::move(made);
  }
  return *folder / "pipe";
}

// The tiny PixArt image pipeline (DITBENCH_TINY_PIPELINE).
inline std::filesystem::path TinyPipeline() {
  return MadeTinyPipeline("DITBENCH_TINY_PIPELINE", false);
}

// The tiny Wan text-to-video pipeline (make_tiny_pipeline.py --video,
// DITBENCH_TINY_VIDEO_PIPELINE).
inline std::filesystem::path TinyVideoPipeline() {
  return MadeTinyPipeline("DITBENCH_TINY_VIDEO_PIPELINE", true);
}

// One server process and its group.
class EngineServer {
 public:
  // Starts the server on `model` with `args` added (e.g. {"--fail-every", "2"}), and waits up to
  // `start_seconds` for its first stdout line. port() is 0 when it exited or never said where it
  // listens (exit_status() and log() say why).
  EngineServer(const std::filesystem::path& model, const std::vector<std::string>& args,
               int start_seconds = 120) {
    log_ = dir_ / "server.log";
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> argv = {
        EnginePython(), EngineScript("ditbench_engine_server.py").string(),
        "--model",      model.string(),
        "--threads",    "1"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> exec_args;  // made before fork, as in RunToEnd
    for (const std::string& arg : argv) exec_args.push_back(const_cast<char*>(arg.c_str()));
    exec_args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out[1], 1);
      ::dup2(fd, 2);
      ::close(out[0]);
      ::execv(exec_args[0], exec_args.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // as the child does: no window where a kill misses the group
    ::close(out[1]);
    ReadPort(out[0], start_seconds);
    ::close(out[0]);
  }
  ~EngineServer() {
    ::kill(-pid_, SIGKILL);
    if (!exit_status_) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  EngineServer(const EngineServer&) = delete;
  EngineServer& operator=(const EngineServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::string log() const { return ReadWholeFile(log_); }

  // The exit status once the process has exited (128 + N for signal N), nullopt while it runs.
  std::optional<int> exit_status() {
    if (!exit_status_) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    return exit_status_;
  }
  // exit_status(), waiting up to `seconds` for the process to exit.
  std::optional<int> WaitExit(int seconds) {
    for (int i = 0; i < seconds * 20 && !exit_status(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return exit_status();
  }

 private:
  void ReadPort(int fd, int seconds) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (line.find('\n') == std::string::npos && line.size() < 256) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      pollfd ready{fd, POLLIN, 0};
      if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) return;
      char buffer[256];
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got <= 0) return;  // the server exited before saying where it listens
      line.append(buffer, static_cast<std::size_t>(got));
    }
    const std::string prefix = "listening on 127.0.0.1:";
    if (line.rfind(prefix, 0) == 0) port_ = std::atoi(line.c_str() + prefix.size());
  }

  TempDir dir_;
  std::filesystem::path log_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::optional<int> exit_status_;
};

// A wait for `server` of up to 2 minutes that ends at once when it exits, saying its status.
inline ReadyOptions ServerReadyOptions(EngineServer& server) {
  ReadyOptions options;
  options.timeout = std::chrono::seconds(120);
  options.stop = [&server] {
    const auto status = server.exit_status();
    return status ? "the server exited with status " + std::to_string(*status) : "";
  };
  return options;
}

// Waits for /health; the server's log in the failure message when it never gets there.
inline void ExpectReady(EngineServer& server, HttpClient& client) {
  ASSERT_NE(server.port(), 0) << server.log();
  const ReadyResult ready = WaitReady(client, {server.url("/health")}, ServerReadyOptions(server));
  ASSERT_TRUE(ready.ready) << ready.last_failure << "\n" << server.log();
}

}  // namespace ditbench::test

// runner/engine_server.h with real processes: the server's group is stopped by Stop(), and a
// client that dies without stopping it (SIGKILL leaves no destructor to run) still takes the
// server's leader with it. Every wait is bounded; none decides the outcome by timing.
#include "runner/engine_server.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

// The process exists and is not a zombie (an orphan's zombie waits for a reaper that a
// container may not have).
bool Running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name, state;
  if (!(stat >> pid_text >> name >> state)) return false;
  return state != "Z" && state != "X";
}

// Polls until `pid` is gone, at most 20 s.
bool Ends(pid_t pid) {
  for (int i = 0; i < 400 && Running(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !Running(pid);
}

TEST(EngineServerProcessTest, StopEndsTheServersWholeGroup) {
  test::TempDir dir;
  // The leader starts a child of its own in the same group, then waits.
  EngineServer server({"/bin/sh", "-c", "sleep 300 & echo $! > child.pid; wait"}, dir.path(),
                      dir.path() / "server.log");
  const pid_t leader = server.pid();
  pid_t child = 0;
  for (int i = 0; i < 400 && child == 0; ++i) {
    std::ifstream in(dir.path() / "child.pid");
    if (!(in >> child)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(child, 0);
  EXPECT_FALSE(server.ExitReason());
  server.Stop(std::chrono::milliseconds(2000));
  EXPECT_FALSE(Running(leader));
  EXPECT_TRUE(Ends(child)) << "the server's own child " << child << " outlived Stop()";
}

TEST(EngineServerProcessTest, AClientKilledOutrightTakesItsServerWithIt) {
  test::TempDir dir;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t client = ::fork();
  ASSERT_GE(client, 0);
  if (client == 0) {
    // The client: starts its server, says its pid, and is killed before it can stop it.
    ::close(pipe_fds[0]);
    try {
      EngineServer server({"/bin/sleep", "300"}, dir.path(), dir.path() / "server.log");
      const pid_t pid = server.pid();
      if (::write(pipe_fds[1], &pid, sizeof pid) != sizeof pid) ::_exit(2);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(pipe_fds[1]);
  pid_t server = 0;
  ASSERT_EQ(::read(pipe_fds[0], &server, sizeof server), static_cast<ssize_t>(sizeof server));
  ::close(pipe_fds[0]);
  ASSERT_TRUE(Running(server));
  ASSERT_EQ(::kill(client, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(client, &status, 0), client);
  EXPECT_TRUE(Ends(server)) << "the server " << server << " outlived its killed client";
  ::kill(server, SIGKILL);  // whatever the outcome, nothing is left behind
}

}  // namespace
}  // namespace ditbench

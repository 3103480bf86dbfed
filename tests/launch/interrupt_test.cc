#include "launch/interrupt.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <gtest/gtest.h>

namespace ditbench::interrupt_test {
namespace {

// `ditbench run ... | head`: once head exits, a write to stdout used to kill the coordinator
// with SIGPIPE, leaving its trial `running`. Now the write fails and the run goes on.
TEST(SignalInterruptTest, AClosedPipeNeitherKillsNorInterruptsTheRun) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SignalInterrupt interrupt;
    int fds[2];
    if (pipe(fds) != 0) _exit(3);
    close(fds[0]);  // the reader (head) is gone
    const bool epipe = write(fds[1], "x\n", 2) < 0 && errno == EPIPE;
    _exit(!epipe ? 1 : interrupt.Requested() ? 2 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A program the coordinator starts gets SIGPIPE's default action back.
TEST(SignalInterruptTest, ProgramsStartedAfterwardsDieOfSigpipeAsUsual) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SignalInterrupt interrupt;
    execl("/bin/sh", "sh", "-c", "kill -PIPE $$; exit 0", static_cast<char*>(nullptr));
    _exit(3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGPIPE);
}

}  // namespace
}  // namespace ditbench::interrupt_test

#include "launch/slurm/slurm_job.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::slurm_job_test {
namespace {

bool Has(const std::vector<std::string>& args, const std::string& arg) {
  return std::find(args.begin(), args.end(), arg) != args.end();
}

LaunchRequest Request(int world_size) {
  LaunchRequest r;
  r.trial_key = "k1";
  r.run_dir = "/runs/1/k1";
  r.worker = "/opt/ditbench-worker";
  r.args = {"--trial", "/runs/1/k1/trial.json"};
  r.world_size = world_size;
  r.timeout_s = 90;
  return r;
}

TEST(SlurmJobTest, CpuRanksShareOneNode) {
  const auto shape = ShapeJob(4, SlurmOptions{});
  EXPECT_EQ(shape.nodes, 1);
  EXPECT_EQ(shape.tasks_per_node, 4);
}

TEST(SlurmJobTest, GpuRanksSpreadOverTheFewestNodes) {
  SlurmOptions options;
  options.gpus_per_node = 8;
  EXPECT_EQ(ShapeJob(16, options).nodes, 2);
  EXPECT_EQ(ShapeJob(16, options).tasks_per_node, 8);
  EXPECT_EQ(ShapeJob(4, options).nodes, 1);
  options.nodes_per_trial = 4;
  EXPECT_EQ(ShapeJob(16, options).tasks_per_node, 4);
}

TEST(SlurmJobTest, ImpossibleShapesAreRefusedWithTheReason) {
  SlurmOptions options;
  options.gpus_per_node = 8;
  options.nodes_per_trial = 1;
  try {
    ShapeJob(16, options);
    FAIL() << "16 ranks on one 8-GPU node accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("need at least 2 nodes"), std::string::npos) << e.what();
  }
  options.nodes_per_trial = 3;
  EXPECT_THROW(ShapeJob(16, options), std::invalid_argument);  // 16 ranks over 3 nodes
}

TEST(SlurmJobTest, SbatchGetsShapeTimeAndWhereToLog) {
  SlurmOptions options;
  options.partition = "gpu";
  options.account = "proj";
  const auto args = SbatchArguments(Request(2), options, ShapeJob(2, options), "/runs/1/k1/s.sh");
  EXPECT_TRUE(Has(args, "--parsable"));
  EXPECT_TRUE(Has(args, "--ntasks=2"));
  EXPECT_TRUE(Has(args, "--nodes=1"));
  EXPECT_TRUE(Has(args, "--time=2")) << "90 s rounds up to 2 minutes";
  EXPECT_TRUE(Has(args, "--partition=gpu"));
  EXPECT_TRUE(Has(args, "--account=proj"));
  EXPECT_TRUE(Has(args, "--output=/runs/1/k1/slurm-%j.out"));
  EXPECT_EQ(args.back(), "/runs/1/k1/s.sh");
  options.time = "0:30:00";
  EXPECT_TRUE(Has(SbatchArguments(Request(2), options, ShapeJob(2, options), "s"),
                  "--time=0:30:00"));
}

TEST(SlurmJobTest, RanksStartInTheRunFolderOrTheCommandsWorkingFolder) {
  SlurmOptions options;
  const SlurmJobShape shape = ShapeJob(2, options);
  LaunchRequest worker = Request(2);
  EXPECT_TRUE(Has(SbatchArguments(worker, options, shape, "s"), "--chdir=/runs/1/k1"));
  EXPECT_NE(SlurmJobScript(worker, options, shape).find("srun --kill-on-bad-exit=1 "
                                                        "--chdir='/runs/1/k1' "),
            std::string::npos);
  // A `command` workload starts in its sweep's folder, under sbatch and srun alike.
  LaunchRequest command = Request(2);
  command.working_dir = "/home/me/my sweeps";
  EXPECT_TRUE(Has(SbatchArguments(command, options, shape, "s"), "--chdir=/home/me/my sweeps"));
  EXPECT_FALSE(Has(SbatchArguments(command, options, shape, "s"), "--chdir=/runs/1/k1"));
  EXPECT_NE(SlurmJobScript(command, options, shape).find("--chdir='/home/me/my sweeps' "),
            std::string::npos)
      << SlurmJobScript(command, options, shape);
  EXPECT_NE(SlurmStepScript(command, options, shape).find("--chdir='/home/me/my sweeps' "),
            std::string::npos)
      << SlurmStepScript(command, options, shape);
}

TEST(SlurmJobTest, ShellQuoteSurvivesQuotes) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

// The script's task line, run by a real shell with the variables srun would set: the rank
// sees the torchrun environment and leaves its exit status.
TEST(SlurmJobTest, TaskEnvironmentComesFromSlurmsVariables) {
  test::TempDir dir;
  LaunchRequest request = Request(2);
  request.run_dir = dir.path();
  request.worker = "/bin/sh";
  request.args = {"-c", "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR "
                        "$MASTER_PORT [$CUDA_VISIBLE_DEVICES] $DITBENCH_RESULT $EXTRA\"; exit 5"};
  SlurmOptions options;
  options.environment = {"EXTRA=it's here"};
  std::string script = SlurmJobScript(request, options, ShapeJob(2, options));
  // Stand-ins for Slurm's programs: scontrol names the first host; srun runs one task.
  std::ofstream(dir / "scontrol") << "#!/bin/sh\necho node7\necho node8\n";
  // srun: drop its options, run the task.
  std::ofstream(dir / "srun") << "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
                              << "exec \"$@\" > \"$DITBENCH_RESULT/out\"\n";
  for (const char* tool : {"scontrol", "srun"})
    std::filesystem::permissions(dir / tool, std::filesystem::perms::owner_all);
  std::ofstream(dir / "job.sh") << script;
  const std::string command =
      "cd " + dir.path().string() + " && PATH=" + dir.path().string() +
      ":/usr/bin:/bin SLURM_JOB_NODELIST='node[7-8]' SLURM_JOB_ID=100 SLURM_NTASKS=2 "
      "SLURM_PROCID=1 SLURM_LOCALID=1 sh job.sh";
  EXPECT_NE(std::system(command.c_str()), 0);
  std::ifstream out(dir / "out");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "1 1 2 2 node7 20100 [] " + dir.path().string() + " it's here");
  std::ifstream exit_file(RankExitPath(dir.path(), 1));
  int code = -1;
  exit_file >> code;
  EXPECT_EQ(code, 5);
}

// The step script's task line with the variables srun would set for step 3 of job 100.
TEST(SlurmJobTest, StepTaskEnvironmentComesFromItsStep) {
  test::TempDir dir;
  LaunchRequest request = Request(2);
  request.run_dir = dir.path();
  request.worker = "/bin/sh";
  request.args = {"-c", "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR "
                        "$MASTER_PORT $DITBENCH_RESULT\""};
  std::string script = SlurmStepScript(request, SlurmOptions{}, ShapeJob(2, SlurmOptions{}));
  EXPECT_NE(script.find("--ntasks=2"), std::string::npos) << script;
  EXPECT_NE(script.find("--time='2'"), std::string::npos) << script;
  std::ofstream(dir / "scontrol") << "#!/bin/sh\necho node8\n";
  // srun: drop its options, run the task as rank 0.
  std::ofstream(dir / "srun") << "#!/bin/sh\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
                              << "exec \"$@\" > \"$DITBENCH_RESULT/out\"\n";
  for (const char* tool : {"scontrol", "srun"})
    std::filesystem::permissions(dir / tool, std::filesystem::perms::owner_all);
  std::ofstream(dir / "step.sh") << script;
  const std::string command =
      "cd " + dir.path().string() + " && PATH=" + dir.path().string() +
      ":/usr/bin:/bin SLURM_STEP_NODELIST='node[8-9]' SLURM_JOB_NODELIST='node[1-9]' "
      "SLURM_JOB_ID=100 SLURM_STEP_ID=3 SLURM_NTASKS=2 SLURM_PROCID=0 SLURM_LOCALID=0 sh step.sh";
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::ifstream out(dir / "out");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "0 0 2 2 node8 26403 " + dir.path().string());  // 20000 + (100*64+3)
  std::ifstream step(dir / "slurm_step");
  std::getline(step, line);
  EXPECT_EQ(line, "100.3");
}

}  // namespace
}  // namespace ditbench::slurm_job_test

namespace ditbench::slurm_job_test {
namespace {

// The exit files live in the run folder the ranks share: a FIFO or garbage there is read as
// "no exit code" (killed) at once, never waited on.
TEST(SlurmJobTest, RankExitFilesAreReadAsUntrustedInput) {
  test::TempDir dir;
  std::ofstream(RankExitPath(dir.path(), 0)) << "3\n";
  ASSERT_EQ(::mkfifo(RankExitPath(dir.path(), 1).c_str(), 0600), 0);
  std::ofstream(RankExitPath(dir.path(), 2)) << "not a number";
  LaunchOutcome outcome;
  ReadRankExits(dir.path(), 3, &outcome);
  ASSERT_EQ(outcome.ranks.size(), 3u);
  EXPECT_EQ(outcome.ranks[0].exit_code, 3);
  EXPECT_EQ(outcome.first_failed_rank, 0);
  EXPECT_TRUE(outcome.ranks[1].killed_by_us);
  EXPECT_TRUE(outcome.ranks[2].killed_by_us);
}

}  // namespace
}  // namespace ditbench::slurm_job_test

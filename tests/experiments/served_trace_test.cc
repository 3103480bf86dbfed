// A serving trial that replays a trace (`serve: {arrivals: trace, trace: FILE}`), as the sweep
// reader takes it: the trial key holds the trace's bytes, not its path; the trace must be a
// regular file inside the sweep's folder (or written as an absolute path); and what is wrong with
// it is a located spec error that never quotes another file's content.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/user_error.h"
#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial.h"
#include "experiments/trial_identity.h"
#include "experiments/trial_requests.h"
#include "tests/support/temp_dir.h"

namespace ditbench::served_trace_test {
namespace {

constexpr const char* kHeader = "arrival_s,width,height,frames,steps\n";

class ServedTraceTest : public testing::Test {
 protected:
  // Writes `text` to `folder`/`name`, creating the folder.
  static void Write(const std::filesystem::path& folder, const std::string& name,
                    const std::string& text) {
    std::filesystem::create_directories(folder);
    std::ofstream(folder / name, std::ios::binary) << text;
  }

  // Writes a sweep serving the trace `trace` (as written in the sweep) into `folder` and
  // parses it.
  static ParseResult Sweep(const std::filesystem::path& folder, const std::string& trace) {
    Write(folder, "sweep.yaml",
          "name: traced\n"
          "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2}\n"
          "include:\n"
          "  - {serve: {arrivals: trace, trace: " +
              trace + "}}\n");
    return ParseSweepFile(folder / "sweep.yaml");
  }

  // The one trial of the sweep in `folder` serving `trace`.
  static TrialConfig Trial(const std::filesystem::path& folder, const std::string& trace) {
    const ParseResult parsed = Sweep(folder, trace);
    EXPECT_TRUE(parsed.ok()) << (parsed.errors.empty() ? "" : parsed.errors[0].ToString());
    const std::vector<TrialConfig> trials = ExpandSweep(parsed.spec, 1).trials;
    EXPECT_EQ(trials.size(), 1u);
    return trials.empty() ? TrialConfig{} : trials[0];
  }

  // The parser's one error for the sweep in `folder` serving `trace`.
  static std::string ErrorOf(const std::filesystem::path& folder, const std::string& trace) {
    const ParseResult parsed = Sweep(folder, trace);
    EXPECT_EQ(parsed.errors.size(), 1u);
    return parsed.errors.empty() ? "no error" : parsed.errors[0].ToString();
  }

  test::TempDir dir_;
};

// Only a trace's key moved: a generated load is hashed as before (this golden is the key the
// build before trace digests gave this trial).
TEST_F(ServedTraceTest, AGeneratedLoadKeepsItsKey) {
  const ParseResult parsed = ParseSweep(
      "name: g\ndefaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, "
      "serve: {arrivals: poisson, rate: 2.5, requests: 40}}\n",
      dir_ / "g.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.errors[0].ToString();
  EXPECT_EQ(TrialKey(ExpandSweep(parsed.spec, 1).trials.at(0)), "478c7d65412fd999");
}

// A trace that grew from 2 requests to 200 kept the 2-request trial's key: `run` kept its result
// and `compare` called the campaigns the same.
TEST_F(ServedTraceTest, EditingTheTraceGivesNewKeys) {
  Write(dir_.path(), "arrivals.csv", std::string(kHeader) + "0,256,256,0,2\n1,256,256,0,2\n");
  const TrialConfig two = Trial(dir_.path(), "arrivals.csv");
  std::string grown = kHeader;
  for (int i = 0; i < 200; ++i) grown += std::to_string(i) + ",256,256,0,2\n";
  Write(dir_.path(), "arrivals.csv", grown);
  const TrialConfig many = Trial(dir_.path(), "arrivals.csv");
  EXPECT_EQ(two.serve->trace, many.serve->trace);
  EXPECT_NE(TrialKey(two), TrialKey(many));
  EXPECT_NE(IdentityText(many).find("\"trace_sha256\":\"" + Sha256Hex(grown) + "\""),
            std::string::npos)
      << IdentityText(many);
}

// The key is of the trace's bytes: the sweep folder moved (or copied) with its trace keeps
// every key, and the worker reads the same digest back from the trial file.
TEST_F(ServedTraceTest, TheSameTraceAtAnotherPathKeepsItsKey) {
  const std::string trace = std::string(kHeader) + "0,256,256,0,2\n0.5,256,256,0,2\n";
  Write(dir_ / "here", "arrivals.csv", trace);
  Write(dir_ / "there" / "moved", "arrivals.csv", trace);
  const TrialConfig here = Trial(dir_ / "here", "arrivals.csv");
  const TrialConfig there = Trial(dir_ / "there" / "moved", "arrivals.csv");
  EXPECT_NE(here.serve->trace, there.serve->trace);
  EXPECT_EQ(TrialKey(here), TrialKey(there));
  EXPECT_EQ(IdentityText(here).find("here"), std::string::npos) << IdentityText(here);
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(here)).serve, here.serve);
  EXPECT_EQ(here.serve->trace_sha256, Sha256Hex(trace));
}

// The trace a trial was keyed by is the one it serves: changed after the sweep was read, it is
// refused rather than measured under a key that names other requests.
TEST_F(ServedTraceTest, ATraceChangedAfterTheSweepWasReadIsRefused) {
  Write(dir_.path(), "arrivals.csv", std::string(kHeader) + "0,256,256,0,2\n");
  const TrialConfig trial = Trial(dir_.path(), "arrivals.csv");
  EXPECT_EQ(TrialRequests(trial).size(), 1u);
  Write(dir_.path(), "arrivals.csv", std::string(kHeader) + "0,256,256,0,2\n1,256,256,0,2\n");
  try {
    TrialRequests(trial);
    FAIL() << "a changed trace was served";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("has changed since the sweep was read"),
              std::string::npos)
        << error.what();
  }
}

// A missing trace was an invalid trial found at launch; it is the sweep's mistake, located.
TEST_F(ServedTraceTest, AMissingTraceIsASpecErrorNamingTheKey) {
  const std::string error = ErrorOf(dir_.path(), "missing.csv");
  EXPECT_EQ(error.rfind((dir_ / "sweep.yaml").string() + ":4:", 0), 0u) << error;
  EXPECT_NE(error.find("'include.serve.trace'"), std::string::npos) << error;
  EXPECT_NE(error.find("missing.csv: cannot read: No such file or directory; expected an arrival "
                       "trace (CSV) file"),
            std::string::npos)
      << error;
}

// A trace that is a link, or that resolves outside the sweep's folder, could point at any file
// the user can read (a key, a password file), and a trace's errors reach the console, the
// database and the HTML report: refused, never read, never quoted.
TEST_F(ServedTraceTest, ALinkOrAPathOutOfTheSweepFolderIsRefusedUnread) {
  const std::string secret = "TOPSECRET-first-line\n";
  Write(dir_ / "private", "key.txt", secret);
  Write(dir_ / "private", "arrivals.csv", std::string(kHeader) + "0,256,256,0,2\n");
  Write(dir_ / "sweep", "inside.csv", std::string(kHeader) + "0,256,256,0,2\n");
  std::filesystem::create_symlink(dir_ / "private" / "key.txt", dir_ / "sweep" / "out.csv");
  std::filesystem::create_symlink(dir_ / "sweep" / "inside.csv", dir_ / "sweep" / "in.csv");
  const std::vector<std::string> traces = {"out.csv", "../private/key.txt",
                                           "../private/arrivals.csv", "in.csv",
                                           (dir_ / "sweep" / "in.csv").string()};
  for (const std::string& trace : traces) {
    const std::string error = ErrorOf(dir_ / "sweep", trace);
    EXPECT_EQ(error.find("TOPSECRET"), std::string::npos) << error;
    EXPECT_NE(error.find("'include.serve.trace'"), std::string::npos) << error;
    const bool link = trace.ends_with("in.csv");
    EXPECT_NE(error.find(link ? "is a symbolic link" : "resolves outside the sweep file's folder"),
              std::string::npos)
        << trace << ": " << error;
  }
  // Written as an absolute path, a trace elsewhere is the user's explicit choice.
  EXPECT_EQ(Trial(dir_ / "sweep", (dir_ / "private" / "arrivals.csv").string()).serve->trace,
            dir_ / "private" / "arrivals.csv");
}

}  // namespace
}  // namespace ditbench::served_trace_test

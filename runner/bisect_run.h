// `ditbench bisect`: which build of an ordered list first made one trial slower. Each build it
// measures is one campaign of the database, run by RunSweep (runner/sweep_run.h) with the
// build's worker, `--only KEY`, `--new` and the replicates asked for, and recorded with that
// build (RunOptions::BuildUnderTest) so that `compare` and the history tell the builds apart.
// Each measured build is judged against the good and the bad end by CompareCampaigns, the
// rule of `ditbench compare` (analysis/comparison.h); the search is plan/bisect.h.
//
// The ends: --good and --bad each name a build of the list, measured first like any other, or
// a campaign of the database that measured the trial (its recorded launches are the end; its
// position is its build's in the list, else before the list for good and after it for bad).
// The trial's sweep is the one its reference campaign ran (the good end's campaign, else the
// bad end's, else the newest campaign that recorded the key), on the --gpus it ran with.
//
// A build that cannot be judged (its build command failed, its trial failed or did not start,
// or its verdicts contradict each other) is skipped, and another build between the ends is
// measured instead; the answer is then a range. An end that cannot be measured stops the
// bisection.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "plan/bisect.h"
#include "runner/sweep_run.h"

namespace ditbench {

struct BisectOptions {
  std::filesystem::path db = "results.db";
  std::string key;                  // the trial key (--only)
  std::string good, bad;            // a build of `builds`, or a campaign id
  std::vector<std::string> builds;  // oldest first: worker paths, or revisions (--revs)
  int replicates = 3;               // launches per measured build
  std::string gpus;                 // empty: what the reference campaign ran with
  std::filesystem::path run_root;   // empty: <db stem>.runs beside the database
  std::optional<double> noise_floor_pct, min_effect_pct;  // as `compare` takes them
};

// The worker program of one build of the list (the entry itself, or what a build command
// made of it: launch/build_command.h), or nothing with one line saying why.
using BuildWorker = std::function<std::optional<std::filesystem::path>(const std::string& build,
                                                                       std::string& problem)>;

// What the bisection does to the world besides storage: RunSweep's effects, and how a build
// becomes a worker. Borrowed.
struct BisectEffects {
  SweepEffects sweep;
  BuildWorker worker;
};

// One build measured, as the bisection judged it.
struct MeasuredBuild {
  int position = 0;  // 0-based in the list
  std::string build;
  std::optional<std::int64_t> campaign;  // none: it never ran (its build failed)
  BuildJudgement judgement = BuildJudgement::kUnclear;
  std::string detail;  // "vs good: same +1.2%; vs bad: faster -48.0%", or what failed
};

struct BisectOutcome {
  std::vector<MeasuredBuild> measured;  // in the order measured, the ends included
  std::vector<int> suspects;            // BisectSearch::Suspects(); empty: no answer
};

// Runs the bisection, printing each measured build and the answer to `out` and RunSweep's
// progress to `progress`. Returns the exit code: 0 with an answer; 1 when there is nothing to
// bisect (good and bad do not differ beyond the noise floor, or bad is not slower) or an end
// cannot be measured; 2 for bad input (unknown key, good == bad, an end that is neither a
// build of the list nor a campaign, ends out of order), one line on `err`; 130 interrupted.
int RunBisect(const BisectOptions& options, const BisectEffects& effects, std::ostream& out,
              std::ostream& progress, std::ostream& err, BisectOutcome* outcome = nullptr);

}  // namespace ditbench

#include "runner/bisect_run.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "analysis/comparison.h"
#include "base/atomic_file.h"
#include "base/did_you_mean.h"
#include "base/exit_codes.h"
#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "base/user_error.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial.h"
#include "runner/run_folder.h"
#include "storage/iso_time.h"
#include "storage/results_db.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

// One end of the bisection: a build of the list (measured like any other), or a campaign.
struct End {
  std::string text;                      // as given
  int position = 0;                      // in the list; -1 before it, count after it
  std::optional<std::int64_t> campaign;  // given, or once measured
};

std::optional<std::int64_t> CampaignId(const std::string& text) {
  std::int64_t id = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, id);
  if (ec != std::errc() || ptr != end || id < 1) return std::nullopt;
  return id;
}

std::string BuildName(const BisectOptions& options, int position) {
  if (position < 0) return "before the list";
  if (position >= static_cast<int>(options.builds.size())) return "after the list";
  return options.builds[position];
}

// What one `compare` of the trial said: its verdict and a few words ("same, +1.2%"), or why
// it was not compared ("B: failed").
struct KeyVerdict {
  std::optional<Verdict> verdict;
  std::string text;
  std::string thresholds;
};

class Bisection {
 public:
  Bisection(const BisectOptions& options, const BisectEffects& effects, std::ostream& out,
            std::ostream& progress, std::ostream& err)
      : options_(options), effects_(effects), out_(out), progress_(progress), err_(err) {}

  int Run(BisectOutcome& outcome);

 private:
  void CheckOptions() const;
  const CampaignInfo& ReferenceCampaign(const std::vector<CampaignInfo>& campaigns);
  End ResolveEnd(const std::string& text, bool good, const std::vector<CampaignInfo>& campaigns);
  std::filesystem::path SweepFile(const CampaignInfo& reference) const;
  // Measures the build at `position`: a new campaign, or nothing (`problem` says why) when
  // its worker could not be made or RunSweep refused to start (exit `refused`).
  std::optional<std::int64_t> Measure(int position, std::string& problem, int& refused);
  KeyVerdict Compare(std::int64_t a, std::int64_t b);
  std::string CampaignLabel(const End& end) const;
  // Measures the ends that are builds, each recorded in `outcome`: the exit code when one
  // cannot be measured, else 0.
  int MeasureEnds(End& good, End& bad, BisectOutcome& outcome);
  // Measures the build at `position` and judges it against the ends; `refused` as Measure.
  MeasuredBuild MeasureBetween(int position, const End& good, const End& bad, int& refused);

  const BisectOptions& options_;
  const BisectEffects& effects_;
  std::ostream& out_;
  std::ostream& progress_;
  std::ostream& err_;
  std::unique_ptr<ResultsDb> db_;
  std::filesystem::path run_root_, sweep_;
  std::string gpus_, session_;
  std::map<std::string, std::set<std::int64_t>> campaigns_by_key_;
};

void Bisection::CheckOptions() const {
  if (options_.key.empty()) throw UserError("--only KEY: the trial key to bisect is missing");
  if (options_.builds.empty())
    throw UserError("no builds to bisect: pass --builds LIST or --build-command with --revs LIST");
  std::set<std::string> seen;
  for (const std::string& build : options_.builds)
    if (!seen.insert(build).second)
      throw UserError(fmt::format("build '{}' is listed twice: the list is an ordered set", build));
  if (options_.good == options_.bad)
    throw UserError(
        fmt::format("--good and --bad are both '{}': a build cannot be bisected against itself",
                    options_.good));
  if (options_.replicates < 1 || options_.replicates > kMaxReplicates)
    throw UserError(
        fmt::format("--replicates {}: expected 1 to {}", options_.replicates, kMaxReplicates));
}

End Bisection::ResolveEnd(const std::string& text, bool good,
                          const std::vector<CampaignInfo>& campaigns) {
  const char* option = good ? "--good" : "--bad";
  const int count = static_cast<int>(options_.builds.size());
  End end;
  end.text = text;
  if (auto at = std::find(options_.builds.begin(), options_.builds.end(), text);
      at != options_.builds.end()) {
    end.position = static_cast<int>(at - options_.builds.begin());
    return end;
  }
  const std::optional<std::int64_t> id = CampaignId(text);
  auto campaign = std::find_if(campaigns.begin(), campaigns.end(),
                               [&](const CampaignInfo& c) { return id && c.id == *id; });
  if (campaign == campaigns.end()) {
    throw UserError(fmt::format(
        "{} '{}': neither a build of the list ({} builds, '{}' to '{}') nor a campaign of {} "
        "({})",
        option, text, count, options_.builds.front(), options_.builds.back(), options_.db.string(),
        campaigns.empty()
            ? std::string("it has none")
            : fmt::format("campaigns {} to {}", campaigns.front().id, campaigns.back().id)));
  }
  const auto statuses = db_->reader().TrialStatuses(campaign->id);
  const auto status = statuses.find(options_.key);
  if (status == statuses.end() || status->second != TrialStatus::kOk) {
    throw UserError(fmt::format("{} {}: campaign {} has no ok measurement of trial {} ({})", option,
                                text, campaign->id, options_.key,
                                status == statuses.end()
                                    ? std::string("not recorded")
                                    : std::string(StatusName(status->second))));
  }
  end.campaign = campaign->id;
  auto at = std::find(options_.builds.begin(), options_.builds.end(), campaign->record.build);
  end.position = at != options_.builds.end() ? static_cast<int>(at - options_.builds.begin())
                 : good                      ? -1
                                             : count;
  return end;
}

const CampaignInfo& Bisection::ReferenceCampaign(const std::vector<CampaignInfo>& campaigns) {
  for (const CampaignInfo& c : campaigns)
    for (const auto& [key, status] : db_->reader().TrialStatuses(c.id))
      campaigns_by_key_[key].insert(c.id);
  const auto found = campaigns_by_key_.find(options_.key);
  if (found == campaigns_by_key_.end()) {
    std::vector<std::string> keys;
    for (const auto& [key, ids] : campaigns_by_key_) keys.push_back(key);
    const std::string near = DidYouMean(options_.key, keys);
    throw UserError(fmt::format(
        "--only '{}': no campaign of {} recorded this trial key (expected a key as `ditbench "
        "query` lists them); {}",
        options_.key, options_.db.string(),
        near.empty() ? std::string("no key is near it") : "did you mean " + near + "?"));
  }
  const std::int64_t newest = *found->second.rbegin();
  return *std::find_if(campaigns.begin(), campaigns.end(),
                       [&](const CampaignInfo& c) { return c.id == newest; });
}

// The sweep file as the campaign ran it: its own file while its text is unchanged, else the
// stored text written to <run root>/bisect/ (a `command` workload's relative program is then
// looked up from there).
std::filesystem::path Bisection::SweepFile(const CampaignInfo& reference) const {
  const CampaignRecord& record = reference.record;
  // The path is the database's word, and the file may have changed kind since: read as
  // untrusted input (a FIFO never blocks), and any problem means "use the stored text".
  try {
    if (Sha256Hex(ReadRegularFile(record.sweep_path, kMaxSweepFileBytes)) == record.spec_hash)
      return record.sweep_path;
  } catch (const std::exception&) {
  }
  const auto folder = run_root_ / "bisect";
  std::filesystem::create_directories(folder);
  // A file name, whatever the database's name and hash hold ('/', "..": a sweep's name is any
  // printable text).
  std::string name =
      fmt::format("{}-{}", record.sweep_name.substr(0, 100), record.spec_hash.substr(0, 12));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  const auto path = folder / (name + ".yaml");
  WriteFileAtomically(path, record.spec_text, /*durable=*/false);  // throws naming the file
  return path;
}

std::optional<std::int64_t> Bisection::Measure(int position, std::string& problem, int& refused) {
  const std::string& build = options_.builds.at(position);
  const std::optional<std::filesystem::path> worker = effects_.worker(build, problem);
  if (!worker) return std::nullopt;
  RunOptions run;
  run.sweep = sweep_;
  run.db = options_.db;
  run.gpus = gpus_;
  run.fresh = true;
  run.only = {options_.key};
  run.worker = *worker;
  run.command_prefix = *worker;
  run.run_root = run_root_;
  run.replicates = options_.replicates;
  run.build_under_test = RunOptions::BuildUnderTest{build, session_, position};
  const int code = RunSweep(run, effects_.sweep, progress_, err_);
  if (code == kExitInterrupted || code == kExitUsage || code == kExitStorageFailed) {
    refused = code;
    problem = code == kExitUsage          ? "ditbench run refused to start it (above)"
              : code == kExitStorageFailed ? "the results database or the disk failed (above)"
                                           : "interrupted";
    return std::nullopt;
  }
  const std::vector<CampaignInfo> campaigns = db_->reader().Campaigns();
  for (auto c = campaigns.rbegin(); c != campaigns.rend(); ++c) {
    const nlohmann::json& mark = c->record.environment.value("bisect", nlohmann::json());
    if (mark.is_object() && mark.value("session", "") == session_ &&
        mark.value("position", -1) == position)
      return c->id;
  }
  problem = "no campaign was recorded for it";
  return std::nullopt;
}

KeyVerdict Bisection::Compare(std::int64_t a, std::int64_t b) {
  const CampaignSet side_a{options_.db, {a}, std::to_string(a)};
  const CampaignSet side_b{options_.db, {b}, std::to_string(b)};
  const Comparison comparison =
      CompareCampaigns(db_->reader(), side_a, db_->reader(), side_b,
                       CompareSettings{options_.noise_floor_pct, options_.min_effect_pct});
  KeyVerdict result;
  for (const ComparedTrial& t : comparison.trials) {
    if (t.trial_key != options_.key) continue;
    result.verdict = t.change.verdict;
    result.text = fmt::format("{} ({:+.1f}%)", VerdictText(t), t.change.change.pct);
    result.thresholds = t.thresholds;
    return result;
  }
  result.text = "not compared";
  for (const UnmatchedTrial& u : comparison.unmatched)
    if (u.trial_key == options_.key) result.text = u.why;
  return result;
}

std::string Bisection::CampaignLabel(const End& end) const {
  const int count = static_cast<int>(options_.builds.size());
  if (end.position < 0 || end.position >= count)
    return fmt::format("campaign {} ({} {})", *end.campaign,
                       end.position < 0 ? "before" : "after", "the list");
  return fmt::format("build {}/{} {} (campaign {})", end.position + 1, count,
                     options_.builds[end.position], *end.campaign);
}

int Bisection::MeasureEnds(End& good, End& bad, BisectOutcome& outcome) {
  for (End* end : {&good, &bad}) {
    if (end->campaign) continue;
    std::string problem;
    int refused = 0;
    end->campaign = Measure(end->position, problem, refused);
    MeasuredBuild measured{end->position, options_.builds[end->position], end->campaign,
                           end == &good ? BuildJudgement::kGood : BuildJudgement::kBad, "end"};
    if (end->campaign) {  // it ran: did the trial measure ok?
      const auto statuses = db_->reader().TrialStatuses(*end->campaign);
      const auto status = statuses.find(options_.key);
      if (status == statuses.end() || status->second != TrialStatus::kOk) {
        problem = fmt::format("its trial did not measure ok in campaign {} ({})", *end->campaign,
                              status == statuses.end() ? std::string("not recorded")
                                                       : std::string(StatusName(status->second)));
        end->campaign.reset();
      }
    }
    if (!end->campaign) {
      measured.judgement = BuildJudgement::kFailed;
      measured.detail = problem;
      outcome.measured.push_back(measured);
      if (refused) return refused;
      err_ << fmt::format("ditbench bisect: error: cannot measure the {} end, build {}: {}\n",
                          end == &good ? "good" : "bad", end->text, problem);
      return kExitTrialsFailed;
    }
    outcome.measured.push_back(measured);
  }
  return 0;
}

MeasuredBuild Bisection::MeasureBetween(int position, const End& good, const End& bad,
                                        int& refused) {
  MeasuredBuild measured;
  measured.position = position;
  measured.build = options_.builds[position];
  measured.campaign = Measure(position, measured.detail, refused);
  if (measured.campaign) {
    const KeyVerdict against_good = Compare(*good.campaign, *measured.campaign);
    const KeyVerdict against_bad = Compare(*bad.campaign, *measured.campaign);
    measured.detail = fmt::format("vs good: {}; vs bad: {}", against_good.text, against_bad.text);
    measured.judgement = !against_good.verdict && !against_bad.verdict
                             ? BuildJudgement::kFailed
                             : JudgeBuild(against_good.verdict.value_or(Verdict::kInconclusive),
                                          against_bad.verdict.value_or(Verdict::kInconclusive));
  } else {
    measured.judgement = BuildJudgement::kFailed;
  }
  return measured;
}

int Bisection::Run(BisectOutcome& outcome) {
  CheckOptions();
  run_root_ = options_.run_root.empty() ? DefaultRunRoot(options_.db) : options_.run_root;
  if (!std::filesystem::exists(options_.db))
    throw UserError(fmt::format("--db {}: no such database", options_.db.string()));
  db_ = ResultsDb::Open(options_.db, /*read_only=*/true);
  const std::vector<CampaignInfo> campaigns = db_->reader().Campaigns();
  const CampaignInfo& fallback = ReferenceCampaign(campaigns);
  End good = ResolveEnd(options_.good, true, campaigns);
  End bad = ResolveEnd(options_.bad, false, campaigns);
  if (good.campaign && good.campaign == bad.campaign)
    throw UserError(fmt::format("--good and --bad are both campaign {}", *good.campaign));
  if (good.position >= bad.position)
    throw UserError(fmt::format(
        "--good '{}' ({}) is not before --bad '{}' ({}): the list runs oldest first", good.text,
        BuildName(options_, good.position), bad.text, BuildName(options_, bad.position)));
  auto by_id = [&](std::optional<std::int64_t> id) -> const CampaignInfo* {
    for (const CampaignInfo& c : campaigns)
      if (id && c.id == *id) return &c;
    return nullptr;
  };
  const CampaignInfo* reference = by_id(good.campaign);
  if (!reference) reference = by_id(bad.campaign);
  if (!reference) reference = &fallback;
  if (std::string owned = ClaimRunRoot(run_root_, options_.db); !owned.empty())
    throw UserError(owned);
  sweep_ = SweepFile(*reference);
  gpus_ = !options_.gpus.empty() ? options_.gpus
                                 : reference->record.environment.value("gpus", std::string("auto"));
  session_ = fmt::format("{}-{}", IsoUtc(static_cast<double>(std::time(nullptr))), ::getpid());
  out_ << fmt::format("bisect {}: {} builds, good {}, bad {}; sweep {} (campaign {}), --gpus {}, "
                      "{} replicates per build\n",
                      options_.key, options_.builds.size(), options_.good, options_.bad,
                      sweep_.string(), reference->id, gpus_, options_.replicates);

  // The ends that are builds are measured first; an end that cannot be is the end of it.
  if (const int code = MeasureEnds(good, bad, outcome)) return code;
  const KeyVerdict ends = Compare(*good.campaign, *bad.campaign);
  out_ << fmt::format("good {} -> bad {}: {}{}\n", CampaignLabel(good), CampaignLabel(bad),
                      ends.text, ends.thresholds.empty() ? "" : " [" + ends.thresholds + "]");
  if (ends.verdict != Verdict::kSlower) {
    std::string why;
    if (!ends.verdict) why = fmt::format("the trial was not compared ({})", ends.text);
    else if (*ends.verdict == Verdict::kSame)
      why = "good and bad do not differ beyond the noise floor";
    else if (*ends.verdict == Verdict::kFaster) why = "bad is faster than good";
    else why = "good and bad cannot be told apart (inconclusive; more --replicates may tell)";
    err_ << fmt::format("ditbench bisect: {}: nothing to bisect ({} -> {}: {}{})\n", why,
                        CampaignLabel(good), CampaignLabel(bad), ends.text,
                        ends.thresholds.empty() ? "" : "; " + ends.thresholds);
    return kExitTrialsFailed;
  }

  BisectSearch search(static_cast<int>(options_.builds.size()), good.position, bad.position);
  const int count = search.count();
  while (const std::optional<int> next = search.Next()) {
    if (effects_.sweep.interrupt.Requested()) return kExitInterrupted;
    int refused = 0;
    MeasuredBuild measured = MeasureBetween(*next, good, bad, refused);
    if (refused) return refused;
    search.Record(*next, measured.judgement);
    out_ << fmt::format("build {}/{} {}{}: {} ({}){}\n", *next + 1, count, measured.build,
                        measured.campaign ? fmt::format(" (campaign {})", *measured.campaign) : "",
                        BuildJudgementName(measured.judgement), measured.detail,
                        measured.judgement == BuildJudgement::kFailed ||
                                measured.judgement == BuildJudgement::kUnclear
                            ? ": cannot judge it, skipped"
                            : "");
    outcome.measured.push_back(std::move(measured));
  }
  outcome.suspects = search.Suspects();
  std::vector<std::string> names;
  for (int p : outcome.suspects)
    names.push_back(p < count ? fmt::format("build {}/{} {}", p + 1, count, options_.builds[p])
                              : fmt::format("the bad end, {}", CampaignLabel(bad)));
  out_ << fmt::format("measured {} build{}; ", outcome.measured.size(),
                      outcome.measured.size() == 1 ? "" : "s");
  if (names.size() == 1) {
    out_ << "first bad build: " << names.front() << "\n";
  } else {
    out_ << fmt::format("first bad build is one of: {} (the others could not be judged)\n",
                        fmt::join(names, ", "));
  }
  return kExitOk;
}

}  // namespace

int RunBisect(const BisectOptions& options, const BisectEffects& effects, std::ostream& out,
              std::ostream& progress, std::ostream& err, BisectOutcome* outcome) {
  BisectOutcome ignored;
  try {
    return Bisection(options, effects, out, progress, err).Run(outcome ? *outcome : ignored);
  } catch (const UserError& e) {  // the usage problems of a bisection: one line, exit 2
    err << "ditbench bisect: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const StorageError& e) {  // the database: exit 3, as from every command
    err << "ditbench bisect: error: " << OneLine(e.what()) << "\n";
    return StorageErrorExit(e);
  } catch (const std::exception& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    err << "ditbench bisect: error: " << message << "\n";
    return kExitTrialsFailed;
  }
}

}  // namespace ditbench

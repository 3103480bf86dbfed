// `ditbench campaigns`: see cli/campaigns.h.
#include "cli/campaigns.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analysis/history.h"
#include "base/terminal_text.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/escaped_error.h"
#include "report/html_text.h"
#include "report/output_file.h"
#include "storage/results_db.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

void List(ResultsReader& db, std::ostream& out) {
  const std::vector<CampaignInfo> campaigns = db.Campaigns();
  if (campaigns.empty()) {
    out << "no campaigns\n";
    return;
  }
  out << fmt::format("{:>4}  {:<23}  {:<16}  {:<20}  {:>6}  {:<8}  {}\n", "id", "started",
                     "sweep", "build", "trials", "excluded", "label");
  for (const CampaignInfo& c : campaigns) {
    out << fmt::format("{:>4}  {:<23}  {:<16}  {:<20}  {:>6}  {:<8}  {}\n", c.id,
                       IsoTime(c.started_at), ForTerminal(c.record.sweep_name),
                       ForTerminal(CampaignBuild(c)), c.trials, c.excluded ? "yes" : "no",
                       ForTerminal(c.label));
  }
}

// A label is shown on terminals, in pages and in JSON: one line of valid UTF-8 text, at most
// kMaxLabelBytes; anything else is refused here rather than stored.
constexpr std::size_t kMaxLabelBytes = 200;

void CheckLabel(const std::string& label) {
  if (const auto bad = FirstInvalidUtf8(label)) {
    throw UserError(fmt::format(
        "--label N TEXT: TEXT is not valid UTF-8 (byte {} is 0x{:02x}); give the label as UTF-8",
        *bad + 1, static_cast<unsigned char>(label[*bad])));
  }
  if (ForTerminal(label, kMaxLabelBytes) != label) {
    throw UserError(
        fmt::format("--label N TEXT: '{}' is not one line of printable text of at most {} bytes",
                    ForTerminal(label, 60), kMaxLabelBytes));
  }
}

int RunCampaignsOrThrow(const CampaignsOptions& options, std::ostream& out) {
  const int actions = (options.exclude ? 1 : 0) + (options.include ? 1 : 0) +
                      (options.label_campaign ? 1 : 0);
  if (actions > 1) {
    throw UserError("give one of --exclude, --include and --label at a time");
  }
  if (options.label_campaign) CheckLabel(options.label);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(options.db, ec)) {
    throw UserError(fmt::format("no results database at '{}'", options.db.string()));
  }
  // Read-only first: an older schema is refused with the `ditbench migrate` hint, never
  // migrated behind the user's back.
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(options.db, /*read_only=*/true);
  if (actions == 0) {
    List(db->reader(), out);
    return kExitOk;
  }
  db.reset();
  db = ResultsDb::Open(options.db);
  if (options.exclude) {
    db->writer().SetCampaignExcluded(*options.exclude, true);
    out << fmt::format("campaign {} excluded: left out of history, learned noise floors and "
                       "reports; its data is kept (--include {} takes it back)\n",
                       *options.exclude, *options.exclude);
  } else if (options.include) {
    db->writer().SetCampaignExcluded(*options.include, false);
    out << fmt::format("campaign {} included again\n", *options.include);
  } else {
    db->writer().SetCampaignLabel(*options.label_campaign, options.label);
    out << (options.label.empty()
                ? fmt::format("campaign {}: label cleared\n", *options.label_campaign)
                : fmt::format("campaign {} labelled '{}'\n", *options.label_campaign,
                              options.label));
  }
  return kExitOk;
}

}  // namespace

int RunCampaigns(const CampaignsOptions& options, std::ostream& out, std::ostream& err) {
  try {
    const int code = RunCampaignsOrThrow(options, out);
    CheckOutput(out, "standard output");  // a full disk is an error, never exit 0
    return code;
  } catch (const StorageError& e) {  // the database named is missing, damaged or foreign
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    err << "ditbench campaigns: error: " << message << '\n';
    return StorageErrorExit(e);
  } catch (...) {
    return ReportEscapedError("ditbench campaigns", err);
  }
}

std::function<int()> DefineCampaignsCommand(CLI::App& sub) {
  auto options = std::make_shared<CampaignsOptions>();
  auto label = std::make_shared<std::vector<std::string>>();
  sub.add_option("--db", options->db, "Results database")->capture_default_str();
  sub.add_option("--exclude", options->exclude,
                 "Leave campaign N out of history, noise floors and reports (data kept)");
  sub.add_option("--include", options->include, "Take an excluded campaign N back");
  sub.add_option("--label", *label, "Name campaign N: --label N TEXT (empty TEXT clears it)")
      ->expected(2);
  return [options, label] {
    if (!label->empty()) {
      try {
        std::size_t used = 0;
        options->label_campaign = std::stoll(label->at(0), &used);
        if (used != label->at(0).size()) throw UserError("trailing text");
      } catch (const std::exception&) {
        std::cerr << "ditbench campaigns: error: --label N TEXT: '" << label->at(0)
                  << "' is not a campaign id\n";
        return kExitUsage;
      }
      options->label = label->at(1);
    }
    return RunCampaigns(*options, std::cout, std::cerr);
  };
}

}  // namespace ditbench

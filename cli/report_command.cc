// `ditbench report`: writes the HTML comparison report (report/html_report.h), with the
// Planner section computed by plan/planner_view.h (report/ may not use plan/).
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/escaped_error.h"
#include "plan/planner_view.h"
#include "report/html_report.h"
#include "report/output_file.h"
#include "storage/storage_error.h"

namespace ditbench {

std::function<int()> DefineReportCommand(CLI::App& sub) {
  struct Flags {
    std::string db = "results.db";
    std::string output = "report.html";
    std::vector<std::string> sweeps;
    std::vector<std::int64_t> campaigns;
    std::string baseline;
  };
  auto flags = std::make_shared<Flags>();
  sub.add_option("--db", flags->db, "Results database")->capture_default_str();
  sub.add_option("--sweep", flags->sweeps, "Include the campaigns of these sweeps");
  sub.add_option("--campaign", flags->campaigns, "Include these campaign ids");
  sub.add_option("--baseline", flags->baseline,
                 "Open with a comparison of this campaign (\"3\", \"1,2\" or DB:ID) with the "
                 "--campaign ones, else with the newest campaign");
  sub.add_option("-o,--output", flags->output, "HTML file to write")->capture_default_str();
  return [flags] {
    ReportOptions options{flags->db, flags->sweeps, flags->campaigns, flags->output,
                          flags->baseline, BuildPlannerView};
    try {
      WriteHtmlReport(options);
    } catch (const StorageError& e) {  // the database named is missing, damaged or foreign
      std::cerr << "ditbench report: error: " << e.what() << '\n';
      return StorageErrorExit(e);
    } catch (...) {
      return ReportEscapedError("ditbench report", std::cerr);
    }
    std::cout << "wrote " << options.output.string() << '\n' << std::flush;
    return kExitOk;
  };
}

}  // namespace ditbench

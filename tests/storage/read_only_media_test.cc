// `query` and `report` read a results database on read-only media (an archive mounted
// read-only, a colleague's results on a read-only share). A WAL database normally needs its
// -shm file even to be read; storage opens it immutable when its folder cannot be written and no
// writer is running. Real read-only media: a read-only bind mount in a private mount namespace
// of a forked child (needs root, as in CI; skipped loudly otherwise).
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/table_printers.h"

#include "cli/query.h"
#include "report/html_report.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::read_only_media_test {
namespace {

// Runs `body` in a child whose view of `dir` is a read-only bind mount at `mount_point`.
// Returns the child's exit status, or -1 when the namespace or mount cannot be made.
template <typename Body>
int InReadOnlyMount(const std::filesystem::path& dir, const std::filesystem::path& mount_point,
                    Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0) _exit(100);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(100);
    if (mount(dir.c_str(), mount_point.c_str(), nullptr, MS_BIND, nullptr) != 0) _exit(100);
    if (mount(nullptr, mount_point.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
              nullptr) != 0)
      _exit(100);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return -2;
  return WEXITSTATUS(status) == 100 ? -1 : WEXITSTATUS(status);
}

TEST(ReadOnlyMediaTest, QueryAndReportReadADatabaseOnAReadOnlyMount) {
  test::TempDir dir, mount_point, out;
  {
    auto db = ResultsDb::Open(dir / "results.db");
    const auto campaign =
        db->writer().ResumeOrCreateCampaign(test::MakeCampaign("archived"), false);
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100));
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 55));
  }
  ASSERT_FALSE(std::filesystem::exists(dir / "results.db-wal"));  // closed cleanly
  const std::filesystem::path db = mount_point / "results.db";

  const int status = InReadOnlyMount(dir.path(), mount_point.path(), [&] {
    std::ofstream log(out / "child.log");
    if (std::ofstream(mount_point / "probe").good()) {
      log << "the mount is writable\n";
      return 3;
    }
    QueryOptions query;
    query.db = db;
    query.format = TableFormat::kCsv;
    query.columns = {"ulysses", "latency_ms"};
    std::ostringstream rows, err;
    if (RunQuery(query, rows, err) != 0) {
      log << "query: " << err.str();
      return 4;
    }
    std::ofstream(out / "query.csv") << rows.str();
    try {
      std::ofstream(out / "report.html") << RenderHtmlReport({db, {}, {}, {}, {}});
    } catch (const std::exception& e) {
      log << "report: " << e.what() << '\n';
      return 5;
    }
    return 0;
  });
  if (status == -1) GTEST_SKIP() << "SKIPPED LOUDLY: cannot make a read-only bind mount here "
                                    "(needs root and mount namespaces); read-only media untested";
  std::ifstream log_file(out / "child.log");
  const std::string log((std::istreambuf_iterator<char>(log_file)), {});
  ASSERT_EQ(status, 0) << log;
  std::ifstream csv(out / "query.csv");
  const std::string rows((std::istreambuf_iterator<char>(csv)), {});
  EXPECT_EQ(rows, "ulysses,latency_ms\r\n2,55\r\n1,100\r\n");  // fastest first
  std::ifstream html_file(out / "report.html");
  const std::string html((std::istreambuf_iterator<char>(html_file)), {});
  EXPECT_NE(html.find("archived"), std::string::npos);
  // Nothing was written beside the database.
  EXPECT_FALSE(std::filesystem::exists(dir / "results.db-shm"));
  EXPECT_FALSE(std::filesystem::exists(dir / "probe"));
}

}  // namespace
}  // namespace ditbench::read_only_media_test

// A served trial's requests in its trial file (contract/worker_contract.h, TrialFile::requests):
// written once by the coordinator, read back exactly, and refused, one line naming the file and
// the key, when the list is hostile.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "contract/worker_contract.h"
#include "experiments/trial_requests.h"
#include "tests/support/served_trials.h"
#include "tests/support/temp_dir.h"

namespace ditbench::trial_file_requests_test {
namespace {

TrialConfig Served() {
  TrialConfig c = test::TinyServedTrial(4, 5);
  c.serve->mix = {{256, 256, 0, 4, 1}, {512, 512, 0, 2, 3}};
  return c;
}

class TrialFileRequestsTest : public ::testing::Test {
 protected:
  std::filesystem::path Path() const { return dir_ / kTrialFileName; }
  nlohmann::json ServedJson() const {
    const TrialConfig config = Served();
    return ToJson(TrialFile{"k", "s", config, "cpu", MaterializeRequests(config)});
  }
  // What ReadTrialFile says of `j`, or "" when it reads it.
  std::string Refusal(const nlohmann::json& j) const {
    WriteFileAtomically(Path(), j.dump());
    try {
      ReadTrialFile(Path());
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  test::TempDir dir_;
};

TEST_F(TrialFileRequestsTest, AServedTrialsRequestsRoundTripExactly) {
  const TrialConfig config = Served();
  RequestList list = MaterializeRequests(config);
  ASSERT_EQ(list.requests.size(), 5u);
  WriteFileAtomically(Path(), ToJson(TrialFile{"k", "s", config, "cpu", list}).dump(2));
  for (RequestShape& shape : list.shapes) shape.weight = 1;  // a mix's weights are the load's
  EXPECT_EQ(ReadTrialFile(Path()).requests, list);
  EXPECT_EQ(ReadTrialRequests(Path()), list);
}

TEST_F(TrialFileRequestsTest, ATimedTrialsFileHoldsNoRequests) {
  const TrialConfig timed;
  const nlohmann::json j = ToJson(TrialFile{"k", "s", timed, "cpu", {}});
  EXPECT_FALSE(j.contains("requests"));
  WriteFileAtomically(Path(), j.dump());
  EXPECT_TRUE(ReadTrialFile(Path()).requests.empty());
  EXPECT_THROW(ReadTrialRequests(Path()), std::runtime_error);  // not a served trial's file
  nlohmann::json with = j;
  with["requests"] = ServedJson()["requests"];
  EXPECT_NE(Refusal(with).find("'requests' is"), std::string::npos) << Refusal(with);
}

// Each hostile list is refused with one line naming the file and the key.
TEST_F(TrialFileRequestsTest, HostileRequestListsAreRefusedNamingTheFileAndTheKey) {
  const nlohmann::json valid = ServedJson();
  ASSERT_EQ(Refusal(valid), "");
  struct Case {
    const char* key;       // the key the refusal names
    nlohmann::json value;  // set at `pointer`
    const char* pointer;
  };
  const std::vector<Case> cases = {
      {"requests", nullptr, "/requests"},
      {"requests", nlohmann::json::array(), "/requests"},
      {"requests.shapes", nlohmann::json::array(), "/requests/shapes"},
      {"requests.shapes[0].width", 8, "/requests/shapes/0/width"},
      {"requests.shapes[1].steps", 0, "/requests/shapes/1/steps"},
      {"requests.shapes[0].frames", -1, "/requests/shapes/0/frames"},
      {"requests.shapes[0].height", "256", "/requests/shapes/0/height"},
      {"requests.shapes[1]", 7, "/requests/shapes/1"},
      {"requests.arrival_s[0]", -1.0, "/requests/arrival_s/0"},
      {"requests.arrival_s[3]", 1e300, "/requests/arrival_s/3"},
      {"requests.arrival_s[2]", 0.0, "/requests/arrival_s/2"},  // before the arrival above
      {"requests.arrival_s[1]", "soon", "/requests/arrival_s/1"},
      {"requests.shape[4]", 2, "/requests/shape/4"},  // past the 2 shapes
      {"requests.shape[0]", -1, "/requests/shape/0"},
      {"requests.shape[0]", 0.5, "/requests/shape/0"},
      {"requests.shape", nlohmann::json::array({0}), "/requests/shape"},  // 1 index, 5 arrivals
      {"requests.arrival_s", nlohmann::json::array(), "/requests/arrival_s"},
  };
  ASSERT_GT(valid["requests"]["arrival_s"][1].get<double>(), 0) << "the arrivals below need a gap";
  for (const Case& c : cases) {
    nlohmann::json j = valid;
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    const std::string refusal = Refusal(j);
    EXPECT_NE(refusal.find(Path().string()), std::string::npos) << c.key << ": " << refusal;
    EXPECT_NE(refusal.find(std::string("'") + c.key + "'"), std::string::npos)
        << c.key << ": " << refusal;
    EXPECT_EQ(refusal.find('\n'), std::string::npos) << refusal;
  }
  nlohmann::json missing = valid;
  missing.erase("requests");  // a served trial's file written before requests were materialized
  EXPECT_NE(Refusal(missing).find("'requests' is missing"), std::string::npos) << Refusal(missing);
}

TEST_F(TrialFileRequestsTest, MoreRequestsThanALoadMayMakeAreRefused) {
  nlohmann::json j = ServedJson();
  const std::size_t count = static_cast<std::size_t>(kMaxServeRequests) + 1;
  j["requests"]["arrival_s"] = std::vector<double>(count, 0.0);
  j["requests"]["shape"] = std::vector<int>(count, 0);
  const std::string refusal = Refusal(j);
  EXPECT_NE(refusal.find("'requests.arrival_s'"), std::string::npos) << refusal.substr(0, 300);
  EXPECT_NE(refusal.find("an array of 1 to 1000000"), std::string::npos) << refusal.substr(0, 300);
}

}  // namespace
}  // namespace ditbench::trial_file_requests_test

#include "base/json_append.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ditbench::json_append_test {
namespace {

// The same text as dump(indent) once the first line's indent is added to every line after it.
std::string DumpNested(const nlohmann::json& value, int indent, unsigned depth) {
  std::string text = value.dump(indent);
  std::string nested;
  for (char c : text) {
    nested += c;
    if (c == '\n') nested.append(depth, ' ');
  }
  return nested;
}

TEST(JsonAppenderTest, IndentedIsDumpByteForByte) {
  const nlohmann::json value = {{"plain", "ulysses=2"},
                                {"quote", "a \"b\" \\ c"},
                                {"control", std::string("tab\there\nnew\x01")},
                                {"utf8", "b\xc3\xa4r \xe2\x82\xac"},
                                {"delete", std::string("\x7f")},
                                {"numbers", {1, -2, 3.25, 1e-7, 12345678901234.0, 0.1}},
                                {"unsigned", std::uint64_t{18446744073709551615u}},
                                {"empty object", nlohmann::json::object()},
                                {"empty array", nlohmann::json::array()},
                                {"nested", {{"deep", {{"deeper", {true, false, nullptr}}}}}},
                                {"key \"quoted\"", 1},
                                {"", "empty key"}};
  for (int indent : {2, 4}) {
    for (unsigned depth : {0u, 4u}) {
      std::string out = "prefix";
      JsonAppender json(out);
      json.Indented(value, indent, depth);
      EXPECT_EQ(out, "prefix" + DumpNested(value, indent, depth))
          << "indent " << indent << ", depth " << depth;
    }
  }
}

TEST(JsonAppenderTest, ATextThatIsNotUtf8ThrowsAsDumpDoes) {
  const nlohmann::json value = {{"bad", std::string("\xff\xfe")}};
  EXPECT_THROW(value.dump(2), nlohmann::json::type_error);
  std::string out;
  JsonAppender json(out);
  EXPECT_THROW(json.Indented(value, 2, 0), nlohmann::json::type_error);
}

}  // namespace
}  // namespace ditbench::json_append_test

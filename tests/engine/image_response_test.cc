// engine/image_response.h: the OpenAI images answer read as untrusted input.
#include "engine/image_response.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench {
namespace {

using ::testing::HasSubstr;

const std::string kWhere = "POST http://127.0.0.1:1/v1/images/generations";
// The 8-byte PNG signature and 3 bytes more, in base64.
const std::string kPngBase64 = "iVBORw0KGgoAAAAA";

TEST(DecodeBase64Test, Rfc4648Vectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"Zg==", "f"},
                                                         {"Zm8=", "fo"},
                                                         {"Zm9v", "foo"},
                                                         {"Zm9vYg==", "foob"},
                                                         {"Zm9vYmE=", "fooba"},
                                                         {"Zm9vYmFy", "foobar"},
                                                         {"+/+/", "\xfb\xff\xbf"}};
  for (const auto& [text, bytes] : vectors) {
    std::string out;
    EXPECT_EQ(DecodeBase64(text, out), std::nullopt) << text;
    EXPECT_EQ(out, bytes) << text;
  }
}

TEST(DecodeBase64Test, AnythingElseIsRefusedWithItsOffset) {
  std::string out = "kept";
  EXPECT_EQ(DecodeBase64("Zm9", out), 0u);  // not a multiple of 4
  EXPECT_EQ(DecodeBase64("Zm9vYmF", out), 4u);
  EXPECT_EQ(DecodeBase64("Zm=v", out), 2u);      // padding before the end of a group
  EXPECT_EQ(DecodeBase64("Zg==Zm9v", out), 2u);  // padding before the last group
  EXPECT_EQ(DecodeBase64("Z===", out), 1u);
  EXPECT_EQ(DecodeBase64("Zm9v\nZm9v", out), 8u);  // 9 characters
  EXPECT_EQ(DecodeBase64("Zm9v Zm9", out), 4u);    // whitespace
  EXPECT_EQ(DecodeBase64("Zm-_", out), 2u);        // the URL-safe alphabet
  EXPECT_EQ(out, "kept");                          // nothing appended on a refusal
}

TEST(SniffImageFormatTest, PngAndJpegByTheirSignatures) {
  EXPECT_EQ(SniffImageFormat(std::string("\x89PNG\r\n\x1a\n", 8) + "rest"), ImageFormat::kPng);
  EXPECT_EQ(SniffImageFormat("\xff\xd8\xff\xe0"), ImageFormat::kJpeg);
  EXPECT_EQ(SniffImageFormat("GIF89a"), ImageFormat::kOther);
  EXPECT_EQ(SniffImageFormat(""), ImageFormat::kOther);
  EXPECT_STREQ(ImageFormatName(ImageFormat::kPng), "png");
}

TEST(ParseImageResponseTest, ImagesAreDecodedInOrder) {
  const ImageResponse response = ParseImageResponse(
      R"({"created": 1, "data": [{"b64_json": ")" + kPngBase64 +
          R"("}, {"b64_json": "/9j/4A==", "revised_prompt": "x"}], "usage": {"n": 2}})",
      kWhere);
  ASSERT_EQ(response.error, "");
  ASSERT_EQ(response.images.size(), 2u);
  EXPECT_EQ(response.images[0].format, ImageFormat::kPng);
  EXPECT_EQ(response.images[0].bytes.size(), 12u);
  EXPECT_EQ(response.images[1].format, ImageFormat::kJpeg);
  EXPECT_EQ(response.images[1].bytes, "\xff\xd8\xff\xe0");
}

TEST(ParseImageResponseTest, WhatIsNotAnImagesAnswerIsOneLineNamingTheRequest) {
  const std::pair<std::string, std::string> cases[] = {
      {"<html>this is not JSON {\"data\": [", "not valid JSON"},
      {"", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"created": 1})", "no 'data' member"},
      {R"({"data": {}})", "'data' is not an array"},
      {R"({"data": []})", "'data' holds no image"},
      {R"({"data": [7]})", "data[0] is not an object"},
      {R"({"data": [{"url": "http://x/1.png"}]})", "holds a 'url', not 'b64_json'"},
      {R"({"data": [{"b64_json": 5}]})", "data[0].b64_json is not a string"},
      {R"({"data": [{"b64_json": ""}]})", "data[0].b64_json is empty"},
      {R"({"data": [{"b64_json": "Zm9v"}, {"b64_json": "Zm9v!!!!"}]})",
       "data[1].b64_json is not base64 (character 4 of 8)"},
      {R"({"error": {"message": "CUDA out of memory\n\u001b[31m", "type": "server_error"}})",
       "the server answered an error: CUDA out of memory\\n\\x1b[31m"},
      {R"({"error": "overloaded"})", "the server answered an error: overloaded"},
  };
  for (const auto& [body, expected] : cases) {
    const ImageResponse response = ParseImageResponse(body, kWhere);
    EXPECT_TRUE(response.images.empty()) << body;
    EXPECT_THAT(response.error, HasSubstr(expected)) << body;
    EXPECT_EQ(response.error.rfind(kWhere + ": ", 0), 0u) << response.error;
    EXPECT_EQ(response.error.find('\n'), std::string::npos) << response.error;
  }
}

TEST(ParseImageResponseTest, CapsAreCheckedBeforeDecoding) {
  ImageResponseLimits limits;
  limits.max_images = 2;
  limits.max_image_bytes = 6;
  EXPECT_THAT(ParseImageResponse(R"({"data": [{"b64_json": "Zm9v"}, {"b64_json": "Zm9v"},
                                             {"b64_json": "Zm9v"}]})",
                                 kWhere, limits)
                  .error,
              HasSubstr("'data' holds 3 images; expected at most 2"));
  EXPECT_THAT(
      ParseImageResponse(R"({"data": [{"b64_json": "Zm9vYmFyYmF6"}]})", kWhere, limits).error,
      HasSubstr("data[0] is about 9 bytes; expected at most 6"));
  EXPECT_EQ(ParseImageResponse(R"({"data": [{"b64_json": "Zm9vYmFy"}]})", kWhere, limits).error,
            "");
  // A document nested deeper than an answer needs is refused while it is read.
  const std::string deep = R"({"data": [{"b64_json": "Zm9v"}], "x": )" + std::string(5000, '[') +
                           std::string(5000, ']') + "}";
  EXPECT_THAT(ParseImageResponse(deep, kWhere).error, HasSubstr("nested more than"));
}

}  // namespace
}  // namespace ditbench

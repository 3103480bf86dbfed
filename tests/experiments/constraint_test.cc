#include "experiments/constraint.h"

#include <string>

#include <gtest/gtest.h>

namespace ditbench::constraint_test {
namespace {

int FirstFailing(const std::string& expression, const TrialConfig& config) {
  std::string problem;
  int position = -1;
  EXPECT_TRUE(CheckConstraint(expression, &problem, &position)) << expression << ": " << problem;
  ConstraintSet set({Constraint{expression}});
  return set.FirstFailing(config, 8);
}

// A `where` names a precision or scope by the same name a sweep writes, and it means the
// trial's own value: the constants come from the one table of names (experiments/trial.h).
TEST(ConstraintTest, PrecisionAndScopeConstantsMatchTheTrialsValue) {
  for (Precision p : AllPrecisions()) {
    TrialConfig c;
    c.precision = p;
    for (Precision other : AllPrecisions()) {
      const std::string expression = "precision == " + std::string(PrecisionName(other));
      EXPECT_EQ(FirstFailing(expression, c), p == other ? -1 : 0) << expression;
    }
  }
  for (Scope s : AllScopes()) {
    TrialConfig c;
    c.scope = s;
    for (Scope other : AllScopes()) {
      const std::string expression = "scope == " + std::string(ScopeName(other));
      EXPECT_EQ(FirstFailing(expression, c), s == other ? -1 : 0) << expression;
    }
  }
  EXPECT_EQ(AllPrecisions().size(), 4u);
  EXPECT_EQ(AllScopes().size(), 3u);
}

// `width`, `height` and `frames` read the trial's image (0 frames for an image); `tokens` a
// clip's frames x rows x columns, `latent` its latent rows.
TEST(ConstraintTest, WidthHeightFramesAndTokensOfAClip) {
  TrialConfig clip;
  clip.model = "wan2.1-t2v-14b";
  clip.resolution = 832;
  clip.height = 480;
  clip.frames = 81;
  EXPECT_EQ(FirstFailing("width == 832 && height == 480 && frames == 81", clip), -1);
  EXPECT_EQ(FirstFailing("tokens == 32760 && latent == 60 && resolution == 832", clip), -1);
  EXPECT_EQ(FirstFailing("height > width", clip), 0);
  TrialConfig image;
  EXPECT_EQ(FirstFailing("width == 1024 && height == 1024 && frames == 0", image), -1);
}

}  // namespace
}  // namespace ditbench::constraint_test

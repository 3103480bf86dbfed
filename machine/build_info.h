// The build that produced a result: git revision, "+dirty" when the tree had local changes.
#pragma once

#include <string>

namespace ditbench {

std::string BuildId();

}  // namespace ditbench

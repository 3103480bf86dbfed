#include "machine/build_info.h"

#include "generated/build_id.h"

namespace ditbench {

std::string BuildId() {
  std::string id = DITBENCH_GIT_REVISION;
  if (DITBENCH_GIT_DIRTY) id += "+dirty";
  return id;
}

}  // namespace ditbench

#include "contract/slurm_hostlist.h"

namespace ditbench {

std::string FirstSlurmHost(std::string_view nodelist) {
  const auto end = nodelist.find_first_of(",[");
  if (end == std::string_view::npos || nodelist[end] == ',')
    return std::string(nodelist.substr(0, end));
  // "prefix[first-last,...]suffix": the prefix and the first number of the range list.
  const auto close = nodelist.find(']', end);
  if (close == std::string_view::npos) return std::string(nodelist.substr(0, end));
  const std::string_view ranges = nodelist.substr(end + 1, close - end - 1);
  const std::string_view first = ranges.substr(0, ranges.find_first_of(",-"));
  std::string host(nodelist.substr(0, end));
  host += first;
  // A suffix after the bracket belongs to the same host name, up to the next comma.
  const std::string_view rest = nodelist.substr(close + 1);
  host += rest.substr(0, rest.find(','));
  return host;
}

}  // namespace ditbench

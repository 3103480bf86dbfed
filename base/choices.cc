#include "base/choices.h"

#include "base/user_error.h"

namespace ditbench {

std::string NameList(const std::vector<std::string_view>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
    list += names[i];
  }
  return list;
}

void ThrowUnknownChoice(std::string_view option, std::string_view text,
                        const std::vector<std::string_view>& names) {
  throw UserError(std::string(option) + " '" + std::string(text) + "': expected " + NameList(names),
                  InputLocation{"", 0, std::string(option)});
}

}  // namespace ditbench

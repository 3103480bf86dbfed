#include "cli/escaped_error.h"

#include <exception>
#include <ostream>

#include "base/exit_codes.h"
#include "base/terminal_text.h"
#include "base/user_error.h"
#include "report/output_file.h"
#include "storage/storage_error.h"

namespace ditbench {

int ReportEscapedError(const char* who, std::ostream& err) {
  try {
    throw;
  } catch (const UserError& e) {
    err << who << ": error: " << OneLine(e.what()) << "\n";
    return kExitUsage;
  } catch (const StorageError& e) {
    err << who << ": error: " << OneLine(e.what()) << "\n";
    return StorageErrorExit(e);
  } catch (const OutputWriteError& e) {
    err << who << ": error: " << OneLine(e.what()) << "\n";
  } catch (const std::exception& e) {
    err << who << ": internal error: " << OneLine(e.what()) << "\n";
  } catch (...) {
    err << who << ": internal error: unknown exception\n";
  }
  return kExitTrialsFailed;
}

}  // namespace ditbench

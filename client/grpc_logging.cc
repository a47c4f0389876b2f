#include "client/grpc_logging.h"

#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

namespace orthofs {
namespace {

void LogToSpdlog(gpr_log_func_args* args) {
  // Every gRPC failure that matters reaches us as a status, which we log ourselves.
  spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR ? spdlog::level::debug : spdlog::level::trace;
  spdlog::log(level, "grpc {}:{}: {}", args->file, args->line, args->message);
}

}  // namespace

void RouteGrpcLogsToSpdlog() {
  gpr_set_log_function(LogToSpdlog);
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_DEBUG);
}

}  // namespace orthofs

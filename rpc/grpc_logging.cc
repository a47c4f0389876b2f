#include "rpc/grpc_logging.h"

#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>

namespace orthofs {
namespace {

// gRPC's threads may still log while the process exits, after spdlog's registry is gone.
std::atomic<bool> spdlog_alive{true};

void LogToSpdlog(gpr_log_func_args* args) {
  if (!spdlog_alive.load(std::memory_order_relaxed)) return;
  // Every gRPC failure that matters reaches us as a status, which we log ourselves.
  spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR ? spdlog::level::debug : spdlog::level::trace;
  spdlog::log(level, "grpc {}:{}: {}", args->file, args->line, args->message);
}

}  // namespace

void RouteGrpcLogsToSpdlog() {
  gpr_set_log_function(LogToSpdlog);
  // gRPC formats every message at its verbosity or above, which costs time on hot paths: ask
  // for debug messages only when they would be printed.
  gpr_set_log_verbosity(spdlog::should_log(spdlog::level::debug) ? GPR_LOG_SEVERITY_DEBUG
                                                                 : GPR_LOG_SEVERITY_ERROR);
  // Runs before the destructor of spdlog's registry, which exists already (set_level made it).
  std::atexit([] { spdlog_alive = false; });
}

}  // namespace orthofs

// Routes gRPC's own log lines into spdlog, so a daemon has one log format and gRPC's
// transport chatter (already reported by us as statuses) stays at debug level.
#pragma once

namespace orthofs {

// gRPC's own log messages go to spdlog (at debug and trace). Call after spdlog::set_level.
void RouteGrpcLogsToSpdlog();

}  // namespace orthofs

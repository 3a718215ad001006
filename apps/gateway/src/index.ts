// @agent-kernel/gateway: the gateway daemon — channels, cron and the follow-up queue in one long-running
// process — and its operator commands, as `(argv, io) → exit code` functions the `agent-kernel` umbrella
// dispatches `gateway`, `logs` and `status` to. The daemon itself is programmatic through `runGatewayDaemon`.
export {
  GATEWAY_EXIT,
  type GatewayCliIo,
  LOGS_USAGE,
  runGatewayCli,
  runLogsCli,
  runStatusCli,
  STATUS_USAGE,
} from "./cli.ts";
export { type GatewayDaemonOptions, runGatewayDaemon } from "./daemon.ts";
export {
  type GatewayLog,
  logDir,
  logFiles,
  type OpenGatewayLogOptions,
  openGatewayLog,
} from "./log-files.ts";
export type { GatewaySnapshot } from "./state-files.ts";
export { formatStatus, type GatewayStatus, gatewayStatus } from "./status.ts";

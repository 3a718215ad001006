// Every app the harness drives, in report order. The CLI comes first: its kernel outcome is the reference
// when goldens are regenerated.
import type { AppAdapter } from "./adapter.ts";
import { agentApp } from "./agent.ts";
import { autoReplyApp } from "./auto-reply.ts";
import { cronApp } from "./cron.ts";
import { followupApp } from "./followup.ts";
import { hybridPlannerApp } from "./hybrid-planner.ts";

export const APPS: readonly AppAdapter[] = [agentApp, autoReplyApp, followupApp, cronApp, hybridPlannerApp];

// The fake LLM HTTP server: binds 127.0.0.1, records every request, picks the answering step (routing rules
// first, then the global queue, then the fallback) and writes it as an HTTP error, a JSON body or SSE frames,
// cutting, stalling or corrupting the stream when the step says so. Owns sockets and step consumption; the
// wire syntax lives in openai-wire.ts / anthropic-wire.ts, fault texts in faults.ts, validation in scenario.ts.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicFrames, anthropicMessageBody, anthropicStreamErrorFrame } from "./anthropic-wire.ts";
import { faultResponse } from "./faults.ts";
import { openAiCompletionBody, openAiFrames, openAiStreamErrorFrame } from "./openai-wire.ts";
import { validateScenario } from "./scenario.ts";
import type {
  DataStep,
  RecordedRequest,
  RouteMatch,
  RouteRule,
  Scenario,
  Step,
  WireProvider,
} from "./types.ts";
import { type Frame, resolveResponse } from "./wire.ts";

export interface FakeLlmOptions {
  /** Initial scenario (validated; a bad one throws a ScenarioError naming the offending path). */
  scenario?: Scenario;
  /** Default 0: a free port. */
  port?: number;
  /** Called once per request after its answering step is chosen (`served` filled), before it is written. */
  onRequest?: (request: RecordedRequest) => void;
}

export interface FakeLlm {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The `baseUrl` to put on a pi `Model`: `<url>/v1` for openai-completions, `<url>` for anthropic-messages. */
  baseUrlFor(provider: WireProvider): string;
  /** Every request received, in arrival order (live array; do not mutate). */
  readonly requests: readonly RecordedRequest[];
  /** Appends steps to the global queue (answers requests no rule takes). */
  enqueue(...steps: Step[]): void;
  /** Appends a routing rule after the existing ones. */
  addRule(rule: RouteRule): void;
  /** Replaces rules, queue and fallback; keeps the request record. */
  setScenario(scenario: Scenario): void;
  /** Finite steps not yet served (rules and global queue); `times: "always"` steps count as 1. */
  pendingSteps(): number;
  /** Forgets the recorded requests (the index restarts at 0). */
  clearRequests(): void;
  /** Stops listening and destroys every open connection, stalled streams included. Idempotent. */
  close(): Promise<void>;
}

interface StepQueue {
  name: string | null;
  when: RouteMatch | null;
  steps: Step[];
  /** How many times the head step has been served (for `times: n`). */
  servedHead: number;
}

const OPENAI_PATHS = ["/v1/chat/completions", "/chat/completions"];
const ANTHROPIC_PATHS = ["/v1/messages", "/messages"];

function wireProviderOf(path: string): WireProvider | "unknown" {
  const bare = path.split("?")[0] ?? path;
  if (OPENAI_PATHS.includes(bare)) return "openai";
  if (ANTHROPIC_PATHS.includes(bare)) return "anthropic";
  return "unknown";
}

function apiKeyOf(headers: http.IncomingHttpHeaders): string | null {
  const xApiKey = headers["x-api-key"];
  if (typeof xApiKey === "string" && xApiKey.length > 0) return xApiKey;
  const authorization = headers.authorization;
  if (typeof authorization === "string") {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    if (match?.[1]) return match[1];
  }
  return null;
}

function redact(value: string): string {
  const bearer = /^(Bearer\s+)(.+)$/i.exec(value);
  const secret = bearer?.[2] ?? value;
  return `${bearer?.[1] ?? ""}…${secret.slice(-4)}`;
}

const SECRET_HEADERS = new Set(["authorization", "x-api-key", "api-key", "cf-aig-authorization"]);

function recordHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const recorded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(", ") : value;
    recorded[name] = SECRET_HEADERS.has(name) ? redact(text) : text;
  }
  return recorded;
}

function matches(when: RouteMatch, request: RecordedRequest, apiKey: string | null): boolean {
  if (when.provider !== undefined && when.provider !== request.provider) return false;
  if (when.model !== undefined && when.model !== request.model) return false;
  if (when.apiKeySuffix !== undefined && !(apiKey ?? "").endsWith(when.apiKeySuffix)) return false;
  return true;
}

function stepTimes(step: Step): number | "always" {
  return typeof step === "function" ? 1 : (step.times ?? 1);
}

/** Takes the head step of a queue, advancing past it once it has been served `times` times. */
function takeStep(queue: StepQueue): Step | undefined {
  const head = queue.steps[0];
  if (head === undefined) return undefined;
  const times = stepTimes(head);
  if (times !== "always") {
    queue.servedHead += 1;
    if (queue.servedHead >= times) {
      queue.steps.shift();
      queue.servedHead = 0;
    }
  }
  return head;
}

function describeStep(step: DataStep): string {
  if (step.type === "error") return `error:${step.fault}`;
  if (step.type === "stream_error") return `stream_error:${step.fault ?? "overloaded"}`;
  return step.type;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function frameText(frame: Frame): string {
  return `${frame.event === undefined ? "" : `event: ${frame.event}\n`}data: ${frame.data}\n\n`;
}

function writeAndFlush(res: http.ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(text, () => resolve());
  });
}

/** Frames up to (not including) the one after the `afterDeltas`-th content delta. */
function* framesUntilCut(frames: Iterable<Frame>, afterDeltas: number): Generator<Frame> {
  let deltas = 0;
  for (const frame of frames) {
    if (frame.delta && deltas >= afterDeltas) return;
    yield frame;
    if (frame.delta) deltas += 1;
  }
}

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const requests: RecordedRequest[] = [];
  let rules: StepQueue[] = [];
  let globalQueue: StepQueue = { name: null, when: null, steps: [], servedHead: 0 };
  let fallback: Step | undefined;
  let nextIndex = 0;
  const closing = new AbortController();

  function load(scenario: Scenario): void {
    const valid = validateScenario(scenario);
    rules = (valid.rules ?? []).map((rule, index) => ({
      name: rule.name ?? `rules[${index}]`,
      when: rule.when,
      steps: [...rule.steps],
      servedHead: 0,
    }));
    globalQueue = { name: null, when: null, steps: [...(valid.steps ?? [])], servedHead: 0 };
    fallback = valid.fallback;
  }
  load(options.scenario ?? {});

  function pickStep(
    request: RecordedRequest,
    apiKey: string | null,
  ): { step: Step; rule: string | null } | null {
    for (const rule of rules) {
      if (rule.when === null || !matches(rule.when, request, apiKey)) continue;
      const step = takeStep(rule);
      if (step !== undefined) return { step, rule: rule.name };
    }
    const step = takeStep(globalQueue);
    if (step !== undefined) return { step, rule: null };
    if (fallback !== undefined) return { step: fallback, rule: "fallback" };
    return null;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    let body: unknown = null;
    try {
      body = rawBody.length > 0 ? JSON.parse(rawBody) : null;
    } catch {
      body = null;
    }
    const bodyRecord = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    const path = req.url ?? "/";
    const apiKey = apiKeyOf(req.headers);
    const request: RecordedRequest = {
      index: nextIndex++,
      provider: wireProviderOf(path),
      method: req.method ?? "GET",
      path,
      headers: recordHeaders(req.headers),
      apiKeySuffix: apiKey === null ? null : apiKey.slice(-4),
      model: typeof bodyRecord.model === "string" ? bodyRecord.model : null,
      stream: bodyRecord.stream === true,
      body,
      rawBody,
      rule: null,
      served: null,
      receivedAt: Date.now(),
    };
    requests.push(request);

    if (request.method === "GET" && path === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    const provider = request.provider;
    if (provider === "unknown" || request.method !== "POST") {
      options.onRequest?.(request);
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake-llm: no route for ${request.method} ${path}` } }));
      return;
    }
    const picked = pickStep(request, apiKey);
    if (picked === null) {
      options.onRequest?.(request);
      const message =
        `fake-llm: no scripted step left for request #${request.index} ` +
        `(${provider}, model ${JSON.stringify(request.model)}, key ${request.apiKeySuffix === null ? "none" : `…${request.apiKeySuffix}`})`;
      const envelope =
        provider === "anthropic"
          ? { type: "error", error: { type: "fake_llm_unscripted", message } }
          : { error: { message, type: "fake_llm_unscripted", code: null } };
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(envelope));
      return;
    }
    request.rule = picked.rule;
    const step =
      typeof picked.step === "function" ? validateScenario({ steps: [await picked.step(request)] }) : null;
    const dataStep = (step?.steps?.[0] ?? picked.step) as DataStep;
    request.served = describeStep(dataStep);
    options.onRequest?.(request);
    await serveStep(dataStep, request, provider, res);
  }

  async function serveStep(
    step: DataStep,
    request: RecordedRequest,
    provider: WireProvider,
    res: http.ServerResponse,
  ): Promise<void> {
    await sleep(step.latencyMs ?? 0, closing.signal);
    if (res.destroyed) return;
    if (step.type === "error") {
      const fault = faultResponse(step.fault, provider, {
        ...(step.status !== undefined ? { status: step.status } : {}),
        ...(step.message !== undefined ? { message: step.message } : {}),
        ...(step.variant !== undefined ? { variant: step.variant } : {}),
      });
      const headers: Record<string, string> = { "content-type": "application/json", ...step.headers };
      if (step.retryAfterSeconds !== undefined) headers["retry-after"] = String(step.retryAfterSeconds);
      if (step.retryAfterMs !== undefined) headers["retry-after-ms"] = String(step.retryAfterMs);
      const body = step.body === undefined ? JSON.stringify(fault.body) : step.body;
      res.writeHead(fault.status, headers).end(typeof body === "string" ? body : JSON.stringify(body));
      return;
    }
    const response = resolveResponse(step, provider);
    const id =
      provider === "anthropic" ? `msg_fake_${request.index + 1}` : `chatcmpl-fake-${request.index + 1}`;
    const model = request.model ?? "fake-model";
    if (!request.stream) {
      if (step.type === "stall") return waitForClose(res);
      if (step.type === "reset") {
        res.socket?.destroy();
        return;
      }
      const bodyJson =
        provider === "anthropic"
          ? anthropicMessageBody(response, { id, model })
          : openAiCompletionBody(response, {
              id,
              model,
              created: Math.floor(Date.now() / 1000),
              includeUsage: true,
            });
      const text = step.type === "malformed" ? (step.raw ?? MALFORMED_DEFAULT) : JSON.stringify(bodyJson);
      res.writeHead(200, { "content-type": "application/json" }).end(text);
      return;
    }
    const includeUsage =
      typeof request.body === "object" &&
      request.body !== null &&
      (request.body as { stream_options?: { include_usage?: unknown } }).stream_options?.include_usage ===
        true;
    const frames =
      provider === "anthropic"
        ? anthropicFrames(response, { id, model })
        : openAiFrames(response, { id, model, created: Math.floor(Date.now() / 1000), includeUsage });
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const toSend = step.type === "response" ? frames : framesUntilCut(frames, step.afterDeltas ?? 1);
    for (const frame of toSend) {
      if (res.destroyed || closing.signal.aborted) return;
      await writeAndFlush(res, frameText(frame));
      await sleep(step.delayMs ?? 0, closing.signal);
    }
    if (res.destroyed) return;
    switch (step.type) {
      case "response":
        res.end();
        return;
      case "reset":
        res.socket?.destroy();
        return;
      case "stall":
        return waitForClose(res);
      case "malformed": {
        const raw = step.raw ?? MALFORMED_DEFAULT;
        const frame: Frame =
          provider === "anthropic"
            ? { event: "content_block_delta", data: raw, delta: false }
            : { data: raw, delta: false };
        res.end(frameText(frame));
        return;
      }
      case "stream_error": {
        const fault = faultResponse(step.fault ?? "overloaded", provider, {
          ...(step.message !== undefined ? { message: step.message } : {}),
        });
        const error = (fault.body as { error: Record<string, unknown> }).error;
        res.end(
          frameText(
            provider === "anthropic" ? anthropicStreamErrorFrame(error) : openAiStreamErrorFrame(error),
          ),
        );
        return;
      }
    }
  }

  /** A stalled response ends only when the client goes away or the server closes. */
  function waitForClose(res: http.ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      if (res.destroyed || closing.signal.aborted) return resolve();
      const done = (): void => {
        res.off("close", done);
        closing.signal.removeEventListener("abort", done);
        resolve();
      };
      res.once("close", done);
      closing.signal.addEventListener("abort", done, { once: true });
    });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake-llm: ${message}`, type: "fake_llm_internal" } }));
      } else {
        res.destroy();
      }
    });
  });
  // Longer than any client keeps an idle socket (undici: 4 s): the client closes first, so a request is never
  // sent on a socket the server is closing at that moment ("Connection error."). close() ends them all anyway.
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;

  return {
    url,
    port,
    baseUrlFor: (provider) => (provider === "openai" ? `${url}/v1` : url),
    requests,
    enqueue(...steps) {
      const valid = validateScenario({ steps });
      globalQueue.steps.push(...(valid.steps ?? []));
    },
    addRule(rule) {
      const valid = validateScenario({ rules: [rule] });
      const [checked] = valid.rules ?? [];
      if (checked === undefined) return;
      rules.push({
        name: checked.name ?? `rules[${rules.length}]`,
        when: checked.when,
        steps: [...checked.steps],
        servedHead: 0,
      });
    },
    setScenario: load,
    pendingSteps() {
      return [...rules, globalQueue].reduce((sum, queue) => sum + queue.steps.length, 0);
    },
    clearRequests() {
      requests.length = 0;
      nextIndex = 0;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

const MALFORMED_DEFAULT = '{"choices": [ {"delta": <<not json>>';

// Stand-ins for the parts of n8n's runtime the nodes of integrations/n8n use (the execute and webhook contexts, the
// authenticated HTTP helper), so their tests can run them against the real server without n8n itself. The nodes are
// loaded from the package's build (dist/) through require, their n8n-workflow from the package's own node_modules.
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const PACKAGE_DIR = path.resolve(import.meta.dirname, '../../integrations/n8n');
const requireFromPackage = createRequire(path.join(PACKAGE_DIR, 'package.json'));

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(suffix))
    .map((file) => path.join(dir, file));
}

/**
 * A module of the package's build. Fails, saying what to run, when dist/ is missing or older than a source file: the
 * tests would otherwise pass or fail on code that is no longer there.
 */
export function loadBuilt<T>(distPath: string): T {
  const sources = ['credentials', 'nodes'].flatMap((dir) => filesUnder(path.join(PACKAGE_DIR, dir), '.ts'));
  const newest = Math.max(...sources.map((file) => statSync(file).mtimeMs));
  let built = -1;
  try {
    built = Math.min(...filesUnder(path.join(PACKAGE_DIR, 'dist'), '.js').map((file) => statSync(file).mtimeMs));
  } catch {
    // No dist/ at all: refused below like a stale one.
  }
  if (built < newest) throw new Error('integrations/n8n/dist is missing or stale: run `npm ci && npm run build` there');
  return requireFromPackage(path.join(PACKAGE_DIR, 'dist', distPath)) as T;
}

/** n8n-workflow's error classes, the same module instance the nodes use. */
export interface N8nErrors {
  NodeApiError: new (...args: never[]) => Error & { httpCode: string | null; description?: string | null };
  NodeOperationError: new (...args: never[]) => Error;
}
export const n8nErrors = (): N8nErrors => requireFromPackage('n8n-workflow') as N8nErrors;

type Json = Record<string, unknown>;

export interface HttpRequestOptions {
  method?: string;
  url: string;
  baseURL?: string;
  headers?: Record<string, string>;
  body?: unknown;
  json?: boolean;
  returnFullResponse?: boolean;
  ignoreHttpStatusErrors?: boolean;
}

export interface FullResponse {
  body: unknown;
  headers: Record<string, string>;
  statusCode: number;
  statusMessage: string;
}

/** What a credential class declares that the runtime applies: `{{$credentials.x}}` in its authenticate headers. */
export interface CredentialType {
  authenticate?: { type: string; properties: { headers?: Record<string, string> } };
}

/** n8n's expression for a credential value, `={{$credentials.name}}` or text around it. */
export function resolveCredentialText(template: string, credentials: Json): string {
  return template
    .replace(/^=/, '')
    .replace(/\{\{\s*\$credentials\.(\w+)\s*\}\}/g, (_match, name: string) => String(credentials[name]));
}

/**
 * httpRequestWithAuthentication's contract (n8n-core): the credential's authenticate block is applied to the
 * request; `json` sends and reads JSON; a status outside 2xx throws unless ignoreHttpStatusErrors; returnFullResponse
 * answers { body, headers, statusCode, statusMessage } instead of the body. Performed with fetch.
 */
export async function httpRequestWithCredential(
  type: CredentialType,
  credentials: Json,
  options: HttpRequestOptions,
): Promise<unknown> {
  const headers: Record<string, string> = { ...options.headers };
  for (const [name, value] of Object.entries(type.authenticate?.properties.headers ?? {})) {
    headers[name] = resolveCredentialText(value, credentials);
  }
  if (options.json && options.body !== undefined) headers['content-type'] = 'application/json';
  const url = options.baseURL
    ? `${options.baseURL.replace(/\/+$/, '')}/${options.url.replace(/^\/+/, '')}`
    : options.url;
  const response = await fetch(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: n8n answers the text as it came.
  }
  if (!response.ok && !options.ignoreHttpStatusErrors) {
    throw Object.assign(new Error(`Request failed with status code ${response.status}`), { httpCode: response.status });
  }
  if (!options.returnFullResponse) return body;
  return {
    body,
    headers: Object.fromEntries(response.headers),
    statusCode: response.status,
    statusMessage: response.statusText,
  } satisfies FullResponse;
}

export interface ExecuteContextOptions {
  credentialType: CredentialType;
  credentials: Json;
  /** The node's parameters for each input item (one entry per item); one missing answers the fallback. */
  parameters: Json[];
  executionId: string;
  workflowId?: string;
  nodeName?: string;
  continueOnFail?: boolean;
}

/** An IExecuteFunctions with what the action node calls; everything else is absent, so a new call shows. */
export function executeContext(options: ExecuteContextOptions) {
  const node = {
    id: 'node-1',
    name: options.nodeName ?? 'Outbound Call Trigger',
    type: 'n8n-nodes-outbound-call-trigger.outboundCall',
    typeVersion: 1,
    position: [0, 0],
    parameters: {},
  };
  const requests: HttpRequestOptions[] = [];
  const context = {
    getInputData: () => options.parameters.map((_, index) => ({ json: { index } })),
    getNodeParameter: (name: string, itemIndex: number, fallback?: unknown) =>
      options.parameters[itemIndex]?.[name] ?? fallback,
    getCredentials: async () => options.credentials,
    getWorkflow: () => ({ id: options.workflowId ?? 'wf-1', name: 'Calls', active: true }),
    getExecutionId: () => options.executionId,
    getNode: () => node,
    continueOnFail: () => options.continueOnFail ?? false,
    helpers: {
      async httpRequestWithAuthentication(_type: string, request: HttpRequestOptions) {
        requests.push(request);
        return httpRequestWithCredential(options.credentialType, options.credentials, request);
      },
    },
  };
  return { context, requests };
}

export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const ALL_EVENTS = ['call.started', 'call.completed', 'call.failed'];

/**
 * An IWebhookFunctions for one delivery: the raw body n8n keeps, its headers, and a response that records what the
 * node answers itself. `events` is the node's Events parameter (n8n fills in its default, all three).
 */
export function webhookContext(request: WebhookRequest, secret: string, events = ALL_EVENTS) {
  const response = { status: 0, body: undefined as unknown };
  const responseObject = {
    status(code: number) {
      response.status = code;
      return responseObject;
    },
    json(body: unknown) {
      response.body = body;
      return responseObject;
    },
  };
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const context = {
    getCredentials: async () => ({ signingSecret: secret }),
    getRequestObject: () => ({ rawBody: request.body, headers }),
    getHeaderData: () => headers,
    getResponseObject: () => responseObject,
    getNodeParameter: (name: string, fallback?: unknown) => (name === 'events' ? events : fallback),
    getNode: () => ({ id: 'node-2', name: 'On call event', type: 'trigger', typeVersion: 1, position: [0, 0] }),
  };
  return { context, response };
}

/** An item a node returns. */
export interface Item {
  json: Record<string, unknown>;
  pairedItem?: { item: number };
}

/** The action node as the tests drive it (its execute runs with the context as `this`). */
export interface ActionNode {
  execute(this: unknown): Promise<Item[][]>;
}

/** The trigger node as the tests drive it. */
export interface TriggerNode {
  webhook(this: unknown): Promise<{ workflowData?: Item[][]; webhookResponse?: unknown; noWebhookResponse?: boolean }>;
  methods: {
    credentialTest: Record<
      string,
      (this: unknown, credential: { data: Record<string, unknown> }) => Promise<{ status: string; message: string }>
    >;
  };
}

interface ResponseBodyRule {
  type: 'responseSuccessBody';
  properties: { key: string; value: unknown; message: string };
}

/** The API credential as the tests read it: its authenticate block and its declarative test. */
export interface ApiCredential extends CredentialType {
  test: { request: HttpRequestOptions; rules: ResponseBodyRule[] };
}

/**
 * n8n's credential tester (CredentialsTester.testCredentials) for a declarative test: the request with the
 * credential applied; any error or a status outside 2xx fails unless ignoreHttpStatusErrors; then each
 * responseSuccessBody rule fails the test when the body's value at its key equals its value.
 */
export async function testCredential(type: ApiCredential, credentials: Json) {
  const request = type.test.request;
  let response: FullResponse;
  try {
    response = (await httpRequestWithCredential(type, credentials, {
      ...request,
      baseURL: request.baseURL && resolveCredentialText(request.baseURL, credentials),
      returnFullResponse: true,
    })) as FullResponse;
  } catch (error) {
    return { status: 'Error', message: (error as Error).message };
  }
  for (const rule of type.test.rules) {
    const found = rule.properties.key
      .split('.')
      .reduce<unknown>(
        (node, key) => (node !== null && typeof node === 'object' ? (node as Json)[key] : undefined),
        response.body,
      );
    if (found === rule.properties.value) return { status: 'Error', message: rule.properties.message };
  }
  return { status: 'OK', message: 'Connection successful!' };
}

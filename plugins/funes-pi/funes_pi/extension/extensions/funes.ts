/**
 * funes for pi: every turn goes into funes' memory, and funes' tools are offered to the model.
 *
 * pi has no hooks and no MCP client of its own, so this extension provides both, driven by the
 * funes.json that `funes integrations install pi` writes beside this package:
 *
 *   { "hook": { "argv": [<funes>, "pi", "hook", "{session_file}"], "env": { "FUNES_HOME": ... } },
 *     "mcp":  { "argv": [<funes>, "mcp", <memory>?], "memory": ..., "env": {...}, "tool_prefix": "mcp__funes__" } }
 *
 * - hook: after every turn (turn_end) and when a session closes (session_shutdown, unless pi is
 *   only reloading), the hook command is started detached with the session file's path, so funes
 *   converts and indexes the new turns while pi carries on. One run per session file at a time:
 *   a turn that ends during a run asks for one more run after it; the run at shutdown always
 *   starts (funes serialises runs itself, so the last one always sees the whole file).
 * - mcp: at load, `funes mcp` is started once over stdio; after the MCP handshake and tools/list
 *   (10 s at most, or pi starts without the tools) every tool is registered as a pi tool named
 *   <tool_prefix><tool>, e.g. mcp__funes__recall. Calls time out after 120 s. If the server dies,
 *   the next call starts it again. $FUNES_MEMORY, when set, overrides the bound memory.
 *
 * Nothing here may hold pi up or keep it alive: children are unref'd, the MCP server is stopped
 * at session_shutdown, and problems are logged to $FUNES_HOME/logs/pi-extension.log.
 * Only node built-ins are imported, so the package needs no `npm install`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HANDSHAKE_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 120_000;
const PROTOCOL_VERSION = "2025-06-18";
const PLACEHOLDER = "{session_file}";
const LOG_LIMIT = 1 << 20;

interface Command {
	argv: string[];
	env?: Record<string, string>;
}

interface McpCommand extends Command {
	memory?: string | null;
	tool_prefix?: string;
}

interface Config {
	hook?: Command;
	mcp?: McpCommand;
}

interface McpTool {
	name: string;
	description?: string;
	inputSchema?: Record<string, unknown>;
}

interface McpContent {
	type: string;
	text?: string;
	data?: string;
	mimeType?: string;
}

interface McpResult {
	content?: McpContent[];
	isError?: boolean;
}

interface PiContent {
	type: string;
	text?: string;
	data?: string;
	mimeType?: string;
}

// The parts of pi's extension API this file uses.
interface Ctx {
	hasUI?: boolean;
	sessionManager?: { getSessionFile?(): string | undefined };
	ui?: { notify?(message: string, level?: string): void };
}

interface Pi {
	on(event: string, handler: (event: { reason?: string } | undefined, ctx: Ctx) => unknown): void;
	registerTool(tool: Record<string, unknown>): void;
}

// -- files ---------------------------------------------------------------------------------------

/** The installed package's folder (this file is <package>/extensions/funes.ts). */
function packageDir(): string {
	return join(dirname(fileURLToPath(import.meta.url)), "..");
}

function errorText(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}

function isCommand(value: unknown): value is Command {
	const argv = (value as Command | undefined)?.argv;
	return Array.isArray(argv) && argv.length > 0 && argv.every((a) => typeof a === "string");
}

function readConfig(): Config | undefined {
	let raw: string;
	try {
		raw = readFileSync(join(packageDir(), "funes.json"), "utf8");
	} catch {
		return undefined; // not set up by funes (or being removed): stay inert
	}
	try {
		const data = JSON.parse(raw) as Config;
		return {
			hook: isCommand(data.hook) ? data.hook : undefined,
			mcp: isCommand(data.mcp) ? data.mcp : undefined,
		};
	} catch (err) {
		process.stderr.write(`[funes] cannot read ${join(packageDir(), "funes.json")}: ${errorText(err)}\n`);
		return undefined;
	}
}

function logPath(config: Config): string {
	const home = config.hook?.env?.FUNES_HOME ?? config.mcp?.env?.FUNES_HOME ?? process.env.FUNES_HOME;
	return join(home || join(homedir(), ".funes"), "logs", "pi-extension.log");
}

/** A file descriptor appending to the log (rotated past 1 MiB), or undefined. */
function openLog(path: string): number | undefined {
	try {
		mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
		try {
			if (statSync(path).size > LOG_LIMIT) renameSync(path, `${path}.1`);
		} catch {
			// no log yet
		}
		return openSync(path, "a", 0o600);
	} catch {
		return undefined;
	}
}

function writeLog(path: string, line: string): void {
	const fd = openLog(path);
	if (fd === undefined) return;
	try {
		appendFileSync(fd, `${new Date().toISOString()} ${line}\n`);
	} catch {
		// logging must never break pi
	} finally {
		closeSync(fd);
	}
}

// -- the per-turn hook ---------------------------------------------------------------------------

class Hook {
	private readonly runs = new Map<string, { again: boolean }>();

	constructor(
		private readonly command: Command,
		private readonly log: string,
	) {}

	/** Start the hook for a session file; while one runs, `always` decides between now and later. */
	run(sessionFile: string, always: boolean): void {
		const busy = this.runs.get(sessionFile);
		if (busy && !always) {
			busy.again = true;
			return;
		}
		const argv = this.command.argv.map((a) => (a === PLACEHOLDER ? sessionFile : a));
		const fd = openLog(this.log);
		const output = fd === undefined ? "ignore" : fd;
		let child: ChildProcess;
		try {
			child = spawn(argv[0], argv.slice(1), {
				detached: true,
				stdio: ["ignore", output, output],
				env: { ...process.env, ...(this.command.env ?? {}) },
				windowsHide: true,
			});
		} catch (err) {
			writeLog(this.log, `cannot start ${argv[0]}: ${errorText(err)}`);
			return;
		} finally {
			if (fd !== undefined) closeSync(fd);
		}
		const state = { again: false };
		this.runs.set(sessionFile, state);
		let finished = false;
		const finish = () => {
			if (finished) return;
			finished = true;
			if (this.runs.get(sessionFile) === state) this.runs.delete(sessionFile);
			if (state.again) this.run(sessionFile, false);
		};
		child.on("error", (err) => {
			writeLog(this.log, `cannot start ${argv[0]}: ${errorText(err)}`);
			finish();
		});
		child.on("exit", finish);
		child.unref();
	}

	/** The session file of `ctx`, when pi has written one (it does so from the first reply on). */
	onTurn(ctx: Ctx, always: boolean): void {
		let file: string | undefined;
		try {
			file = ctx?.sessionManager?.getSessionFile?.();
		} catch {
			file = undefined;
		}
		if (!file) return; // an in-memory session (--no-session): nothing to index
		try {
			statSync(file);
		} catch {
			return;
		}
		this.run(file, always);
	}
}

// -- the MCP bridge ------------------------------------------------------------------------------

type Waiter = { resolve(value: unknown): void; reject(err: Error): void };

/** A newline-delimited JSON-RPC client over one `funes mcp` child process. */
class McpClient {
	closed = false;
	private readonly child: ChildProcess;
	private readonly pending = new Map<number, Waiter>();
	private buffer = "";
	private stderrTail = "";
	private nextId = 1;

	constructor(argv: string[], env: Record<string, string>) {
		this.child = spawn(argv[0], argv.slice(1), {
			stdio: ["pipe", "pipe", "pipe"],
			env: { ...process.env, ...env },
			windowsHide: true,
		});
		this.child.stdout?.setEncoding("utf8");
		this.child.stdout?.on("data", (chunk: string) => this.receive(chunk));
		this.child.stderr?.setEncoding("utf8");
		this.child.stderr?.on("data", (chunk: string) => {
			this.stderrTail = (this.stderrTail + chunk).slice(-2000);
		});
		this.child.stdin?.on("error", () => undefined); // EPIPE after a crash: reported by "exit"
		this.child.on("error", (err) => this.fail(err));
		this.child.on("exit", (code, signal) => {
			const last = this.stderrTail.trim().split("\n").pop() ?? "";
			this.fail(new Error(`funes mcp exited (${signal ?? code})${last ? `: ${last}` : ""}`));
		});
		// pi's print mode exits when its event loop is empty: this child must not keep it alive.
		this.child.unref();
		for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
			(stream as unknown as { unref?(): void } | null)?.unref?.();
		}
	}

	private send(message: Record<string, unknown>): void {
		if (this.closed) return;
		this.child.stdin?.write(`${JSON.stringify(message)}\n`);
	}

	private receive(chunk: string): void {
		this.buffer += chunk;
		for (let newline = this.buffer.indexOf("\n"); newline >= 0; newline = this.buffer.indexOf("\n")) {
			const line = this.buffer.slice(0, newline).trim();
			this.buffer = this.buffer.slice(newline + 1);
			if (!line) continue;
			let message: Record<string, unknown>;
			try {
				message = JSON.parse(line);
			} catch {
				continue;
			}
			this.dispatch(message);
		}
	}

	private dispatch(message: Record<string, unknown>): void {
		const id = message.id;
		if (typeof message.method === "string") {
			if (id === undefined || id === null) return; // a notification (log, progress): ignored
			if (message.method === "ping") this.send({ jsonrpc: "2.0", id, result: {} });
			else this.send({ jsonrpc: "2.0", id, error: { code: -32601, message: `unsupported: ${message.method}` } });
			return;
		}
		const waiter = typeof id === "number" ? this.pending.get(id) : undefined;
		if (!waiter) return;
		const error = message.error as { message?: string } | undefined;
		if (error) waiter.reject(new Error(error.message ?? JSON.stringify(error)));
		else waiter.resolve(message.result);
	}

	private fail(err: Error): void {
		this.closed = true;
		for (const waiter of [...this.pending.values()]) waiter.reject(err);
		this.pending.clear();
	}

	request(method: string, params: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
		if (this.closed) return Promise.reject(new Error("funes mcp is not running"));
		if (signal?.aborted) return Promise.reject(new Error("aborted"));
		const id = this.nextId++;
		return new Promise((resolve, reject) => {
			const done = () => {
				clearTimeout(timer);
				signal?.removeEventListener("abort", onAbort);
				this.pending.delete(id);
			};
			const cancel = (why: string) => {
				done();
				this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: why } });
			};
			const timer = setTimeout(() => {
				cancel("timed out");
				reject(new Error(`funes ${method} timed out after ${Math.round(timeoutMs / 1000)} s`));
			}, timeoutMs);
			const onAbort = () => {
				cancel("aborted");
				reject(new Error("aborted"));
			};
			signal?.addEventListener("abort", onAbort, { once: true });
			this.pending.set(id, {
				resolve: (value) => {
					done();
					resolve(value);
				},
				reject: (err) => {
					done();
					reject(err);
				},
			});
			this.send({ jsonrpc: "2.0", id, method, params });
		});
	}

	/** initialize, initialized, then every page of tools/list, within one deadline. */
	async handshake(): Promise<{ tools: McpTool[]; instructions?: string }> {
		const deadline = Date.now() + HANDSHAKE_TIMEOUT_MS;
		const left = () => Math.max(1, deadline - Date.now());
		const init = (await this.request(
			"initialize",
			{ protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "funes-pi", version: "0.1.0" } },
			left(),
		)) as { instructions?: string } | undefined;
		this.send({ jsonrpc: "2.0", method: "notifications/initialized", params: {} });
		const tools: McpTool[] = [];
		let cursor: string | undefined;
		do {
			const page = (await this.request("tools/list", cursor ? { cursor } : {}, left())) as
				| { tools?: McpTool[]; nextCursor?: string }
				| undefined;
			tools.push(...(page?.tools ?? []).filter((t) => typeof t?.name === "string"));
			cursor = page?.nextCursor || undefined;
		} while (cursor);
		return { tools, instructions: init?.instructions };
	}

	close(): void {
		this.fail(new Error("funes mcp was stopped"));
		try {
			this.child.stdin?.end();
			this.child.kill();
		} catch {
			// already gone
		}
	}
}

/** Starts `funes mcp` once, and again on the next call if it died. */
class Bridge {
	private client: McpClient | undefined;

	constructor(
		private readonly argv: string[],
		private readonly env: Record<string, string>,
	) {}

	async connect(): Promise<{ tools: McpTool[]; instructions?: string }> {
		const client = new McpClient(this.argv, this.env);
		this.client = client;
		try {
			return await client.handshake();
		} catch (err) {
			client.close();
			if (this.client === client) this.client = undefined;
			throw err;
		}
	}

	async call(name: string, args: unknown, signal?: AbortSignal): Promise<McpResult> {
		if (!this.client || this.client.closed) await this.connect();
		const client = this.client as McpClient;
		const result = await client.request("tools/call", { name, arguments: args ?? {} }, CALL_TIMEOUT_MS, signal);
		return (result ?? {}) as McpResult;
	}

	close(): void {
		this.client?.close();
		this.client = undefined;
	}
}

function mcpArgv(command: McpCommand): string[] {
	const memory = process.env.FUNES_MEMORY?.trim();
	if (!memory) return command.argv;
	const base = command.memory ? command.argv.slice(0, -1) : command.argv;
	return [...base, memory];
}

function toPiContent(result: McpResult): PiContent[] {
	const content: PiContent[] = [];
	for (const item of result.content ?? []) {
		if (item?.type === "text" && typeof item.text === "string") content.push({ type: "text", text: item.text });
		else if (item?.type === "image" && typeof item.data === "string")
			content.push({ type: "image", data: item.data, mimeType: item.mimeType ?? "image/png" });
		else content.push({ type: "text", text: JSON.stringify(item) });
	}
	return content.length ? content : [{ type: "text", text: "no results" }];
}

function firstSentence(text: string): string {
	const match = /^.*?[.!?](\s|$)/s.exec(text);
	return (match ? match[0] : text).trim();
}

function registerTools(pi: Pi, bridge: Bridge, tools: McpTool[], prefix: string, instructions?: string): void {
	for (const tool of tools) {
		const description = tool.description?.trim() || `funes ${tool.name}`;
		const definition: Record<string, unknown> = {
			name: `${prefix}${tool.name}`,
			label: `funes ${tool.name}`,
			description,
			promptSnippet: firstSentence(description),
			parameters: tool.inputSchema ?? { type: "object", properties: {} },
			async execute(_toolCallId: string, params: unknown, signal?: AbortSignal) {
				const result = await bridge.call(tool.name, params, signal);
				const content = toPiContent(result);
				if (result.isError) {
					throw new Error(content.map((c) => c.text ?? "").join("\n") || `funes ${tool.name} failed`);
				}
				return { content, details: { funes: tool.name } };
			},
		};
		if (tool.name === "recall" && instructions) {
			definition.promptGuidelines = [`The ${prefix}* tools read funes. ${instructions.trim()}`];
		}
		pi.registerTool(definition);
	}
}

// -- the extension -------------------------------------------------------------------------------

export default async function funes(pi: Pi): Promise<void> {
	const config = readConfig();
	if (!config) return;
	const log = logPath(config);
	const problems: string[] = [];
	const hook = config.hook ? new Hook(config.hook, log) : undefined;
	let bridge: Bridge | undefined;

	if (config.mcp) {
		bridge = new Bridge(mcpArgv(config.mcp), config.mcp.env ?? {});
		try {
			const { tools, instructions } = await bridge.connect();
			registerTools(pi, bridge, tools, config.mcp.tool_prefix || "mcp__funes__", instructions);
		} catch (err) {
			const problem = `funes memory tools unavailable: ${errorText(err)}`;
			writeLog(log, problem);
			problems.push(problem);
			bridge.close();
			bridge = undefined;
		}
	}

	pi.on("session_start", (_event, ctx) => {
		for (const problem of problems.splice(0)) {
			if (ctx?.hasUI && ctx.ui?.notify) ctx.ui.notify(problem, "warning");
			else process.stderr.write(`[funes] ${problem}\n`);
		}
	});
	if (hook) {
		pi.on("turn_end", (_event, ctx) => hook.onTurn(ctx, false));
	}
	pi.on("session_shutdown", (event, ctx) => {
		if (hook && event?.reason !== "reload") hook.onTurn(ctx, true);
		bridge?.close();
	});
}

// The part of OpenClaw's plugin API this plugin uses, declared here so the
// package type-checks without installing OpenClaw itself (a 650 MB package
// that needs node 24). It follows the SDK of openclaw 2026.9.6
// (dist/plugin-sdk, docs/plugins): api.registerTool for agent tools,
// api.registerMemoryCapability for the memory slot, api.registerService for
// background work, api.on for the before_prompt_build (with
// requiresToolAuthority) and agent_end hooks, api.pluginConfig and
// api.logger. make test-openclaw loads the plugin into the real package.

export interface TextContent {
  type: "text";
  text: string;
}

export interface ToolResult {
  content: TextContent[];
  details?: unknown;
}

/** A JSON Schema object describing a tool's parameters. */
export type JsonSchema = Record<string, unknown>;

export interface AgentTool {
  name: string;
  label?: string;
  description: string;
  parameters: JsonSchema;
  execute(toolCallId: string, params: unknown): Promise<ToolResult>;
}

export interface PluginLogger {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * The finalized tool surface of one turn, given to before_prompt_build
 * handlers registered with requiresToolAuthority (PluginHookToolAuthority).
 */
export interface ToolAuthority {
  readonly fingerprint: string;
  /** Whether the turn's finalized tool surface contains this tool. */
  allows(toolName: string): boolean;
  /** Throws once the turn is over (abort, replacement, dispatch done). */
  assertActive(): void;
}

/** Hook context; every field is optional, as OpenClaw documents. */
export interface HookContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  runId?: string;
  workspaceDir?: string;
  /** Present for handlers registered with requiresToolAuthority. */
  toolAuthority?: ToolAuthority;
}

export interface BeforePromptBuildEvent {
  /** The prepared prompt; it may contain reconstructed history. */
  prompt: string;
  /**
   * The current request before history projection. Empty means no textual
   * request (image-only, continuation); omitted on older harnesses.
   */
  currentUserMessage?: string;
  currentUserMessageId?: string;
  messages?: unknown[];
}

export interface PromptBuildResult {
  prependContext?: string;
}

export interface AgentEndEvent {
  messages?: unknown[];
  success?: boolean;
  error?: string;
}

/** Arguments of a memory capability's prompt builder (MemoryPromptSectionParams). */
export interface MemoryPromptSectionParams {
  availableTools: Set<string>;
  citationsMode?: "auto" | "on" | "off";
  agentId?: string;
  agentSessionKey?: string;
  sandboxed?: boolean;
}

/** The plan of the pre-compaction memory flush turn (MemoryFlushPlan). */
export interface MemoryFlushPlan {
  softThresholdTokens: number;
  forceFlushTranscriptBytes: number;
  reserveTokensFloor: number;
  model?: string;
  prompt: string;
  systemPrompt: string;
  relativePath: string;
}

/**
 * What a memory plugin registers for the memory slot (MemoryPluginCapability).
 * The runtime (a MemorySearchManager over the host's index) is optional
 * for a selected memory plugin that handles memory through its own hooks
 * and tools, as this one does.
 */
export interface MemoryPluginCapability {
  promptBuilder?: (params: MemoryPromptSectionParams) => string[];
  flushPlanResolver?: (params: { nowMs?: number; contextWindowTokens?: number }) => MemoryFlushPlan | null;
  /** The local recall tool the host may call for a direct memory lookup. */
  deterministicRecallToolName?: string;
}

/** A background service the host starts with the gateway (OpenClawPluginService). */
export interface PluginService {
  id: string;
  start(ctx: { workspaceDir?: string; stateDir?: string; logger?: PluginLogger }): void | Promise<void>;
  stop?(ctx: { workspaceDir?: string; stateDir?: string }): void | Promise<void>;
}

export interface OpenClawPluginApi {
  pluginConfig?: unknown;
  logger: PluginLogger;
  registerTool(tool: AgentTool, opts?: { name?: string }): void;
  registerMemoryCapability(capability: MemoryPluginCapability): void;
  registerService?(service: PluginService): void;
  on(
    hook: "before_prompt_build",
    handler: (event: BeforePromptBuildEvent, ctx: HookContext) => Promise<PromptBuildResult | void>,
    opts?: { requiresToolAuthority?: true; timeoutMs?: number },
  ): void;
  on(hook: "agent_end", handler: (event: AgentEndEvent, ctx: HookContext) => Promise<void>): void;
}

export interface OpenClawPlugin {
  id: string;
  name: string;
  description: string;
  kind: "memory";
  register(api: OpenClawPluginApi): void;
}

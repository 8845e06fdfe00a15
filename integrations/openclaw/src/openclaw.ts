// The part of OpenClaw's plugin API this plugin uses, declared here so the
// package type-checks without installing OpenClaw itself. It follows the
// documented surface: api.registerTool for agent tools, api.on for the
// before_prompt_build and agent_end hooks, api.pluginConfig and api.logger.

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

/** Hook context; every field is optional, as OpenClaw documents. */
export interface HookContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  runId?: string;
}

export interface BeforePromptBuildEvent {
  prompt: string;
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

export interface OpenClawPluginApi {
  pluginConfig?: unknown;
  logger: PluginLogger;
  registerTool(tool: AgentTool, opts?: { name?: string }): void;
  on(
    hook: "before_prompt_build",
    handler: (event: BeforePromptBuildEvent, ctx: HookContext) => Promise<PromptBuildResult | void>,
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

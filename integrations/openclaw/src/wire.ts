// Wire types of the hmo HTTP API (hmo serve): the JSON of the Go package
// github.com/hmo-dev/hmo/api. Times are RFC 3339 strings; ids are numbers.

export interface Memory {
  id: number;
  text: string;
  scope?: string;
  session?: string;
  role?: string;
  time: string;
  sources?: string[];
  supersedes?: number;
  superseded_by?: number;
  score?: number;
  tier?: number;
}

/** Filter fields sit at the top level of search and list requests. */
export interface Filter {
  scope?: string;
  session?: string;
  from?: string;
  to?: string;
}

export interface SearchRequest extends Filter {
  query: string;
  k?: number;
  max_tokens?: number;
  cursor?: string;
}

export interface SearchResponse {
  results: Memory[] | null;
  next_cursor?: string;
  truncated?: boolean;
}

export interface GetRequest {
  ids: number[];
  history?: boolean;
}

export interface GetResponse {
  memories: Memory[] | null;
  history?: Memory[];
  missing?: number[];
}

export interface NewMemory {
  text: string;
  scope?: string;
  session?: string;
  role?: string;
  time?: string;
  sources?: string[];
}

export interface AddRequest {
  memories: NewMemory[];
}

export interface AddResponse {
  ids: number[] | null;
  /** ids in ids that were already stored (hmo de-duplicates): nothing was written for them. */
  duplicates?: number[];
}

export interface UpdateRequest {
  id: number;
  text: string;
}

export interface UpdateResponse {
  id: number;
  supersedes: number;
}

export interface DeleteRequest {
  ids: number[];
}

export interface DeleteResponse {
  deleted: number;
  missing?: number[];
}

export interface ListRequest extends Filter {
  limit?: number;
  cursor?: string;
  reverse?: boolean;
}

export interface ListResponse {
  memories: Memory[] | null;
  next_cursor?: string;
}

export interface ContextRequest {
  prompt: string;
  scope?: string;
  max_tokens?: number;
}

export interface ContextResponse {
  context: string;
  ids: number[] | null;
  tokens: number;
}

/** Stats are the engine's; the plugin passes them through. */
export type StatsResponse = Record<string, unknown>;

/** The body of every error response. */
export interface ErrorBody {
  error: string;
  code?: string;
}

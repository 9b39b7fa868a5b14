// The studio HTTP API (docs/studio-api.md, version 1) as TypeScript types.

export type AttrType =
  'int' | 'float' | 'string' | 'ints' | 'floats' | 'strings' | 'tensor' | 'graph' | 'graphs' | string;

export interface TensorValue {
  dtype: string;
  shape: number[];
  values?: Array<number | string | boolean>;
}

export type AttrValue = number | string | number[] | string[] | TensorValue | null;

export interface Attribute {
  name: string;
  type: AttrType;
  value: AttrValue;
}

export type Severity = 'error' | 'warning' | 'info' | null;

export interface ApiNode {
  id: number;
  name: string;
  op_type: string;
  domain: string;
  scope: string;
  inputs: string[];
  outputs: string[];
  attributes: Attribute[];
  subgraphs?: Array<{ attribute: string; index: number; nodes: number }>;
  function?: FunctionKey; // set on a call of one of the model's local functions
  severity?: Severity;
}

export type Dim = number | string;

export interface ValueInfo {
  name: string;
  type: string;
  shape?: Dim[] | null;
}

export interface InitializerInfo {
  name: string;
  dtype: string;
  shape: number[];
  bytes: number;
  /** Set for an initializer of a graph around the one shown (a subgraph reads it like its own). */
  path?: GraphPath;
}

export interface ApiGraph {
  version: number;
  graph: string;
  nodes: ApiNode[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  initializers: InitializerInfo[];
  value_types?: Record<string, { type: string; shape?: Dim[] | null }>;
  positions?: Record<string, [number, number]>;
  /** Graph inputs and outputs placed by the user: 'i:NAME' / 'o:NAME' -> [x, y]. */
  io_positions?: Record<string, [number, number]>;
  opset_imports?: Array<{ domain: string; version: number }>;
  functions?: FunctionKey[];
  /** The model's properties: graph_name, doc_string, producer_name, producer_version, domain,
   *  model_version, ir_version. */
  metadata?: Record<string, string | number>;
}

export interface FunctionKey {
  domain: string;
  name: string;
  overload?: string;
}

export interface DocumentInfo {
  id: string;
  path: string | null;
  name: string;
  dirty: boolean;
  version: number;
  can_undo: boolean;
  can_redo: boolean;
  undo: string;
  redo: string;
  changed_on_disk: boolean;
}

export interface Diagnostic {
  severity: 'error' | 'warning' | 'info';
  graph: string;
  node: string;
  node_id?: number;
  op_type: string;
  input_index: number;
  output_index: number;
  message: string;
  text: string;
}

export interface Change {
  kind: string;
  path?: unknown;
  node?: number;
}

/** What changed in the diagnostics list from version `base` (the list the client said it holds) to
 *  `version`: indices of `base`'s list removed, and items inserted at their index in the new list. */
export interface DiagnosticsDiff {
  base: number;
  version: number;
  removed: number[];
  added: [number, Diagnostic][];
}

export interface CommandAnswer {
  document: DocumentInfo;
  changes: Change[];
  /** The whole list: when the request gave no diagnostics_since, or not the version the server sent last. */
  diagnostics?: Diagnostic[];
  diagnostics_diff?: DiagnosticsDiff;
  /** The version of the list the answer gives (whole or as a diff): what the next edit sends as since. */
  diagnostics_version?: number;
  /** The edit's re-check was cut short for the answer: GET diagnostics gives the finished list. */
  diagnostics_partial?: boolean;
  node_ids?: number[];
  /** The nodes the edit added or changed ({id: node}, as GET nodes/{id}), when few and in one graph. */
  nodes?: Record<string, ApiNode> | null;
  /** Where those nodes sit in their graph's node list ({id: index}). */
  node_indices?: Record<string, number> | null;
}

export interface RegistryFormal {
  name: string;
  option: 'single' | 'optional' | 'variadic';
  types: string[];
}

export interface RegistryAttr {
  name: string;
  type: AttrType;
  required: boolean;
  default?: AttrValue;
}

export interface RegistryOp {
  domain: string;
  op_type: string;
  since_version: number;
  category: string;
  doc?: string;
  inputs: RegistryFormal[];
  outputs: RegistryFormal[];
  attributes: RegistryAttr[];
}

export interface FileEntry {
  name: string;
  kind: 'dir' | 'file';
  size: number;
}

// One edit command as serialised for POST /commands; fields per type in docs/studio-api.md.
export type Command = { type: string } & Record<string, unknown>;

/** Which graph of a document: absent steps (or null) is the main graph. */
export interface GraphPath {
  function?: FunctionKey;
  steps: Array<{ node: number; attribute: string; index: number }>;
}

/** What a transformation did (POST documents/{id}/transform): counts in the order first counted,
 *  warnings always shown, per-item details, and whether the model changed at all. */
export interface TransformLog {
  counts: Array<[string, number]>;
  warnings: string[];
  details: string[];
  changed: boolean;
}

export interface TransformAnswer extends CommandAnswer {
  log: TransformLog;
}

/** A transformation job (POST documents/{id}/jobs, GET jobs/{id}, pushed as "job" events without its
 *  answer). On success an edit's answer ("answer", with the log) or a new document ("document", "log"). */
export interface JobInfo {
  id: string;
  doc: string;
  transform: string;
  state: 'running' | 'succeeded' | 'failed' | 'cancelled';
  progress: number;
  stage: string;
  cancel_requested: boolean;
  seconds: number;
  error?: string;
  status?: number;
  answer?: TransformAnswer;
  document?: DocumentInfo;
  log?: TransformLog;
}

/** A "tool" event: a user tool's output from byte `from` on, and at its end the exit status. */
export interface ToolEvent {
  id: string;
  tool: string;
  from: number;
  output: string;
  next: number;
  done: boolean;
  cancelled?: boolean;
  exit_status?: number;
  signal?: number;
  output_file?: string;
}

/** A user tool of the tools file (GET /api/tools). */
export interface UserTool {
  name: string;
  application: string;
  arguments: string[];
  prompt_for_output: boolean;
  open_output: boolean;
}

export interface ToolList {
  file: string;
  tools: UserTool[];
  /** Why the tools file could not be read (not valid JSON...), when it could not. */
  problem?: string;
}

/** A run of a user tool, as polled: `output` is the text from the byte asked for on, `next` the byte
 *  after it (ask from there next time). */
export interface ToolRun {
  id: string;
  tool: string;
  output: string;
  next: number;
  done: boolean;
  cancelled: boolean;
  exit_status?: number;
  signal?: number;
  output_file: string;
  open_output?: boolean;
}

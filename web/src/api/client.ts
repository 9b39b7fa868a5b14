// Thin client of the studio server: every request carries the token (header), errors become exceptions
// with the server's one-sentence message.
import type {
  ApiGraph,
  ApiNode,
  Command,
  CommandAnswer,
  Diagnostic,
  DocumentInfo,
  FileEntry,
  InitializerInfo,
  JobInfo,
  RegistryOp,
  TensorValue,
  GraphPath,
  ToolList,
  ToolRun,
  TransformAnswer,
} from './types';
import { EventHub } from './events';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class StudioClient {
  private hub: EventHub | null = null;

  constructor(
    private readonly token: string,
    private readonly base = '',
  ) {}

  private async request<T>(method: string, url: string, body?: unknown): Promise<T> {
    // Without a token in the URL the HttpOnly cookie set by the server's '/' carries it.
    const headers: Record<string, string> = this.token ? { 'X-Tessera-Token': this.token } : {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.base + url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      throw new ApiError(res.status, `${method} ${url}: answer is not JSON (status ${res.status})`);
    }
    if (!res.ok) {
      const msg = (json as { error?: string })?.error ?? `status ${res.status}`;
      throw new ApiError(res.status, msg);
    }
    return json as T;
  }

  documents(): Promise<{ documents: DocumentInfo[] }> {
    return this.request('GET', '/api/documents');
  }
  open(path: string): Promise<DocumentInfo> {
    return this.request('POST', '/api/documents/open', { path });
  }
  create(opset: number, domains: Array<{ domain: string; version: number }> = []): Promise<DocumentInfo> {
    return this.request('POST', '/api/documents/new', { opset, domains });
  }
  save(id: string, path?: string): Promise<DocumentInfo> {
    return this.request('POST', `/api/documents/${id}/save`, path ? { path } : {});
  }
  close(id: string): Promise<unknown> {
    return this.request('POST', `/api/documents/${id}/close`, {});
  }
  files(dir = ''): Promise<{ root: string; dir: string; entries: FileEntry[] }> {
    return this.request('GET', `/api/files?dir=${encodeURIComponent(dir)}`);
  }
  graph(id: string, path: GraphPath | null = null): Promise<ApiGraph> {
    return this.request('GET', `/api/documents/${id}/graph${pathQuery(path, '?')}`);
  }
  node(id: string, nodeId: number, path: GraphPath | null = null): Promise<ApiNode> {
    return this.request('GET', `/api/documents/${id}/nodes/${nodeId}${pathQuery(path, '?')}`);
  }
  initializer(id: string, name: string, limit = 64, path: GraphPath | null = null): Promise<TensorValue> {
    return this.request(
      'GET',
      `/api/documents/${id}/initializers/${encodeURIComponent(name)}?limit=${limit}${pathQuery(path, '&')}`,
    );
  }
  /** `rows` runs of `limit` values of an initializer, the i-th from flat element offset + i * stride. */
  initializerWindow(
    id: string,
    name: string,
    window: { offset: number; limit: number; rows: number; stride: number },
    path: GraphPath | null = null,
  ): Promise<TensorValue> {
    const { offset, limit, rows, stride } = window;
    return this.request(
      'GET',
      `/api/documents/${id}/initializers/${encodeURIComponent(name)}?offset=${offset}&limit=${limit}&rows=${rows}&stride=${stride}${pathQuery(path, '&')}`,
    );
  }
  /** Up to `limit` values of a node's tensor attribute (what the graph answer leaves out). */
  attributeTensor(
    id: string,
    nodeId: number,
    name: string,
    limit: number,
    path: GraphPath | null = null,
  ): Promise<TensorValue> {
    return this.request(
      'GET',
      `/api/documents/${id}/nodes/${nodeId}/attributes/${encodeURIComponent(name)}?limit=${limit}${pathQuery(path, '&')}`,
    );
  }
  /** The initializers of the graphs around a subgraph, outermost first, each with its graph's path. */
  outerInitializers(id: string, path: GraphPath): Promise<{ initializers: InitializerInfo[] }> {
    return this.request('GET', `/api/documents/${id}/initializers${pathQuery(path, '?')}`);
  }
  /** `rows` runs of `limit` values of a node's tensor attribute, the i-th from element offset + i * stride
   *  (the paged tensor editor's page). */
  attributeWindow(
    id: string,
    nodeId: number,
    name: string,
    window: { offset: number; limit: number; rows: number; stride: number },
    path: GraphPath | null = null,
  ): Promise<TensorValue> {
    const { offset, limit, rows, stride } = window;
    return this.request(
      'GET',
      `/api/documents/${id}/nodes/${nodeId}/attributes/${encodeURIComponent(name)}?offset=${offset}&limit=${limit}&rows=${rows}&stride=${stride}${pathQuery(path, '&')}`,
    );
  }
  /** The k-th local function of the model, whole (what replace_function takes). */
  localFunction(id: string, k: number): Promise<Record<string, unknown> & { attributes: string[] }> {
    return this.request('GET', `/api/documents/${id}/functions/${k}`);
  }
  diagnostics(
    id: string,
  ): Promise<{ version: number; diagnostics_version?: number; diagnostics: Diagnostic[] }> {
    return this.request('GET', `/api/documents/${id}/diagnostics`);
  }
  registry(id: string): Promise<{ ops: RegistryOp[] }> {
    return this.request('GET', `/api/registry?doc=${encodeURIComponent(id)}`);
  }
  // `since`: the version of the diagnostics list the app holds; the answer then carries what changed
  // from it (diagnostics_diff) instead of the whole list.
  command(id: string, command: Command, expectVersion?: number, since?: number): Promise<CommandAnswer> {
    return this.request('POST', `/api/documents/${id}/commands`, {
      command,
      expect_version: expectVersion,
      diagnostics_since: since,
    });
  }
  batch(
    id: string,
    label: string,
    commands: Command[],
    expectVersion?: number,
    since?: number,
  ): Promise<CommandAnswer> {
    return this.request('POST', `/api/documents/${id}/commands`, {
      batch: label,
      commands,
      expect_version: expectVersion,
      diagnostics_since: since,
    });
  }
  undo(id: string, since?: number): Promise<CommandAnswer> {
    return this.request('POST', `/api/documents/${id}/undo`, { diagnostics_since: since });
  }
  redo(id: string, since?: number): Promise<CommandAnswer> {
    return this.request('POST', `/api/documents/${id}/redo`, { diagnostics_since: since });
  }
  /** A model transformation (Model menu) on the whole document, as one undo step, with its log. */
  transform(id: string, transform: string, options: Record<string, unknown>): Promise<TransformAnswer> {
    return this.request('POST', `/api/documents/${id}/transform`, { transform, options });
  }
  /** Starts a transformation as a background job; its progress and end come as "job" events. */
  startJob(id: string, transform: string, options: Record<string, unknown>): Promise<JobInfo> {
    return this.request('POST', `/api/documents/${id}/jobs`, { transform, options });
  }
  /** Every job the server keeps (running and recent), oldest first, without their answers. */
  jobs(): Promise<{ jobs: JobInfo[] }> {
    return this.request('GET', '/api/jobs');
  }
  /** The job, with its answer once it succeeded. */
  job(job: string): Promise<JobInfo> {
    return this.request('GET', `/api/jobs/${encodeURIComponent(job)}`);
  }
  cancelJob(job: string): Promise<JobInfo> {
    return this.request('POST', `/api/jobs/${encodeURIComponent(job)}/cancel`, {});
  }
  /** The server's pushed events (one stream for the page, opened on first use). */
  events(): EventHub {
    if (!this.hub) {
      // EventSource sends no headers: the token goes in the URL when the page has one, else the cookie.
      const url = `${this.base}/api/events${this.token ? `?token=${encodeURIComponent(this.token)}` : ''}`;
      this.hub = new EventHub(() => new EventSource(url));
    }
    return this.hub;
  }
  tools(): Promise<ToolList> {
    return this.request('GET', '/api/tools');
  }
  /** Starts a user tool on the saved document; `output`: where it writes a model (inside the root). */
  runTool(doc: string, tool: string, output?: string): Promise<ToolRun> {
    return this.request('POST', '/api/tools/run', output ? { doc, tool, output } : { doc, tool });
  }
  toolRun(run: string, from: number): Promise<ToolRun> {
    return this.request('GET', `/api/tools/runs/${encodeURIComponent(run)}?from=${from}`);
  }
  cancelTool(run: string): Promise<ToolRun> {
    return this.request('POST', `/api/tools/runs/${encodeURIComponent(run)}/cancel`, {});
  }
  /** `io`: graph inputs and outputs ('i:NAME' / 'o:NAME'), replacing those the graph had. */
  putPositions(
    id: string,
    positions: Record<string, [number, number]>,
    path: GraphPath | null = null,
    io: Record<string, [number, number]> = {},
  ): Promise<unknown> {
    return this.request(
      'PUT',
      `/api/documents/${id}/positions`,
      path ? { path, positions, io } : { positions, io },
    );
  }
}

function pathQuery(path: GraphPath | null, sep: '?' | '&'): string {
  return path ? `${sep}path=${encodeURIComponent(JSON.stringify(path))}` : '';
}

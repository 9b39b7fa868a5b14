// The server's pushed events (GET /api/events, Server-Sent Events): transformation jobs' progress and
// ends ("job"), user tools' output and exit status ("tool"), the finished diagnostics list after a partial
// edit answer ("diagnostics"). One stream per page; listeners by type.
// The browser's EventSource reconnects by itself, sending the last event id, and the server sends what
// was missed. Recent events are kept, so that a listener that subscribes just after starting a job or a
// run (its answer and its first events race) still sees them.

/** What the hub needs of an EventSource (a fake one in the unit tests). */
export interface EventSourceLike {
  addEventListener(type: string, listener: (e: MessageEvent) => void): void;
  close(): void;
}

type Listener = (data: unknown) => void;

/** Events kept for late listeners. */
const KEPT = 512;

export class EventHub {
  private source: EventSourceLike | null = null;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly recent: Array<{ type: string; data: unknown }> = [];

  constructor(
    private readonly open: () => EventSourceLike,
    private readonly types: readonly string[] = ['job', 'tool', 'diagnostics'],
  ) {}

  /** Opens the stream (the page does at start, so that the first events of a job are not missed). */
  start(): void {
    if (this.source) return;
    const source = this.open();
    this.source = source;
    for (const type of this.types) {
      source.addEventListener(type, (e: MessageEvent) => {
        let data: unknown;
        try {
          data = JSON.parse(String(e.data));
        } catch {
          return;
        }
        this.recent.push({ type, data });
        if (this.recent.length > KEPT) this.recent.shift();
        for (const fn of this.listeners.get(type) ?? []) fn(data);
      });
    }
  }

  /** Calls `fn` with each event of `type` from now on, and first with the recent ones; returns the
   *  function that stops it. */
  subscribe(type: string, fn: Listener): () => void {
    this.start();
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(fn);
    for (const e of this.recent.slice()) if (e.type === type) fn(e.data);
    return () => set.delete(fn);
  }

  close(): void {
    this.source?.close();
    this.source = null;
  }
}

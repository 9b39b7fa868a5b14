// The layout worker made by the page itself: the production index.html starts it in a classic script
// before the app's module script is fetched and run (vite.config.ts injects that script), so the worker
// is up by the time the first layout job is posted. Made from the app instead, it could not begin its
// script until the main thread's synchronous graph and view model build had ended (its start needs turns
// of the main thread): 50-430 ms on the first render's critical path.
import workerUrl from './worker?worker&url';

/** The global the injected script sets (vite.config.ts, PRESTART_GLOBAL). */
export const PRESTART_GLOBAL = '__tesseraLayoutWorker';

type Holder = Record<string, Worker | undefined>;

/** The worker the page started, taken once (a restarted worker is a new one); null when none was (the
 *  development server, tests). */
export function takePrestartedWorker(holder: Holder = globalThis as unknown as Holder): Worker | null {
  const w = holder[PRESTART_GLOBAL];
  if (!w) return null;
  holder[PRESTART_GLOBAL] = undefined;
  return w;
}

/** The worker for the layout client: the page's on the first call, a new one from the same file after. */
export function makeLayoutWorker(): Worker {
  // The development server serves the worker as an ES module; the build emits a classic (iife) one.
  return (
    takePrestartedWorker() ??
    (import.meta.env.DEV ? new Worker(workerUrl, { type: 'module' }) : new Worker(workerUrl))
  );
}

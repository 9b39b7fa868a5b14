import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from '@playwright/test';

export const artifactsDir = resolve(process.env.STUDIO_ARTIFACTS ?? '../build/studio-e2e');

export function artifact(name: string): string {
  mkdirSync(artifactsDir, { recursive: true });
  return join(artifactsDir, name);
}

/** Waits until the app has drawn a scene and has no request in flight. */
export async function ready(page: Page, timeout = 30_000): Promise<void> {
  await page.waitForFunction(
    () => (window as unknown as { __tessera?: { ready: boolean } }).__tessera?.ready,
    null,
    { timeout },
  );
}

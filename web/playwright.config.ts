import { defineConfig } from '@playwright/test';

// Debian's Chromium (never a downloaded browser); SwiftShader gives headless WebGL2 without a GPU.
export const chromiumArgs = [
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const artifacts = process.env.STUDIO_ARTIFACTS ?? '../build/studio-e2e';
// Another port lets two checkouts run the suite at once.
const port = Number(process.env.STUDIO_PREVIEW_PORT ?? 4179);

export default defineConfig({
  testDir: 'e2e',
  outputDir: `${artifacts}/results`,
  timeout: 90_000,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: {
    launchOptions: { executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: chromiumArgs },
    baseURL: `http://127.0.0.1:${port}/`,
    viewport: { width: 1280, height: 800 },
    screenshot: 'only-on-failure',
    trace: 'off',
  },
  webServer: {
    command: `npx vite preview --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});

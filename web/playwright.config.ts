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

export default defineConfig({
  testDir: 'e2e',
  outputDir: `${artifacts}/results`,
  timeout: 90_000,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: {
    launchOptions: { executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: chromiumArgs },
    viewport: { width: 1280, height: 800 },
    screenshot: 'only-on-failure',
    trace: 'off',
  },
  webServer: {
    command: 'npx vite preview --port 4179 --strictPort',
    url: 'http://127.0.0.1:4179/',
    reuseExistingServer: false,
    timeout: 30_000,
  },
});

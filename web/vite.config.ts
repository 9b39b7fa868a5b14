import { defineConfig } from 'vitest/config';

// Relative asset paths: the C++ server serves index.html at / and the bundle under /assets/.
export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  // A classic (not module) worker: it starts a few hundred ms sooner in Chromium, before the first layout.
  worker: { format: 'iife' },
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30000,
  },
});

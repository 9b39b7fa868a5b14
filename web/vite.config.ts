import { defineConfig, type Plugin } from 'vitest/config';

/** Starts the layout worker from the page, before the app's module script (src/layout/prestart.ts):
 *  a classic script at the top of <head> that makes the worker from the file the build emitted for
 *  `worker?worker&url`. Build only: the development server has no such file. */
function prestartLayoutWorker(): Plugin {
  return {
    name: 'tessera-prestart-layout-worker',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const files = Object.keys(ctx.bundle ?? {}).filter((f) => /(^|\/)worker-[\w-]+\.js$/.test(f));
        if (files.length !== 1)
          throw new Error(`expected one layout worker file in the bundle, found ${files.length}: ${files}`);
        // try: a page whose policy forbids workers still runs the app, which then makes its own.
        const src = `try{window.__tesseraLayoutWorker=new Worker(${JSON.stringify('./' + files[0])})}catch(e){}`;
        // Before the stylesheet: a classic script after one waits until the stylesheet has loaded.
        if (!html.includes('</title>'))
          throw new Error('index.html has no <title> to start the worker after');
        return html.replace('</title>', `</title>\n    <script>${src}</script>`);
      },
    },
  };
}

// Relative asset paths: the C++ server serves index.html at / and the bundle under /assets/.
export default defineConfig({
  base: './',
  plugins: [prestartLayoutWorker()],
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

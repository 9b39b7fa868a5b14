// The real server for the browser specs that need one (studio.spec.ts, transform-jobs.spec.ts): where the
// binary and samples are, why a spec is skipped, and starting `tessera studio` until it prints its URL.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const bin = resolve(process.env.TESSERA_BIN ?? '../build/src/tessera');
export const samples = resolve(process.env.TESSERA_SAMPLES ?? '../build/samples');
export const sample = join(samples, 'denoiser.onnx');

/** Why the studio specs cannot run here, or null. */
export function studioMissing(): string | null {
  if (!existsSync(bin)) return `no tessera binary at ${bin} (set TESSERA_BIN)`;
  if (!existsSync(sample)) return `no sample model at ${sample} (set TESSERA_SAMPLES)`;
  // CLI11 answers `--help` with the main help (exit 0) when it does not know the subcommand.
  const r = spawnSync(bin, ['studio', '--help'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.includes('--no-browser')) return `${bin} has no 'studio' subcommand yet`;
  return null;
}

/** Starts `tessera studio ARGS --web-root dist` and resolves with the URL (token included) it prints. */
export async function startStudio(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ server: ChildProcess; url: string }> {
  const server = spawn(bin, ['studio', ...args, '--web-root', resolve('dist')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL from tessera studio in 20 s: ${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Tessera studio: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolveUrl(m[1]);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.on('exit', (code) => reject(new Error(`tessera studio exited with ${code}: ${out}`)));
  });
  return { server, url };
}

/**
 * The layout's rules, checked on the source: the pure core and the workflows
 * import no Node built-ins, no Kubernetes client, no store and (workflows)
 * only types from the activities; the core imports nothing of ours outside it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const src = new URL('../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(src, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('testing'))
    .map((f) => join(dir, f));
}

/** Every `import … from 'x'` / `export … from 'x'` with whether it is type-only. */
function imports(file: string): { from: string; typeOnly: boolean }[] {
  const text = readFileSync(join(src, file), 'utf8');
  return [...text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)].map((m) => ({ from: m[3] as string, typeOnly: Boolean(m[2]) }));
}

describe('architecture', () => {
  it('keeps src/core pure: no Node built-ins, no Temporal, no Kubernetes client, nothing of ours outside core', () => {
    for (const file of sources('core')) {
      for (const { from } of imports(file)) {
        assert.ok(!from.startsWith('node:') && !from.startsWith('@temporalio/') && !from.startsWith('@kubernetes/'), `${file} imports ${from}`);
        assert.ok(!from.startsWith('../'), `${file} imports ${from} from outside core`);
      }
    }
  });

  it('keeps workflows deterministic: no Node built-ins or clients; activities by type only', () => {
    for (const file of sources('workflows')) {
      for (const { from, typeOnly } of imports(file)) {
        assert.ok(!from.startsWith('node:') && !from.startsWith('@kubernetes/') && from !== 'pg', `${file} imports ${from}`);
        assert.ok(!from.includes('/store/'), `${file} imports the store (${from})`);
        if (from.includes('/activities/')) assert.ok(typeOnly, `${file} imports ${from} by value`);
      }
    }
  });
});

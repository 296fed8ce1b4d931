/**
 * The layout's rules are enforced by ESLint (eslint.config.js, `npm run
 * lint`): this checks that the rules bite. Each snippet is linted as if it
 * stood in the named file; each must be refused by the named rule.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ESLint } from 'eslint';
import { workflowBundle } from './helpers.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const eslint = new ESLint({ cwd: ROOT });

/** The rule ids ESLint reports for `code` placed at `filePath`. */
async function violations(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('architecture rules (lint)', () => {
  it('refuses a floating promise anywhere', async () => {
    const found = await violations(
      `export async function f(): Promise<void> {}\nexport function g(): void {\n  f();\n}\n`,
      'src/facade/documents/documents.ts',
    );
    assert.ok(found.includes('@typescript-eslint/no-floating-promises'), found.join());
  });

  it('refuses a value import of the activities, a Node built-in and Math.random in workflow code', async () => {
    const found = await violations(
      `import { createActivities } from '../activities/index.ts';\nimport { readFileSync } from 'node:fs';\nexport const x = [createActivities, readFileSync, Math.random()];\n`,
      'src/workflows/rollup.ts',
    );
    assert.ok(found.includes('@typescript-eslint/no-restricted-imports'), found.join());
    assert.ok(found.includes('no-restricted-imports'), found.join());
    assert.ok(found.includes('no-restricted-properties'), found.join());
    const typeOnly = await violations(`import type { Activities } from '../activities/index.ts';\nexport type A = Activities;\n`, 'src/workflows/rollup.ts');
    assert.deepEqual(typeOnly, [], 'a type import of the activities is allowed');
  });

  it('keeps src/core pure: nothing of ours outside it, no Temporal', async () => {
    for (const file of ['src/core/plan/targets.ts', 'src/core/site/schema.ts']) {
      const found = await violations(
        `import { openStore } from '../../store/open-store.ts';\nimport { proxyActivities } from '@temporalio/workflow';\nexport const x = [openStore, proxyActivities];\n`,
        file,
      );
      assert.equal(found.filter((r) => r === 'no-restricted-imports').length, 2, `${file}: ${found.join()}`);
    }
  });

  it('keeps the plan side free of the site side, which may import it', async () => {
    const found = await violations(`import { SchemaName } from '../site/schema.ts';\nexport const x = SchemaName;\n`, 'src/core/plan/targets.ts');
    assert.ok(found.includes('no-restricted-imports'), found.join());
    const reverse = await violations(`import { planLabels } from '../plan/label-plan.ts';\nexport const x = planLabels;\n`, 'src/core/site/schema.ts');
    assert.deepEqual(
      reverse.filter((r) => r === 'no-restricted-imports'),
      [],
      'the site side may import the plan side',
    );
  });

  it('keeps the fleet side off the site side: it runs in the workflow sandbox', async () => {
    const found = await violations(`import { SchemaName } from '../site/schema.ts';\nexport const x = SchemaName;\n`, 'src/core/fleet/fleet-waves.ts');
    assert.ok(found.includes('no-restricted-imports'), found.join());
    const plan = await violations(`import { quote } from '../plan/text.ts';\nexport const x = quote;\n`, 'src/core/fleet/fleet-waves.ts');
    assert.deepEqual(
      plan.filter((r) => r === 'no-restricted-imports'),
      [],
      'the fleet side may import the plan side',
    );
  });

  it('lets workflow code import only src/core/plan and src/core/fleet from the core, even as a type', async () => {
    for (const code of [
      `import { validateSite } from '../core/site/validate-site.ts';\nexport const x = validateSite;\n`,
      `import type { Design } from '../core/site/validate-site.ts';\nexport type X = Design;\n`,
    ]) {
      const found = await violations(code, 'src/workflows/rollup.ts');
      assert.ok(found.includes('no-restricted-imports'), `${code}: ${found.join()}`);
    }
    const plan = await violations(`import { FailureType } from '../core/plan/failure-types.ts';\nexport const x = FailureType;\n`, 'src/workflows/rollup.ts');
    assert.deepEqual(plan, [], 'src/core/plan is allowed in workflow code');
    const fleet = await violations(
      `import { assignFleetWaves } from '../core/fleet/fleet-waves.ts';\nexport const x = assignFleetWaves;\n`,
      'src/workflows/rollup.ts',
    );
    assert.deepEqual(fleet, [], 'src/core/fleet is allowed in workflow code');
  });

  it('keeps the activities off the workflows, even as a type: what both speak is in src/contracts', async () => {
    for (const code of [
      `import { rejectionOf } from '../workflows/failure.ts';\nexport const x = rejectionOf;\n`,
      `import type { FailureInfo } from '../workflows/failure.ts';\nexport type X = FailureInfo;\n`,
    ]) {
      const found = await violations(code, 'src/activities/plan-run.ts');
      assert.ok(found.includes('no-restricted-imports'), `${code}: ${found.join()}`);
    }
    const contracts = await violations(
      `import { runWorkflowId } from '../contracts/messages.ts';\nexport const x = runWorkflowId;\n`,
      'src/activities/plan-run.ts',
    );
    assert.deepEqual(contracts, [], 'the activities may import src/contracts');
  });

  it('keeps src/worker off the facade: the entry point injects the run starter; the activities import neither the facade nor the workflows', async () => {
    const places: [string, string][] = [
      ['src/worker/wiring.ts', '../facade/runs/runs.ts'],
      ['src/worker/run.ts', '../facade/runs/run-starter.ts'],
      ['src/activities/drift-activities.ts', '../facade/runs/runs.ts'],
      ['src/activities/plan-run.ts', '../workflows/index.ts'],
      ['src/activities/joins/join-watcher.ts', '../../facade/runs/run-starter.ts'],
      ['src/store/runs/sql-run-store.ts', '../../workflows/index.ts'],
      ['src/activities/joins/join-watch.ts', '../../workflows/watch-joins.ts'],
      ['src/activities/joins/join-watch.ts', '../../worker/wiring.ts'],
    ];
    for (const [file, from] of places) {
      const found = await violations(`import { x } from '${from}';\nexport const y = x;\n`, file);
      assert.ok(found.includes('no-restricted-imports'), `${file} importing ${from}: ${found.join()}`);
    }
    const entry = await violations(`import { facadeRunStarter } from './facade/runs/run-starter.ts';\nexport const x = facadeRunStarter;\n`, 'src/worker.ts');
    assert.deepEqual(
      entry.filter((r) => r === 'no-restricted-imports'),
      [],
      'the entry point assembles: it may hand the facade to the worker',
    );
  });

  it('keeps every folder of src/api out of the workflows, the I/O layers and the facade, however deep', async () => {
    const places: [string, string][] = [
      ['src/workflows/rollup.ts', '../api/http/server.ts'],
      ['src/workflows/rollup.ts', '../api/shipyard/action-rollout.ts'],
      ['src/activities/plan-run.ts', '../api/runs/run-ids.ts'],
      ['src/kube/nodes.ts', '../api/promenade/node-labels.ts'],
      ['src/facade/plan.ts', '../api/drydock/task-views.ts'],
      ['src/facade/runs/runs.ts', '../../api/drydock/task-views.ts'],
      ['src/facade/runs/run-start.ts', '../../activities/plan-run.ts'],
      ['src/store/runs/run-store.ts', '../../api/runs/run-ids.ts'],
    ];
    for (const [file, from] of places) {
      const found = await violations(`import { x } from '${from}';\nexport const y = x;\n`, file);
      assert.ok(found.includes('no-restricted-imports'), `${file} importing ${from}: ${found.join()}`);
    }
  });

  it('keeps src/contracts at the bottom: only itself, src/core/plan and the workflow-side Temporal packages', async () => {
    for (const from of [
      '../workflows/failure.ts',
      '../activities/index.ts',
      '../store/runs/run-store.ts',
      '../core/site/schema.ts',
      '@temporalio/client',
      'node:fs',
      'zod',
    ]) {
      const found = await violations(`import { x } from '${from}';\nexport const y = x;\n`, 'src/contracts/messages.ts');
      assert.ok(found.includes('no-restricted-imports'), `src/contracts importing ${from}: ${found.join()}`);
    }
    const allowed = await violations(
      `import { defineQuery } from '@temporalio/workflow';\nimport { defineSearchAttributeKey } from '@temporalio/common';\nimport { FailureType } from '../core/plan/failure-types.ts';\nimport { RunStatus } from './messages.ts';\nexport const x = [defineQuery, defineSearchAttributeKey, FailureType, RunStatus];\n`,
      'src/contracts/drift-messages.ts',
    );
    assert.deepEqual(allowed, []);
  });
});

/** The relative imports (values and types, `export … from` too) of every module of src/ but the tests, by path from the root. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => join('src', f));
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const code = readFileSync(join(ROOT, file), 'utf8');
      const specifiers = [...code.matchAll(/^(?:import|export)\s(?:[^'"]*?\sfrom\s)?'(\.[^']+)'/gm)].map((m) => m[1] ?? '');
      return [file, specifiers.map((s) => join(dirname(file), s)).filter((target) => known.has(target))];
    }),
  );
}

/** The import cycles of `graph`, each as the modules around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('imports of src/', () => {
  it('form no cycle, not even through a type', () => {
    const graph = importGraph();
    assert.ok(graph.size > 100, `read ${graph.size} modules`);
    assert.ok(
      graph.get('src/activities/joins/join-watch.ts')?.includes('src/activities/joins/join-watcher.ts'),
      'the graph holds the imports it is meant to: the join activity imports its watcher',
    );
    assert.deepEqual(
      cycles(graph).map((cycle) => cycle.join(' → ')),
      [],
    );
  });

  it('the cycle check finds a cycle', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    assert.deepEqual(cycles(graph), [['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});

describe('modules every workflow of a worker thread shares (lint)', () => {
  it('refuses a variable or a mutable collection at module scope in workflow, contract and plan code', async () => {
    for (const [code, file] of [
      ['let seen = 0;\nexport function f(): number {\n  return ++seen;\n}\n', 'src/workflows/rollup.ts'],
      ['export let last: string | undefined;\n', 'src/contracts/messages.ts'],
      [
        'const cache = new Map<string, number>();\nexport function f(k: string): number | undefined {\n  return cache.get(k);\n}\n',
        'src/core/plan/label-plan.ts',
      ],
      ['export const seen = new Set<string>();\n', 'src/workflows/update-labels-window.ts'],
    ] as const) {
      const found = await violations(code, file);
      assert.ok(found.includes('no-restricted-syntax'), `${file}: ${code} ${found.join()}`);
    }
    const allowed = await violations(
      "const KEYS: ReadonlySet<string> = new Set(['a']);\nexport function f(k: string): boolean {\n  let hit = KEYS.has(k);\n  hit &&= k !== '';\n  return hit;\n}\n",
      'src/core/plan/label-keys.ts',
    );
    assert.deepEqual(allowed, [], 'a read-only lookup set and variables inside functions are allowed');
  });
});

describe('one settings table (lint)', () => {
  it('refuses a variable read by name outside src/settings/, in any of its spellings', async () => {
    const reads = [
      `export const x = process.env.RELABEL_DEBUG;\n`,
      `export const x = process.env['TEMPORAL_UI_URL'];\n`,
      `export function f(env: NodeJS.ProcessEnv): string | undefined {\n  return env.RELABEL_SEARCH_ATTRIBUTES;\n}\n`,
      `const { RELABEL_API_TOKENS } = process.env;\nexport const x = RELABEL_API_TOKENS;\n`,
    ];
    for (const file of ['src/cli/output.ts', 'src/facade/index.ts', 'src/worker/wiring.ts', 'src/client.ts']) {
      for (const code of reads) {
        const found = await violations(code, file);
        assert.ok(found.includes('no-restricted-syntax'), `${file}: ${code}: ${found.join()}`);
      }
    }
  });

  it('lets the table read variables, and others pass the environment whole to it', async () => {
    const byName = await violations(`export const x = process.env.RELABEL_DEBUG;\n`, 'src/settings/table.ts');
    assert.deepEqual(
      byName.filter((r) => r === 'no-restricted-syntax'),
      [],
    );
    const whole = await violations(`export function f(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {\n  return env;\n}\n`, 'src/facade/index.ts');
    assert.deepEqual(
      whole.filter((r) => r === 'no-restricted-syntax'),
      [],
    );
  });
});

describe('the fast workflow tests beside the workflow code (lint)', () => {
  it("may use Node, the SDK's testing package and the test kit, which workflow code still may not", async () => {
    const code = `import { readFileSync } from 'node:fs';\nimport { TestWorkflowEnvironment } from '@temporalio/testing';\nimport { startWorkflowEnv } from '../../test/kit/workflows/environment.ts';\nexport const x = [readFileSync, TestWorkflowEnvironment, startWorkflowEnv, Date.now()];\n`;
    assert.deepEqual(await violations(code, 'src/workflows/update-labels-window.test.ts'), []);
    const sandboxed = await violations(code, 'src/workflows/rollup.ts');
    assert.ok(sandboxed.includes('no-restricted-imports'), sandboxed.join());
    assert.ok(sandboxed.includes('@typescript-eslint/no-restricted-imports'), sandboxed.join());
    assert.ok(sandboxed.includes('no-restricted-properties'), sandboxed.join());
  });

  it('reach the stack only through the test kit', async () => {
    const found = await violations(
      `import { toolPath } from '../../stack/tools.ts';\nexport const x = toolPath;\n`,
      'src/workflows/update-labels-window.test.ts',
    );
    assert.ok(found.includes('no-restricted-imports'), found.join());
  });
});

describe('the test kit stays out of the product (lint)', () => {
  it('refuses an import of test/ from any file of src/ that is not a test, whatever other rules the folder has', async () => {
    const places: [string, string][] = [
      ['src/worker.ts', '../test/kit/node-process.ts'],
      ['src/workflows/rollup.ts', '../../test/kit/workflows/fake-activities.ts'],
      ['src/core/site/schema.ts', '../../../test/kit/site/documents.ts'],
      ['src/core/plan/targets.ts', '../../../test/kit/plan/apply-json-patch.ts'],
      ['src/store/open-store.ts', '../../test/kit/store/contract.ts'],
      ['src/activities/joins/join-watch.ts', '../../../test/kit/node-process.ts'],
      ['src/api/promenade/node-labels.ts', '../../../test/kit/plan/apply-json-patch.ts'],
      ['src/facade/documents/documents.ts', '../../../test/kit/site/document-store.ts'],
      ['src/worker/run.ts', '../../test/helpers.ts'],
      ['src/contracts/messages.ts', '../../test/kit/workflows/environment.ts'],
    ];
    for (const [file, from] of places) {
      const found = await violations(`import { x } from '${from}';\nexport const y = x;\n`, file);
      assert.ok(found.includes('@typescript-eslint/no-restricted-imports'), `${file} importing ${from}: ${found.join()}`);
    }
  });

  it('lets the unit tests beside the code import the kit', async () => {
    const places: [string, string][] = [
      ['src/store/sql/sqlite-store.test.ts', '../../../test/kit/store/contract.ts'],
      ['src/core/site/longhorn.test.ts', '../../../test/kit/site/documents.ts'],
      ['src/core/plan/node-guard.test.ts', '../../../test/kit/plan/apply-json-patch.ts'],
      ['src/api/promenade/node-labels.test.ts', '../../../test/kit/plan/apply-json-patch.ts'],
      ['src/workflows/update-labels-window.test.ts', '../../test/kit/workflows/environment.ts'],
    ];
    for (const [file, from] of places) {
      const found = await violations(`import { x } from '${from}';\nexport const y = x;\n`, file);
      assert.deepEqual(
        found.filter((r) => r.endsWith('no-restricted-imports')),
        [],
        `${file} importing ${from}`,
      );
    }
  });
});

/** The imports of `file` (its `code`; values and types, `export … from` and `import()` too) that reach test/ or stack/. */
function reachesOutOfProduct(file: string, code: string): string[] {
  const specifiers = [...code.matchAll(/^\s*(?:import|export)\s(?:[^'"]*?\sfrom\s)?'(\.[^']+)'|import\(\s*'(\.[^']+)'/gm)].map((m) => m[1] ?? m[2] ?? '');
  return specifiers.filter((s) => /^(test|stack)\//.test(join(dirname(file), s)));
}

describe('src/ holds only the product and its unit tests', () => {
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));

  it('keeps no test support: no testing/ folder or testing.ts, as the kit is in test/kit', () => {
    assert.ok(files.length > 100, `read ${files.length} files`);
    assert.deepEqual(
      files.filter((f) => /(^|\/)testing(\/|\.ts$)/.test(f)),
      [],
    );
  });

  it('no module but a test imports test/ or stack/, not even as a type', () => {
    const product = files.filter((f) => !f.endsWith('.test.ts')).map((f) => join('src', f));
    assert.deepEqual(
      product.flatMap((file) => reachesOutOfProduct(file, readFileSync(join(ROOT, file), 'utf8')).map((s) => `${file} → ${s}`)),
      [],
    );
  });

  it('the check finds an import of test/ or stack/ however it is spelled', () => {
    const code = [
      `import { x } from '../../test/kit/node-process.ts';`,
      `import type { Y } from '../../stack/tools.ts';`,
      `export { z } from '../../test/helpers.ts';`,
      `const w = await import('../../test/kit/store/contract.ts');`,
      `import { v } from '../wiring.ts';`,
    ].join('\n');
    assert.deepEqual(reachesOutOfProduct('src/worker/run.ts', code), [
      '../../test/kit/node-process.ts',
      '../../stack/tools.ts',
      '../../test/helpers.ts',
      '../../test/kit/store/contract.ts',
    ]);
  });
});

describe('the feature map (docs/architecture.md)', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const named = [...doc.matchAll(/`((?:src|test|bench|stack)\/[\w./-]*)`/g)].map((m) => m[1] ?? '');

  it('names only paths that exist', () => {
    assert.ok(named.length > 50, `the map names ${named.length} paths`);
    assert.deepEqual(
      [...new Set(named)].filter((p) => !existsSync(join(ROOT, p))),
      [],
    );
  });

  it('the CI script (.ci/run) names only test files that exist', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const files = [...ci.matchAll(/(?:src|test|bench|stack)\/[\w./-]+\.ts/g)].map((m) => m[0]);
    assert.deepEqual(
      files.filter((p) => !existsSync(join(ROOT, p))),
      [],
    );
  });

  it('the CI script stops at its first failing step: set -e, and no step inside an && or || list (set -e does not stop there)', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    assert.match(ci, /^set -euo pipefail$/m);
    const steps = ci.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    assert.deepEqual(
      steps.filter((line) => /&&|\|\|/.test(line)),
      [],
    );
  });

  it('gives no integration test the name of a unit test in src/ (a name says which one it is)', () => {
    const testsUnder = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.test.ts') && !f.includes('node_modules'));
    const base = (f: string) => f.split('/').at(-1) ?? f;
    const units = new Set(testsUnder('src').map(base));
    assert.deepEqual(
      testsUnder('test').filter((f) => units.has(base(f))),
      [],
    );
  });

  it('names every folder of integration tests', () => {
    const support = new Set(['fixtures', 'histories', 'artifacts']);
    const folders = readdirSync(join(ROOT, 'test'), { withFileTypes: true }).filter((e) => e.isDirectory() && !support.has(e.name));
    assert.deepEqual(
      folders.map((e) => `test/${e.name}/`).filter((f) => !named.some((p) => p.startsWith(f))),
      [],
    );
  });
});

describe('the workflow bundle', () => {
  // The SDK's reusable V8 context keeps a module cache per workflow: a module
  // not preloaded is evaluated afresh for every child (a schema library pulled
  // in through the core once doubled the worker's CPU per relabelled node).
  it('holds only the Temporal SDK and relabel code that workflows need, no schema library', async () => {
    const { code } = await workflowBundle();
    const packages = new Set([...code.matchAll(/node_modules\/((?:@[^/"']+\/)?[^/"']+)/g)].map((m) => m[1]));
    assert.deepEqual(
      [...packages].filter((p) => !/^(@temporalio\/(common|workflow)|nexus-rpc|long|ms)$/.test(p ?? '')),
      [],
    );
    const ours = new Set([...code.matchAll(/"\.\/src\/([a-z/.-]+\.ts)"/g)].map((m) => m[1]));
    assert.ok(ours.has('core/plan/failure-types.ts'), 'the bundle names the modules it holds as read here');
    assert.deepEqual(
      [...ours].filter((m) => m?.startsWith('core/') === true && !m.startsWith('core/plan/') && !m.startsWith('core/fleet/')),
      [],
      'workflow code holds no core module outside src/core/plan and src/core/fleet',
    );
    assert.ok(ours.has('core/fleet/fleet-waves.ts'), 'the fleet rollout takes its waves from src/core/fleet');
    for (const heavy of ['core/site/schema.ts', 'core/site/validate-site.ts', 'core/site/design-resolve.ts'])
      assert.ok(!ours.has(heavy), `${heavy} is not in the workflow bundle`);
  });

  it('preloads the workflow modules: evaluated once per worker thread, not once per workflow', async () => {
    const { code } = await workflowBundle();
    const preload = /exports\.preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
    assert.match(preload, /__webpack_require__\([^)]*"\.\/src\/workflows\/index\.ts"\)/, `preloaded: ${preload.trim() || 'nothing'}`);
  });
});

describe("the README's Layout block", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /^## Layout\n+```\n([\s\S]*?)\n```/m.exec(readme)?.[1] ?? '';
  const rows = block.split('\n');

  it('names only paths that exist', () => {
    assert.ok(rows.length > 10, `the Layout block has ${rows.length} rows`);
    const named = [...block.matchAll(/(?:^|[\s(;])((?:src|stack|tools|examples|test|bench|deploy|scripts|bin)\/[\w./-]*)/gm)].map((m) =>
      (m[1] ?? '').replace(/[.,:]+$/, ''),
    );
    assert.ok(named.length > 15, `the block names ${named.length} paths`);
    assert.deepEqual(
      [...new Set(named)].filter((p) => !existsSync(join(ROOT, p))),
      [],
    );
  });

  it('gives every top-level folder of src/ a row of its own', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `src/${e.name}/`);
    assert.ok(folders.length > 5, folders.join());
    assert.deepEqual(
      folders.filter((f) => !rows.some((row) => row.startsWith(f))),
      [],
    );
  });
});

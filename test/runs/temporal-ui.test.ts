/**
 * A run is readable from the Temporal Web UI alone: headless Chromium opens
 * the parent run while it is in progress and finds its summary, its
 * children and its progress details, and the site's drift and plugin poll
 * schedules; the screenshots are kept as artifacts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createSchedules } from '../../src/facade/schedules.ts';
import { headlessChromium } from '../chromium.ts';
import { adminCore, createNode, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;

/**
 * Waits until some frame of the page has text matching `pattern` and returns
 * the page's text. The UI renders summaries and details (markdown) in
 * sandboxed iframes, so every frame is read.
 */
async function frameTextMatching(page: Page, pattern: RegExp, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const texts = await Promise.all(page.frames().map((f) => f.evaluate('document.body ? document.body.innerText : ""').catch(() => '')));
    const text = texts.join('\n');
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`no frame shows ${pattern} after ${timeoutMs} ms; page text:\n${text.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('the Temporal UI shows a run', () => {
  const prefix = `ui${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let browser: Browser;

  before(async () => {
    // The bundled build unless RELABEL_CHROMIUM names another.
    const { executablePath, args, env } = await headlessChromium();
    browser = await chromium.launch({ executablePath, args: [...args], env });
    // Two API requests a second, so the run is still going while the page is read.
    relabel = await startRelabel((await storeWithSite(site.files)).url, { kubeQps: 2 });
    for (const name of site.nodes) await createNode(adminCore(), name);
  });
  after(async () => {
    await browser?.close();
    await relabel?.stop();
  });

  it('finds the parent, its children and the progress details', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // One node at a time, so the run is still going while the page is read.
    const run = await relabel.runs.start({ targets: site.nodes, concurrency: 1 });
    assert.ok(run.uiLink);
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    try {
      await page.goto(run.uiLink, { waitUntil: 'domcontentloaded' });
      await page.getByText(run.workflowId).first().waitFor({ timeout: 30_000 });
      await page
        .getByText(new RegExp(`Relabel ${prefix}-cab23-r720-1\\d at revision 1`))
        .first()
        .waitFor({ timeout: 30_000 });
      await page.screenshot({ path: `${ARTIFACTS}temporal-ui-run.png` });
      // Progress details set by the workflow as children complete.
      await page.getByText('User Metadata').first().click();
      // The run's summary (markdown, rendered in a frame of its own).
      await frameTextMatching(page, /Update labels of 24 node\(s\) to revision 1/, 30_000);
      const details = await frameTextMatching(page, /\d+ ok, \d+ failed, \d+ running, \d+ pending of 24/, 30_000);
      assert.match(details, /applying/);
      assert.match(details, new RegExp(`update_labels on site ${prefix}-site, revision 1`));
      await page.screenshot({ path: `${ARTIFACTS}temporal-ui-metadata.png` });

      await relabel.runs.wait(run);
      await page.goto(run.uiLink.replace(/history$/, 'relationships'), { waitUntil: 'domcontentloaded' });
      for (const node of site.nodes.slice(0, 3)) {
        await page.getByText(`${run.workflowId}/${run.run}/${node}`).first().waitFor({ timeout: 30_000 });
      }
      await page.screenshot({ path: `${ARTIFACTS}temporal-ui-children.png` });
    } finally {
      await page.close();
    }
  });

  it('lists the drift and plugin poll schedules of the site, with the workflow each starts', async () => {
    const ui = process.env.TEMPORAL_UI_URL;
    assert.ok(ui, 'TEMPORAL_UI_URL is set by the global setup');
    const schedules = createSchedules({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue });
    const drift = await schedules.create('drift', { paused: true });
    const plugins = await schedules.create('plugins', { paused: true });
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    try {
      await page.goto(`${ui}/namespaces/default/schedules`, { waitUntil: 'domcontentloaded' });
      await page.getByText(drift.scheduleId).first().waitFor({ timeout: 30_000 });
      await page.getByText(plugins.scheduleId).first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: `${ARTIFACTS}temporal-ui-schedules.png` });
      await page.getByText(drift.scheduleId).first().click();
      await page.getByText('detectDrift').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: `${ARTIFACTS}temporal-ui-drift-schedule.png` });
    } finally {
      await page.close();
      for (const id of [drift.scheduleId, plugins.scheduleId]) await schedules.delete(id);
    }
  });
});

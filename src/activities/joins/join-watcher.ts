/**
 * One watching attempt of a site's join watcher: follow the Nodes (a
 * subscriber of the worker's node informer: every Node, then every change),
 * and start a join run for the managed nodes that join, one run at a time.
 * Driven by the `watchNodeJoins` activity (`join-watch.ts`),
 * which gives it the Temporal client and the heartbeat, and stops it on
 * cancellation. See that module for why nothing here needs to survive a
 * crash.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { FailureType } from '../../core/plan/failure-types.ts';
import { UNINITIALIZED_TAINT_KEY } from '../../core/plan/constants.ts';
import { JoinQueue } from '../../core/plan/join-queue.ts';
import { joinTaintKeyOf } from '../../core/plan/taints.ts';
import { runAudit, StartedVia, type RunAudit } from '../../core/plan/run-audit.ts';
import { clip } from '../../core/plan/text.ts';
import {
  DEFAULT_JOIN_BATCH,
  DEFAULT_JOIN_CONCURRENCY,
  DEFAULT_JOIN_DELAY_MS,
  DEFAULT_WATCH_SECONDS,
  JOIN_ACTION,
  joinWorkflowId,
  type JoinRunRef,
  type JoinWatchReport,
} from '../../contracts/join-messages.ts';
import type { NodeInformer, NodeSubscriber, NodeSubscription } from '../../kube/node-informer.ts';
import type { NodeState } from '../../kube/nodes.ts';
import { membershipOf } from '../../core/plan/node-sets.ts';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import { failureSummary } from '../../temporal/failure.ts';
import { runWorkflowId, type UpdateLabelsResult } from '../../contracts/messages.ts';
import type { RunStarter } from '../../temporal/run-starter.ts';
import type { JoinHealth, JoinTelemetry, WatchNodeJoinsInput } from './join-ports.ts';

/** How often the watcher heartbeats (the SDK sends at most one every 0.8 × the workflow's heartbeat timeout). */
const HEARTBEAT_MS = 1000;
/** How long held nodes wait before the watcher tries again; an idle watcher's look at the queue. */
const IDLE_MS = 5000;
/** Longest reason kept. */
const MAX_REASON = 500;

/**
 * The latest committed revision, which nodes it manages and its join
 * taint's key, or why there is none to label with.
 */
type Target = { revision: number; site: string; taintKey: string; manages(node: NodeState): boolean } | { revision?: number; held: string };

/** What a watcher works with. */
export interface JoinWatcherDeps {
  /** The worker's node informer (one list-and-watch for every subscriber). */
  informer: Pick<NodeInformer, 'subscribe' | 'resourceVersion'>;
  store: Store;
  designs: DesignCache;
  startRun: RunStarter;
  client: Client;
  heartbeat(report: JoinWatchReport): void;
  telemetry?: JoinTelemetry;
  health?: JoinHealth;
}

/** `message`, as a bounded reason. */
function reason(prefix: string, err: unknown): string {
  return clip(`${prefix}${err instanceof Error ? err.message : String(err)}`, MAX_REASON);
}

/** One watching attempt. */
export class JoinWatcher {
  private readonly queue = new JoinQueue();
  private readonly stats = { dispatched: 0, labelled: 0, failed: 0, unmanaged: 0, runs: 0 };
  private readonly stopping = new AbortController();
  private readonly site: string;
  private readonly audit: RunAudit;
  private target: Target = { held: 'not read yet' };
  /** The join taint's key of the latest design read. */
  private taintKey = UNINITIALIZED_TAINT_KEY;
  /** The informer's sync under way: the Nodes it listed, and where it began in the queue. */
  private sync: { present: Set<string>; mark: number } | undefined;
  private subscription: NodeSubscription | undefined;
  private markSynced: () => void = () => undefined;
  private readonly firstSync = new Promise<void>((resolve) => (this.markSynced = resolve));
  private lastRun: JoinRunRef | undefined;
  private held: string | undefined;
  private watchError: string | undefined;
  private wake: (() => void) | undefined;
  private readonly deps: JoinWatcherDeps;
  private readonly input: WatchNodeJoinsInput;

  constructor(deps: JoinWatcherDeps, input: WatchNodeJoinsInput) {
    this.deps = deps;
    this.input = input;
    this.site = input.site;
    this.audit = runAudit(`join:${joinWorkflowId(input.site)}${input.enabledBy ? ` (enabled by ${input.enabledBy})` : ''}`, StartedVia.join);
    this.stopping.signal.addEventListener('abort', () => this.nudge(), { once: true });
  }

  /** Stops watching; `run` returns soon after. */
  stop(): void {
    this.stopping.abort();
  }

  /** Reads the latest committed revision; not ok when it is of another site. */
  async checkSite(): Promise<{ ok: true } | { ok: false; message: string }> {
    this.target = await this.currentTarget();
    if ('site' in this.target && this.target.site !== this.site) {
      return { ok: false, message: `unknown site ${this.site}: the store's latest revision (${this.target.revision}) is of site ${this.target.site}` };
    }
    return { ok: true };
  }

  /** Follows the Nodes and starts join runs until stopped or its time is up; returns the last report. */
  async run(): Promise<JoinWatchReport> {
    const timer = setTimeout(() => this.stop(), (this.input.watchSeconds ?? DEFAULT_WATCH_SECONDS) * 1000);
    const beat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.subscription = this.deps.informer.subscribe(this.subscriber);
    try {
      this.beat();
      await this.unlessStopped(this.firstSync);
      // A dispatch failure (the store, Temporal) fails the attempt: the retry follows the Nodes again.
      await this.dispatchLoop();
      return this.report();
    } finally {
      this.subscription.close();
      this.stop();
      clearTimeout(timer);
      clearInterval(beat);
      this.deps.health?.forget(this.site);
    }
  }

  /** What the watcher has done, bounded. */
  report(): JoinWatchReport {
    const oldest = this.queue.oldest();
    return {
      site: this.site,
      resourceVersion: this.deps.informer.resourceVersion,
      ...(this.target.revision !== undefined ? { revision: this.target.revision } : {}),
      pending: this.queue.size,
      oldestPendingSeconds: oldest === undefined ? 0 : Math.round((Date.now() - oldest) / 100) / 10,
      ...this.stats,
      ...(this.lastRun ? { lastRun: this.lastRun } : {}),
      ...(this.held ? { held: this.held } : {}),
      ...(this.watchError ? { watchError: this.watchError } : {}),
      at: new Date().toISOString(),
    };
  }

  private beat(): void {
    this.deps.heartbeat(this.report());
    this.deps.telemetry?.pending(this.site, this.queue.size);
  }

  private nudge(): void {
    this.wake?.();
    this.wake = undefined;
  }

  /** Resolves after `ms`, when nudged, or when stopped. */
  private idle(ms: number): Promise<void> {
    if (this.stopping.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  /** `promise`, or undefined once the watcher stops. */
  private unlessStopped<T>(promise: Promise<T>): Promise<T | undefined> {
    if (this.stopping.signal.aborted) return Promise.resolve(undefined);
    return Promise.race([
      promise,
      new Promise<undefined>((resolve) => this.stopping.signal.addEventListener('abort', () => resolve(undefined), { once: true })),
    ]);
  }

  /** The design nodes join into: the latest committed revision's. */
  private async currentTarget(): Promise<Target> {
    const latest = await this.deps.store.revisions.latest();
    if (!latest) return { held: 'no revision has been committed yet' };
    const result = await this.deps.designs.get(latest.id);
    if (!result.ok)
      return {
        revision: latest.id,
        held: `the documents of revision ${latest.id} are invalid (${result.errors.length} error(s)); joining nodes wait for a valid revision`,
      };
    const { design } = result;
    // A node a BaremetalNode names, or one node sets match (its labels say which). A node two sets match
    // goes to its run too, which fails it NodeInTwoSets naming them, as an operator's run does; it is not written.
    const manages = (node: NodeState) => membershipOf(design, node).kind !== 'none';
    return { revision: latest.id, site: design.site, taintKey: joinTaintKeyOf(design.policy), manages };
  }

  private observe(node: NodeState): void {
    const target = this.target;
    // Without a design to label with, the key of the last one seen (held nodes are counted, not run).
    if ('taintKey' in target) this.taintKey = target.taintKey;
    const seen = this.queue.observe(node, () => 'manages' in target && target.manages(node), Date.now(), this.taintKey);
    if (seen.kind === 'queued') this.nudge();
    else if (seen.kind === 'unmanaged' && seen.first) {
      this.stats.unmanaged++;
      this.deps.telemetry?.unmanaged(this.site);
    } else if (seen.kind === 'labelled') {
      this.stats.labelled++;
      this.deps.telemetry?.labelled(this.site, seen.seconds);
    }
  }

  /**
   * What the informer tells the watcher: a sync finds every joining node
   * (those that joined while no watcher ran too) and forgets the nodes it no
   * longer lists; a change queues or settles its node.
   */
  private readonly subscriber: NodeSubscriber = {
    listing: () => {
      this.sync = { present: new Set(), mark: this.queue.listBegins() };
    },
    listed: (nodes) => {
      for (const node of nodes) {
        this.sync?.present.add(node.name);
        this.observe(node);
      }
    },
    synced: () => {
      // A change the watch brought during the sync is newer than its snapshot: keepOnly keeps it.
      if (this.sync) this.queue.keepOnly(this.sync.present, this.sync.mark);
      this.sync = undefined;
      this.watchError = undefined;
      this.deps.health?.report(this.site, undefined);
      this.markSynced();
    },
    changed: (event) => {
      if (event.type === 'DELETED') this.queue.delete(event.node.name);
      else this.observe(event.node);
    },
    failed: (during, err) => {
      this.watchError = reason(`${during}: `, err);
      this.deps.health?.report(this.site, this.watchError);
    },
  };

  /** Waits for the site's run that is going (whoever started it) to end. */
  private async waitForSiteRun(): Promise<void> {
    try {
      await this.unlessStopped(this.deps.client.workflow.getHandle(runWorkflowId(this.site)).result());
    } catch {
      // However it ended, it ended (or is gone): the next start says.
    }
  }

  /** Reads the latest committed revision again when it changed; a new design may manage nodes skipped before. */
  private async refreshTarget(): Promise<void> {
    const latest = await this.deps.store.revisions.latest();
    if (latest?.id === this.target.revision) return;
    this.target = await this.currentTarget();
    if ('manages' in this.target) await this.unlessStopped(this.subscription?.resync() ?? Promise.resolve());
  }

  /** Starts join runs while nodes wait, one run at a time. */
  private async dispatchLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      if (this.queue.size === 0) {
        await this.idle(IDLE_MS);
        continue;
      }
      // Give a burst a moment to gather into one run.
      await sleep(this.input.batchDelayMs ?? DEFAULT_JOIN_DELAY_MS);
      if (this.stopping.signal.aborted) break;
      await this.refreshTarget();
      const target = this.target;
      if (!('manages' in target)) {
        this.held = target.held;
        await this.idle(IDLE_MS);
        continue;
      }
      await this.dispatch(target.revision);
    }
  }

  /** Starts one join run over the oldest waiting nodes, and waits for it to end. */
  private async dispatch(revision: number): Promise<void> {
    const batch = this.queue.take(this.input.maxBatch ?? DEFAULT_JOIN_BATCH);
    if (batch.length === 0) return;
    let started;
    try {
      started = await this.deps.startRun(this.deps.client, {
        targets: batch.map((n) => n.name),
        revision,
        action: JOIN_ACTION,
        audit: this.audit,
        concurrency: this.input.concurrency ?? DEFAULT_JOIN_CONCURRENCY,
      });
    } catch (err) {
      this.queue.putBack(batch);
      const type = (err as { type?: unknown }).type;
      if (type === FailureType.RunInProgress) {
        this.held = reason("waiting for the site's run to end: ", err);
        await this.waitForSiteRun();
        return;
      }
      this.held = reason(typeof type === 'string' ? `${type}: ` : '', err);
      await this.idle(IDLE_MS);
      return;
    }
    this.held = undefined;
    this.stats.runs++;
    this.stats.dispatched += batch.length;
    this.deps.telemetry?.run(this.site, batch.length);
    this.lastRun = { run: started.run, workflowId: started.workflowId, runId: started.runId, nodes: batch.length };
    this.beat();
    try {
      const result = (await this.unlessStopped(this.deps.client.workflow.getHandle(started.workflowId, started.runId).result())) as
        Partial<Pick<UpdateLabelsResult, 'status' | 'counts'>> | undefined;
      if (result) this.lastRun = { ...this.lastRun, status: result.status ?? 'completed' };
      const failed = result?.counts?.failure ?? 0;
      if (failed > 0) {
        this.stats.failed += failed;
        this.deps.telemetry?.failed(this.site, failed);
      }
    } catch (err) {
      const { type, message } = failureSummary(err);
      this.lastRun = { ...this.lastRun, status: clip(`rejected: ${type}: ${message}`, MAX_REASON) };
    }
  }
}

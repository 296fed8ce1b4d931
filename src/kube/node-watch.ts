/**
 * Watching Nodes: a paginated LIST that gives the resourceVersion to watch
 * from, and a watch from it with bookmarks. The join watcher's only way to
 * the API server's stream of Node changes; it needs `list` and `watch` on
 * nodes, nothing more.
 */
import { Watch, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { nodePageLister, type NodePageLister } from './node-list.ts';
import { limited, toNodeState, type NodeState } from './nodes.ts';
import type { RateLimiter } from './rate-limit.ts';

/** A change to a Node, as a watch reports it. */
export interface NodeWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  node: NodeState;
}

/**
 * The watch's resourceVersion is too old for the server (410 Gone): list
 * again, then watch from the new list's resourceVersion.
 */
export class WatchExpiredError extends Error {
  override readonly name = 'WatchExpiredError';
  constructor(message: string) {
    super(`the Node watch expired (410 Gone: ${message}); list again`);
  }
}

/** What a page tells of the whole list. */
export interface NodeListPage {
  /** The list's resourceVersion (the first page's: every page is of it). */
  resourceVersion: string;
  /** Nodes on the pages after this one, when the server counted them. */
  remaining?: number;
}

/** List and watch Nodes. */
export interface NodeWatchApi {
  /**
   * Lists every Node, `pageSize` a page, handing each page to `onPage` with
   * the list's resourceVersion and, when the server counted them, the Nodes
   * still to come; resolves with the list's resourceVersion (a consistent
   * snapshot: every page is of it). A continue token that expires is a
   * WatchExpiredError.
   */
  list(pageSize: number, onPage: (nodes: NodeState[], list: NodeListPage) => void | Promise<void>): Promise<string>;
  /**
   * Watches Nodes from `resourceVersion` (bookmarks asked for), telling
   * `onEvent` of each change in order, until the server ends the watch or
   * `signal` aborts; resolves with the newest resourceVersion seen
   * (bookmarks included), from which the next watch goes on; `onBookmark`,
   * when given, is told each bookmark's version. Rejects with
   * WatchExpiredError when the server no longer has that version, or the
   * error that broke the connection.
   */
  watch(
    resourceVersion: string,
    onEvent: (event: NodeWatchEvent) => void,
    signal: AbortSignal,
    onBookmark?: (resourceVersion: string) => void,
  ): Promise<string>;
}

/** Seconds the server keeps one watch open before ending it (a new one goes on from where it ended). */
export const WATCH_TIMEOUT_SECONDS = 240;

/** A {@link NodeWatchApi} over `kc`; LIST pages take a token of `limiter` (the watch is one long request and takes none). */
export function createNodeWatchApi(kc: KubeConfig, limiter: RateLimiter, lister: NodePageLister = nodePageLister(kc)): NodeWatchApi {
  const watcher = new Watch(kc);
  return {
    async list(pageSize, onPage) {
      let cont: string | undefined;
      let version = '';
      do {
        const token = cont;
        let page;
        try {
          page = await limited(limiter, () => lister({ limit: pageSize, ...(token ? { _continue: token } : {}) }));
        } catch (err) {
          if (token && (err as { code?: number }).code === 410) throw new WatchExpiredError('the list continue token expired');
          throw err;
        }
        if (version === '') version = page.metadata?.resourceVersion ?? '';
        const remaining = page.metadata?.remainingItemCount;
        await onPage(page.items.map(toNodeState), { resourceVersion: version, ...(remaining !== undefined ? { remaining } : {}) });
        cont = page.metadata?._continue || undefined;
      } while (cont);
      if (version === '') throw new Error('the Node list answered no resourceVersion to watch from');
      return version;
    },

    watch(resourceVersion, onEvent, signal, onBookmark) {
      return new Promise<string>((resolve, reject) => {
        let version = resourceVersion;
        let failure: Error | undefined;
        let controller: AbortController | undefined;
        const stop = () => controller?.abort();
        const onChange = (type: string, object: unknown) => {
          if (failure) return;
          if (type === 'BOOKMARK') {
            version = (object as V1Node).metadata?.resourceVersion ?? version;
            onBookmark?.(version);
            return;
          }
          if (type === 'ERROR') {
            const status = object as { code?: number; message?: string };
            failure =
              status.code === 410
                ? new WatchExpiredError(status.message ?? 'too old resource version')
                : new Error(`the Node watch answered an error: ${status.code ?? '?'} ${status.message ?? ''}`.trim());
            stop();
            return;
          }
          if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
          const node = toNodeState(object as V1Node);
          if (node.resourceVersion) version = node.resourceVersion;
          onEvent({ type, node });
        };
        const done = (err: unknown) => {
          signal.removeEventListener('abort', stop);
          if (failure) return reject(failure);
          if (err && !signal.aborted) {
            const code = (err as { statusCode?: number }).statusCode;
            // The client ends a watch silent for 30 s with a timeout: a quiet cluster, not a failure.
            if ((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError') return resolve(version);
            return reject(code === 410 ? new WatchExpiredError('HTTP 410') : err instanceof Error ? err : new Error(String(err)));
          }
          resolve(version);
        };
        if (signal.aborted) return resolve(version);
        signal.addEventListener('abort', stop, { once: true });
        watcher
          .watch('/api/v1/nodes', { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS }, onChange, done)
          .then((c) => {
            controller = c;
            if (signal.aborted) c.abort();
          })
          .catch(done);
      });
    },
  };
}

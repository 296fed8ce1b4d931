/**
 * Shipyard's configdocs: stage a bucket's YAML documents into the buffer
 * (each document checked on its own), commit the buffer as a revision (the
 * whole site validated; `force` and `dryrun` as Shipyard), read a bucket or
 * the whole rendered site. What is refused is refused whole, every error
 * listed, and nothing is stored.
 */
import { z } from 'zod';
import { FailureType } from '../../core/plan/failure-types.ts';
import { formatError } from '../../core/plan/site-error.ts';
import type { ApiDeps } from '../http/deps.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { revisionView } from './routes-revisions.ts';
import { BucketPath, CommitQuery, ConfigdocsBody, ConfigdocsQuery, ConfigdocsStatusQuery, RenderedQuery, StageQuery } from '../http/schemas.ts';
import { CollectionStatusList, CommitAnswer, type CommitStatus, StatusBody } from '../http/response-schemas.ts';
import { ApiError, statusBody } from '../http/status.ts';
import { documentsYaml, renderedYaml } from './yaml-text.ts';

const error = { description: 'Airship Status error', schema: StatusBody };

/** Path of a bucket's configdocs. */
const bucketUrl = (bucket: string) => `/api/v1.0/configdocs/${bucket}`;

/** The configdocs routes that read: collection status, a bucket, the rendered site. */
function readRoutes({ relabel }: ApiDeps): RouteDef[] {
  const { documents } = relabel;
  const { configdocs } = documents;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/configdocs',
      operationId: 'getConfigdocsStatus',
      summary: "Each collection's status between two versions (default committed against buffer), as Shipyard's collection status",
      description:
        'The older of the two versions (successful_site_action, last_site_action, committed, buffer, oldest first) is the base. Every bucket of ' +
        'either side is listed with new_status created, modified, deleted or unmodified. A missing committed version is the empty revision 0; ' +
        'a missing site-action version is a 404. new_revision is null for a buffer holding changes (it has no revision until committed).',
      tag: 'configdocs',
      access: 'read',
      query: ConfigdocsStatusQuery,
      responses: { 200: { description: 'the collections', schema: CollectionStatusList }, 400: error, 404: error },
      async handle({ query }) {
        return { code: 200, body: await configdocs.status(query.versions) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/configdocs/:bucket',
      operationId: 'getConfigdocs',
      summary: "A bucket's documents as YAML: staged (version=buffer, the default) or of a committed revision",
      tag: 'configdocs',
      access: 'read',
      params: BucketPath,
      query: ConfigdocsQuery,
      responses: { 200: { description: 'the documents', yaml: true }, 400: error, 404: error },
      async handle({ params, query }) {
        const version = query.version ?? 'buffer';
        if (version === 'buffer') {
          const staged = (await documents.buffer()).find((b) => b.bucket === params.bucket);
          if (!staged || staged.files.length === 0) throw new ApiError(FailureType.BucketNotFound, `bucket ${params.bucket} is not staged`);
          return { code: 200, yaml: documentsYaml(staged.files) };
        }
        const { revision, files } = await configdocs.documentsOf(version);
        const mine = files.filter((f) => f.bucket === params.bucket);
        if (mine.length === 0) throw new ApiError(FailureType.BucketNotFound, `bucket ${params.bucket} has no documents in revision ${revision} (${version})`);
        return { code: 200, yaml: documentsYaml(mine) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/renderedconfigdocs',
      operationId: 'getRenderedConfigdocs',
      summary:
        "Every document of a version rendered as Deckhand renders them, as YAML: buffer (the default, as Shipyard: the committed site with the staged buckets laid over it), committed, or a site action's",
      tag: 'configdocs',
      access: 'read',
      query: RenderedQuery,
      responses: { 200: { description: 'the documents', yaml: true }, 400: error, 404: error },
      async handle({ query }) {
        const version = query.version ?? 'buffer';
        const { files } = await configdocs.documentsOf(version);
        return { code: 200, yaml: renderedYaml(files, `the ${version} documents`) };
      },
    }),
  ];
}

/** The configdocs routes that change the store: stage a bucket, commit the buffer. */
function changeRoutes({ relabel }: ApiDeps): RouteDef[] {
  const { documents } = relabel;
  const { configdocs } = documents;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/configdocs/:bucket',
      operationId: 'stageConfigdocs',
      summary: "Stages a bucket's documents (multi-document YAML) under Shipyard's buffer modes, or its removal (empty-collection=true)",
      description:
        'Each document is checked on its own: YAML syntax, schema, label syntax, names given twice in the bucket; any error ' +
        'refuses the request, listing every error, and stages nothing. References to other documents (host profiles, racks, ' +
        'the label policy), in this bucket or another, are checked by commitconfigdocs, so a site can be staged one bucket at a time. ' +
        'With a buffermode (Shipyard): rejectoncontents refuses (409) when the buffer holds any change, append when this bucket is already ' +
        'changed in it, replace empties the buffer first; documents identical to the committed bucket are refused (400, nothing staged). ' +
        "Without one, relabel's own mode: this bucket's staged content is replaced, the others are kept. empty-collection=true stages the " +
        "bucket's removal (no body needed).",
      tag: 'configdocs',
      access: 'write',
      params: BucketPath,
      query: StageQuery,
      body: { media: 'yaml', schema: z.string().optional(), required: false, description: 'multi-document YAML (none with empty-collection=true)' },
      responses: { 201: { description: 'staged', schema: StatusBody }, 400: error, 409: error },
      async handle({ params, query, body }) {
        const { bucket } = params;
        const empty = query['empty-collection'] === true;
        // Shipyard's client sends no body (an empty one) with empty-collection, and the body is then ignored.
        const text = empty ? undefined : ConfigdocsBody.safeParse(body).data;
        if (!empty && text === undefined) {
          throw new ApiError(FailureType.InvalidRequest, 'the body must hold YAML documents; to remove the collection, send empty-collection=true');
        }
        const files = text === undefined ? null : [{ source: `${bucket}.yaml`, text }];
        const status = await configdocs.stage(bucket, files, query.buffermode ?? 'bucket');
        const message =
          files === null ? `Collection ${bucket} emptied in the buffer (${status})` : `Configuration documents staged in bucket ${bucket} (${status})`;
        return { code: 201, body: statusBody({ status: 'Success', code: 201, reason: 'Created', message }), headers: { location: bucketUrl(bucket) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/commitconfigdocs',
      operationId: 'commitConfigdocs',
      summary: 'Commits the buffer as a new revision after validating the whole site',
      description:
        'The site validated is the committed one with the staged buckets laid over it: references across documents and buckets, ' +
        'inheritance, label conflicts, one policy and region per site. Invalid: 400 listing every error, nothing committed, the ' +
        'buffer kept. force=true commits anyway and lists the errors as Warning messages; an update run refuses that revision. ' +
        'dryrun=true validates only: 200 with status Success, or Failure listing every error. A buffer that changes nothing is a 409 (EmptyBuffer).',
      tag: 'configdocs',
      access: 'write',
      query: CommitQuery,
      responses: {
        200: { description: 'committed (CommitStatus), or with dryrun=true the validation (Status)', schema: CommitAnswer },
        400: error,
        409: { description: 'nothing is staged, or the staged buckets change nothing', schema: StatusBody },
      },
      async handle({ query }) {
        if ((await documents.buffer()).length > 0 && !(await configdocs.hasChanges())) {
          throw new ApiError(FailureType.EmptyBuffer, 'the staged buckets change nothing compared with the committed revision: nothing to commit');
        }
        if (query.dryrun === true) {
          const { buckets, errors } = await documents.checkCommit();
          const valid = errors.length === 0;
          const body: StatusBody = statusBody({
            status: valid ? 'Success' : 'Failure',
            code: 200,
            reason: valid ? 'OK' : FailureType.DocumentValidationFailed,
            message: valid
              ? `Validations succeeded DRYRUN: the site is valid with the staged bucket(s) ${buckets.join(', ')}; nothing committed`
              : `Validations failed DRYRUN: ${errors.length} document error(s); nothing committed`,
            messages: errors.map(formatError),
            level: 'Error',
          });
          return { code: 200, body };
        }
        const { revision, warnings } = await documents.commit(query.force === true ? { force: true } : {});
        const committed = `Configuration documents committed as revision ${revision.id}`;
        const body: CommitStatus = {
          ...statusBody({
            status: 'Success',
            code: 200,
            reason: 'OK',
            message: warnings.length === 0 ? committed : `${committed} despite ${warnings.length} document error(s) (FORCED SUCCESS)`,
            messages: warnings.map(formatError),
            level: 'Warning',
          }),
          revision: revisionView(revision),
        };
        return { code: 200, body };
      },
    }),
  ];
}

/** The configdocs routes. */
export function configdocsRoutes(deps: ApiDeps): RouteDef[] {
  return [...readRoutes(deps), ...changeRoutes(deps)];
}

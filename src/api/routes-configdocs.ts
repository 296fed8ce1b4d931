/**
 * Shipyard's configdocs: stage a bucket's YAML documents into the buffer
 * (each document checked on its own), commit the buffer as a revision (the
 * whole site validated; `force` and `dryrun` as Shipyard), read a bucket or
 * the whole rendered site. What is refused is refused whole, every error
 * listed, and nothing is stored.
 */
import { FailureType } from '../core/failure-types.ts';
import { formatError } from '../core/site-error.ts';
import type { Documents } from '../facade/documents.ts';
import { SiteActionTag, type Revision } from '../store/revision-store.ts';
import type { ApiDeps } from './deps.ts';
import { defineRoute, type RouteDef } from './route.ts';
import { revisionView, revisionYaml } from './routes-revisions.ts';
import { BucketPath, CommitQuery, ConfigdocsBody, ConfigdocsQuery, RenderedQuery, StageQuery, type ConfigdocsVersion } from './schemas.ts';
import { CommitAnswer, type CommitStatus, StatusBody } from './response-schemas.ts';
import { ApiError, statusBody } from './status.ts';
import { documentsYaml } from './yaml-text.ts';

/** The revision a committed `version` names, or a 404. */
async function revisionOf(documents: Documents, version: Exclude<ConfigdocsVersion, 'buffer'>): Promise<Revision> {
  if (version === 'committed') {
    const latest = await documents.latest();
    if (!latest) throw new ApiError(FailureType.NotFound, 'no revision has been committed');
    return latest;
  }
  const wanted: string[] = version === 'successful_site_action' ? [SiteActionTag.success] : [SiteActionTag.success, SiteActionTag.failure];
  const revision = (await documents.list()).reverse().find((r) => r.tags.some((t) => wanted.includes(t.tag)));
  if (!revision) throw new ApiError(FailureType.NotFound, `no revision is tagged ${wanted.join(' or ')}`);
  return revision;
}

const error = { description: 'Airship Status error', schema: StatusBody };

/** The configdocs routes. */
export function configdocsRoutes({ relabel }: ApiDeps): RouteDef[] {
  const { documents } = relabel;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/configdocs/:bucket',
      operationId: 'stageConfigdocs',
      summary: "Stages a bucket's documents (multi-document YAML), replacing what the buffer held for it",
      description:
        'Each document is checked on its own: YAML syntax, schema, label syntax, names given twice in the bucket; any error ' +
        'refuses the request, listing every error, and stages nothing. References to other documents (host profiles, racks, ' +
        'the label policy), in this bucket or another, are checked by commitconfigdocs, so a site can be staged one bucket at a time.',
      tag: 'configdocs',
      access: 'write',
      params: BucketPath,
      query: StageQuery,
      body: { media: 'yaml', schema: ConfigdocsBody, required: true, description: 'multi-document YAML' },
      responses: { 201: { description: 'staged', schema: StatusBody }, 400: error },
      async handle({ params, body }) {
        await documents.stage(params.bucket, [{ source: `${params.bucket}.yaml`, text: body }]);
        return {
          code: 201,
          body: statusBody({ status: 'Success', code: 201, reason: 'Created', message: `Configuration documents staged in bucket ${params.bucket}` }),
        };
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
      responses: { 200: { description: 'the documents', yaml: true }, 404: error },
      async handle({ params, query }) {
        const version = query.version ?? 'buffer';
        if (version === 'buffer') {
          const staged = (await documents.buffer()).find((b) => b.bucket === params.bucket);
          if (!staged || staged.files.length === 0) throw new ApiError(FailureType.BucketNotFound, `bucket ${params.bucket} is not staged`);
          return { code: 200, yaml: documentsYaml(staged.files) };
        }
        const revision = await revisionOf(documents, version);
        return { code: 200, yaml: await revisionYaml(documents, revision.id, params.bucket) };
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
        'dryrun=true validates only: 200 with status Success, or Failure listing every error.',
      tag: 'configdocs',
      access: 'write',
      query: CommitQuery,
      responses: {
        200: { description: 'committed (CommitStatus), or with dryrun=true the validation (Status)', schema: CommitAnswer },
        400: error,
        409: { description: 'nothing is staged', schema: StatusBody },
      },
      async handle({ query }) {
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
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/renderedconfigdocs',
      operationId: 'getRenderedConfigdocs',
      summary: "Every document of a committed revision (version=committed, the default) as YAML",
      tag: 'configdocs',
      access: 'read',
      query: RenderedQuery,
      responses: { 200: { description: 'the documents', yaml: true }, 404: error },
      async handle({ query }) {
        const revision = await revisionOf(documents, query.version ?? 'committed');
        return { code: 200, yaml: await revisionYaml(documents, revision.id) };
      },
    }),
  ];
}

/**
 * Shipyard's configdocs: stage a bucket's YAML documents into the buffer,
 * commit the buffer as a revision, read a bucket or the whole rendered site.
 * Invalid documents are refused whole with every error; nothing is staged.
 */
import { FailureType } from '../core/failure-types.ts';
import type { Documents } from '../facade/documents.ts';
import { SiteActionTag, type Revision } from '../store/revision-store.ts';
import type { ApiDeps } from './deps.ts';
import { defineRoute, type RouteDef } from './route.ts';
import { revisionView, revisionYaml } from './routes-revisions.ts';
import { BucketPath, CommitQuery, ConfigdocsBody, ConfigdocsQuery, RenderedQuery, StageQuery, type ConfigdocsVersion } from './schemas.ts';
import { CommitStatus, StatusBody } from './response-schemas.ts';
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
      description: 'The site the buffer would then make is validated whole; any error refuses the request and stages nothing.',
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
      tag: 'configdocs',
      access: 'write',
      query: CommitQuery,
      responses: { 200: { description: 'committed', schema: CommitStatus }, 400: error, 409: { description: 'nothing is staged', schema: StatusBody } },
      async handle() {
        const revision = await documents.commit();
        const body: CommitStatus = {
          ...statusBody({ status: 'Success', code: 200, reason: 'OK', message: `Configuration documents committed as revision ${revision.id}` }),
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

/**
 * Deckhand's revisions: list, show (with tags), rendered documents, and the
 * tags a site action records itself with (`site-action-success`,
 * `site-action-failure`).
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { Revision, RevisionTag } from '../../store/revisions/revision-store.ts';
import type { Documents } from '../../facade/documents/documents.ts';
import type { ApiDeps } from '../http/deps.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { RevisionPath, RevisionTagPath, TagDataBody } from '../http/schemas.ts';
import { RevisionList, RevisionView, StatusBody, TagView } from '../http/response-schemas.ts';
import { ApiError } from '../http/status.ts';
import { documentsYaml, renderedYaml } from './yaml-text.ts';

/** Path of a revision. */
export const revisionUrl = (id: number) => `/api/v1.0/revisions/${id}`;

/** A tag as answered. */
export function tagView(tag: RevisionTag): TagView {
  return { tag: tag.tag, data: { ...tag.data }, createdAt: tag.createdAt.toISOString() };
}

/** A revision as answered. */
export function revisionView(revision: Revision): RevisionView {
  return {
    id: revision.id,
    url: revisionUrl(revision.id),
    createdAt: revision.createdAt.toISOString(),
    message: revision.message,
    buckets: [...revision.buckets],
    tags: revision.tags.map(tagView),
  };
}

/** A revision's documents as one YAML stream; RevisionNotFound when absent. */
export async function revisionYaml(documents: Documents, id: number, bucket?: string): Promise<string> {
  const files = (await documents.files(id)).filter((f) => bucket === undefined || f.bucket === bucket);
  if (files.length === 0 && bucket !== undefined) throw new ApiError(FailureType.BucketNotFound, `bucket ${bucket} has no documents in revision ${id}`);
  return documentsYaml(files);
}

const error = { description: 'Airship Status error', schema: StatusBody };

/** The revision routes. */
export function revisionRoutes({ relabel }: ApiDeps): RouteDef[] {
  const { documents } = relabel;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/revisions',
      operationId: 'listRevisions',
      summary: 'Every committed revision, oldest first, with its tags',
      tag: 'revisions',
      access: 'read',
      responses: { 200: { description: 'the revisions', schema: RevisionList } },
      async handle() {
        const results = (await documents.list()).map(revisionView);
        return { code: 200, body: { count: results.length, next: null, prev: null, results } satisfies RevisionList };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/revisions/:id',
      operationId: 'getRevision',
      summary: 'One revision with its tags',
      tag: 'revisions',
      access: 'read',
      params: RevisionPath,
      responses: { 200: { description: 'the revision', schema: RevisionView }, 404: error },
      async handle({ params }) {
        return { code: 200, body: revisionView(await documents.show(Number(params.id))) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/revisions/:id/rendered-documents',
      operationId: 'getRenderedDocuments',
      summary: "A revision's documents rendered as Deckhand renders them, as one multi-document YAML stream (what Drydock's design_ref reads)",
      tag: 'revisions',
      access: 'read',
      params: RevisionPath,
      responses: { 200: { description: 'the documents', yaml: true }, 404: error },
      async handle({ params }) {
        const id = Number(params.id);
        return { code: 200, yaml: renderedYaml(await documents.files(id), `revision ${id}`) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/revisions/:id/tags/:tag',
      operationId: 'tagRevision',
      summary: 'Tags a revision (replacing the data of an existing tag); the body is optional JSON data kept with it',
      tag: 'revisions',
      access: 'write',
      params: RevisionTagPath,
      body: { media: 'json', schema: TagDataBody, required: false, description: 'a JSON object kept with the tag' },
      responses: { 201: { description: 'the tag', schema: TagView }, 400: error, 404: error },
      async handle({ params, body }) {
        const tag = await documents.tag(Number(params.id), params.tag, body);
        return { code: 201, body: tagView(tag), headers: { location: `${revisionUrl(Number(params.id))}/tags/${params.tag}` } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1.0/revisions/:id/tags/:tag',
      operationId: 'untagRevision',
      summary: 'Removes a tag from a revision',
      tag: 'revisions',
      access: 'write',
      params: RevisionTagPath,
      responses: { 204: { description: 'removed' }, 404: error },
      async handle({ params }) {
        const removed = await documents.untag(Number(params.id), params.tag);
        if (!removed) throw new ApiError(FailureType.TagNotFound, `revision ${params.id} has no tag ${params.tag}`);
        return { code: 204 };
      },
    }),
  ];
}

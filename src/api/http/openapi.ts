/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route
 * declarations and their zod schemas (`z.toJSONSchema`): what is documented
 * is exactly what is validated.
 */
import { z } from 'zod';
import { MEDIA_TYPES, type RouteDef } from './route.ts';
import { ActionRequest, NodeLabelsBody, PlanRequest, TaskRequest } from './schemas.ts';
import { ActionList, ActionView, CommitStatus, NodeLabelsStatus, PlanView, RevisionList, RevisionView, StatusBody, TagView } from './response-schemas.ts';
import { TaskView } from '../drydock/task-schemas.ts';

/** Schemas published under `components.schemas` and referenced by name. */
const NAMED: ReadonlyMap<z.ZodType, string> = new Map<z.ZodType, string>([
  [StatusBody, 'Status'],
  [NodeLabelsStatus, 'NodeLabelsStatus'],
  [CommitStatus, 'CommitStatus'],
  [ActionRequest, 'ActionRequest'],
  [ActionView, 'Action'],
  [ActionList, 'ActionList'],
  [TaskRequest, 'TaskRequest'],
  [TaskView, 'Task'],
  [PlanRequest, 'PlanRequest'],
  [PlanView, 'Plan'],
  [RevisionView, 'Revision'],
  [RevisionList, 'RevisionList'],
  [TagView, 'Tag'],
  [NodeLabelsBody, 'NodeLabels'],
]);

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function schemaOrRef(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const name = NAMED.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  // A union of published schemas: each by reference.
  if (schema instanceof z.ZodUnion) {
    const options = schema.options as readonly z.ZodType[];
    if (options.every((option) => NAMED.has(option))) return { anyOf: options.map((option) => schemaOrRef(option, io)) };
  }
  return jsonSchema(schema, io);
}

/** OpenAPI parameters from a strict object schema of path or query fields. */
function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (object.required ?? []).includes(name),
    schema: property,
  }));
}

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Status' } } } });

function operation(route: RouteDef): JsonSchema {
  const body = route.body;
  const responses: Record<string, unknown> = {};
  for (const [code, spec] of Object.entries(route.responses)) {
    const textType = spec.yaml ? 'application/x-yaml' : spec.text;
    responses[code] = textType
      ? { description: spec.description, content: { [textType]: { schema: { type: 'string' } } } }
      : spec.schema
        ? { description: spec.description, content: { 'application/json': { schema: schemaOrRef(spec.schema, 'output') } } }
        : { description: spec.description };
  }
  if (route.access !== 'public') responses['401'] ??= errorResponse('no token, or an unknown one');
  if (route.access === 'write') responses['403'] ??= errorResponse('a viewer token on a write');
  if (body) {
    responses['400'] ??= errorResponse('the request is invalid');
    responses['413'] ??= errorResponse('the body is larger than the limit');
    responses['415'] ??= errorResponse('the body is not of the media type this route takes');
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.access === 'public' ? { security: [] } : {}),
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    ...(body
      ? {
          requestBody: {
            required: body.required,
            ...(body.description ? { description: body.description } : {}),
            content: Object.fromEntries(MEDIA_TYPES[body.media].map((type) => [type, { schema: schemaOrRef(body.schema, 'input') }])),
          },
        }
      : {}),
    responses,
  };
}

/** The OpenAPI document of `routes`. */
export function openApiDocument(routes: readonly RouteDef[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const schemas: Record<string, unknown> = {};
  for (const [schema, name] of NAMED) {
    schemas[name] = jsonSchema(schema, name.endsWith('Request') || name === 'NodeLabels' ? 'input' : 'output');
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'relabel API',
      version,
      description:
        'Airship-compatible HTTP API of relabel: Shipyard actions and configdocs, Deckhand revisions, Drydock relabel_nodes tasks, ' +
        "Promenade node-labels. Every error is Airship's Status body; its `reason` is relabel's failure type. " +
        'Action and task ids are base64url(workflowId + "|" + runId) of the update run.',
    },
    servers: [{ url: '/' }],
    security: [{ authToken: [] }, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        authToken: { type: 'apiKey', in: 'header', name: 'X-Auth-Token' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      schemas,
    },
  };
}

/**
 * Documents as Airship clients read them: one multi-document YAML stream.
 */
import { createHash } from 'node:crypto';
import { parseAllDocuments, stringify } from 'yaml';
import { renderedDocuments } from '../../core/site/render-site.ts';
import { PYYAML_OPTIONS } from '../../core/site/pyyaml-schema.ts';
import { documentValidationError } from '../../facade/relabel-error.ts';

/**
 * Joins files of YAML documents into one stream, each document starting
 * with `---` (comments kept). Plain concatenation is not safe (a file may
 * end without a newline or start without a marker), so each document is
 * re-emitted. Empty documents are dropped.
 */
export function documentsYaml(files: readonly { text: string }[]): string {
  const out: string[] = [];
  for (const file of files) {
    const docs = parseAllDocuments(file.text);
    if (docs.some((doc) => doc.errors.length > 0)) {
      // Not YAML (a revision stored without validation): shown as it is, never hidden.
      const start = file.text.trimStart().startsWith('---') ? '' : '---\n';
      out.push(`${start}${file.text}${file.text.endsWith('\n') ? '' : '\n'}`);
      continue;
    }
    for (const doc of docs) {
      if (doc.contents === null) continue;
      out.push(doc.toString({ directives: true }));
    }
  }
  return out.join('');
}

/** Deckhand's redaction of a secret's path: the SHA-256 of its JSON text. */
function redactPath(path: string): string {
  return createHash('sha256').update(JSON.stringify(path)).digest('hex');
}

/**
 * A site's files rendered as Deckhand renders them, as one YAML stream
 * (what Drydock reads through its design_ref): abstract and replaced
 * documents left out, the paths of substitutions from encrypted documents
 * redacted as Deckhand redacts them, scalars written so PyYAML reads them
 * back as they were read (`"yes"` stays a string, `0555` was 365).
 * DocumentValidationFailed, listing the errors, when the site does not render.
 */
export function renderedYaml(files: readonly { bucket?: string; source: string; text: string }[], what: string): string {
  const result = renderedDocuments(
    files.map((f) => ({ source: f.bucket === undefined ? f.source : `${f.bucket}/${f.source}`, text: f.text })),
    redactPath,
  );
  if (!result.ok) throw documentValidationError(what, result.errors);
  return result.documents.map((doc) => `---\n${stringify(doc, { ...PYYAML_OPTIONS, lineWidth: 0 })}`).join('');
}

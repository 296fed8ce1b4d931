/**
 * Documents as Airship clients read them: one multi-document YAML stream.
 */
import { parseAllDocuments } from 'yaml';

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

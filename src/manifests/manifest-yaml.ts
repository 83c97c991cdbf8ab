// A manifest as YAML: a comment block, then the object in block style with lists of plain values
// on one line. The yaml library quotes what needs quoting, so values from an inventory cannot
// change the document's structure.
import { Document, isScalar, visit } from 'yaml';

export function manifestYaml(comment: readonly string[], obj: unknown): string {
  const head = comment.map((l) => (l === '' ? '#' : `# ${l}`)).join('\n');
  const doc = new Document(obj);
  visit(doc, {
    Seq(_, node) {
      if (node.items.every(isScalar)) node.flow = true;
    },
  });
  return `${head ? `${head}\n` : ''}${doc.toString({ lineWidth: 0, indentSeq: true, flowCollectionPadding: false })}`;
}

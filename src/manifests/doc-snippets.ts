// The docs' copies of shipped manifests: a fenced yaml block right after a marker line
// `<!-- manifest: deploy/... -->` holds that manifest (without its comment block). Pure text in,
// text out; scripts/write-manifests.ts writes the result, the test compares it.
const MARKER = /^<!-- manifest: (\S+) -->\n```yaml\n([\s\S]*?)^```$/gm;

export interface DocSnippet {
  path: string;
  body: string;
}

export function findSnippets(markdown: string): DocSnippet[] {
  return [...markdown.matchAll(MARKER)].map((m) => ({ path: m[1]!, body: m[2]! }));
}

/** The markdown with every marked block replaced by `render(path)`; unknown paths are an error. */
export function fillSnippets(markdown: string, render: (path: string) => string | undefined): string {
  return markdown.replace(MARKER, (_all, path: string) => {
    const body = render(path);
    if (body === undefined) throw new Error(`<!-- manifest: ${path} -->: no such shipped manifest (src/manifests/shipped-manifests.ts)`);
    return `<!-- manifest: ${path} -->\n\`\`\`yaml\n${body}\`\`\``;
  });
}

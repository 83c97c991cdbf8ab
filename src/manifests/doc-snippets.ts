// The docs' copies of shipped files: a fenced block right after a marker line
// `<!-- manifest: deploy/... -->` holds that file (a pod or DaemonSet without its comment block, a
// systemd unit as it is). Pure text in, text out; scripts/write-manifests.ts writes the result,
// test/deploy/manifest-source.test.ts compares it.
const MARKER = /^<!-- manifest: (\S+) -->\n```(yaml|ini)\n([\s\S]*?)^```$/gm;

export interface DocSnippet {
  path: string;
  body: string;
}

export function findSnippets(markdown: string): DocSnippet[] {
  return [...markdown.matchAll(MARKER)].map((m) => ({ path: m[1]!, body: m[3]! }));
}

/** The markdown with every marked block replaced by `render(path)`; unknown paths are an error. */
export function fillSnippets(markdown: string, render: (path: string) => string | undefined): string {
  return markdown.replace(MARKER, (_all, path: string, lang: string) => {
    const body = render(path);
    if (body === undefined) throw new Error(`<!-- manifest: ${path} -->: no such shipped file (src/manifests/shipped-manifests.ts or a deploy/ unit)`);
    return `<!-- manifest: ${path} -->\n\`\`\`${lang}\n${body}\`\`\``;
  });
}

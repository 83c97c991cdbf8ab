export function modeNodeFlags(mode: string | undefined, nodeOptions: string | undefined): string[];

export function modeV8Flags(mode: string | undefined, shared: readonly string[]): string[];

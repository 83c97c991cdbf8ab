export function modeNodeFlags(mode: string | undefined, nodeOptions: string | undefined): string[];

export function modeV8Flags(mode: string | undefined, shared: readonly string[]): string[];
export function modeEnv(mode: string | undefined, env: Record<string, string | undefined>): Record<string, string>;
export const OPERATOR_MALLOC: Readonly<Record<string, string>>;
export const MALLOC_NAMES: readonly string[];

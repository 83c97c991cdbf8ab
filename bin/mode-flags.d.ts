export function modeNodeFlags(mode: string | undefined, nodeOptions: string | undefined): string[];

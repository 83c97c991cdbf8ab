// The whole-number flags of the bench's entry scripts (run-bench.ts, paced-compare.ts,
// soak/soak-main.ts): one grammar, digits only, so "1e3", "0x10", " 5" or "" are refused rather
// than read as numbers by Number(). Pure; each script words its own refusal.

/** The value of a whole-number flag from min to max, or undefined when the text is not one. */
export function wholeNumber(text: string, min: number, max: number): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= min && n <= max ? n : undefined;
}

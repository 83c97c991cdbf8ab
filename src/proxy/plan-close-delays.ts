// When to close each connection of a dead or drained upstream: spread over a window, with jitter,
// so a node's clients do not all reconnect (and relist) in the same instant. Pure.

/**
 * One delay per connection, in the order given. The window is cut into equal slots and each
 * connection closes at a random point of its own slot: the closes are spread evenly (no burst even
 * with an unlucky random source) and still jittered. A spread of 0 or less closes everything now.
 */
export function planCloseDelays(count: number, spreadMs: number, random: () => number = Math.random): number[] {
  if (count <= 0) return [];
  if (spreadMs <= 0) return new Array<number>(count).fill(0);
  const slot = spreadMs / count;
  const delays: number[] = [];
  for (let i = 0; i < count; i++) delays.push(Math.floor((i + random()) * slot));
  return delays;
}

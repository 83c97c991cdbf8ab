// Which process serves a new client connection when the primary hands them out (--workers): the
// one with the fewest open connections. apiserver clients (kubelet, kube-proxy, controllers'
// watches) hold their connections for hours, so the spread decided at connect time is the spread
// of the load; the kernel's SO_REUSEPORT hash ignores load and left 39/25 of 64 (docs/design/worker-accept.md).

/**
 * The index of the worker to hand the connection to, or -1 to keep it in the primary. `workers`
 * holds each eligible worker's open connections as the primary counts them (reported, plus those
 * sent and not yet reported). The primary wins a tie: keeping a connection costs no hand-over.
 */
export function pickProcess(primaryOpen: number, workers: readonly number[]): number {
  let best = -1;
  let least = primaryOpen;
  for (let i = 0; i < workers.length; i++) {
    if (workers[i]! < least) {
      least = workers[i]!;
      best = i;
    }
  }
  return best;
}

// How long this process's event loop stood still while a probe was out. A loop stalled by our own
// load (a GC pause, a burst of work, a starved CPU) fires a probe's deadline before it reads the
// answer that arrived in time: libuv runs expired timers before it polls sockets. Such a timeout
// says nothing about the peer, so the checkers ask this watch before they blame one.
import { judgeStall, type ProbeResult } from './probe-result.ts';

/** Ticks while a probe is out; stop() gives the longest time the loop stood past a tick, in ms. */
export interface StallWatch {
  stop(): number;
}

const TICK_MS = 100;

export function watchLoopStall(tickMs = TICK_MS): StallWatch {
  let last = process.hrtime.bigint();
  let worst = 0;
  const note = (): void => {
    const now = process.hrtime.bigint();
    worst = Math.max(worst, Number(now - last) / 1e6 - tickMs);
    last = now;
  };
  const timer = setInterval(note, tickMs);
  // A watch never keeps the process alive on its own.
  timer.unref();
  return {
    stop(): number {
      clearInterval(timer);
      note();
      return Math.max(0, Math.round(worst));
    },
  };
}

/** Runs one probe with a stall watch out, and judges a timeout our own stalled loop caused as local. */
export async function probeJudgingStall(probe: () => Promise<ProbeResult>): Promise<ProbeResult> {
  const stall = watchLoopStall();
  const found = await probe();
  return judgeStall(found, stall.stop());
}

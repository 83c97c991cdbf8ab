// Fixed-size read buffers for the data path, cut from large slabs: each socket reads into its own
// slice (net's `onread`), so no buffer is allocated per chunk and none per connection.
//
// Why slabs: a slab is one allocation of several MiB, which malloc serves with mmap, and the kernel
// backs a page only once it is written. A connection that never receives a byte (an idle one)
// costs address space, not memory; one that received a few bytes costs the pages those bytes
// touched. Free slices are reused last-in first-out, so the slices handed out next are the ones
// already resident. Slabs are kept for the life of the process (a burst's resident pages stay
// reusable, they are not returned to the OS).

export interface ReadBufferPoolOptions {
  /** Bytes per slice: the most one read() takes from the kernel. Default 64 KiB. */
  sliceBytes?: number;
  /** Slices per slab. Default: as many as fit in 4 MiB (at least 1). */
  slicesPerSlab?: number;
}

export class ReadBufferPool {
  readonly sliceBytes: number;
  readonly #perSlab: number;
  readonly #free: Buffer[] = [];
  #slabs = 0;

  constructor(opts: ReadBufferPoolOptions = {}) {
    this.sliceBytes = opts.sliceBytes ?? 64 * 1024;
    this.#perSlab = opts.slicesPerSlab ?? Math.max(1, Math.floor((4 * 1024 * 1024) / this.sliceBytes));
  }

  /** A slice for one socket's reads; give it back once no write refers to it any more. */
  take(): Buffer {
    if (this.#free.length === 0) this.#grow();
    return this.#free.pop()!;
  }

  give(slice: Buffer): void {
    this.#free.push(slice);
  }

  get stats(): { slabs: number; free: number; inUse: number } {
    return { slabs: this.#slabs, free: this.#free.length, inUse: this.#slabs * this.#perSlab - this.#free.length };
  }

  #grow(): void {
    // allocUnsafeSlow: a slab of its own, never zero-filled (zeroing would make every page resident).
    const slab = Buffer.allocUnsafeSlow(this.sliceBytes * this.#perSlab);
    this.#slabs++;
    // Pushed last slice first, so the slab is handed out from its start.
    for (let i = this.#perSlab - 1; i >= 0; i--) this.#free.push(slab.subarray(i * this.sliceBytes, (i + 1) * this.sliceBytes));
  }
}

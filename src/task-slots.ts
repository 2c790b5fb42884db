/** At most `size` tasks run at once; the others wait their turn, first come first served. */
export class TaskSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next task: `running` counts it still.
      if (next) next();
      else this.running--;
    }
  }
}

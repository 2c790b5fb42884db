/**
 * Runs `count` clients, each calling `step` again as soon as its previous call settled, until
 * `done()` says so: a closed loop, as real clients with one connection each behave.
 */
export async function runClients(
  count: number,
  done: () => boolean,
  step: (client: number, iteration: number) => Promise<void>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async (_, client) => {
      for (let iteration = 0; !done(); iteration++) await step(client, iteration);
    }),
  );
}

/** A random integer from 0 to `n` - 1. */
export const randomInt = (n: number) => Math.floor(Math.random() * n);

/** Keeps the first `limit` messages and counts the rest, for a failure message that stays short. */
export class Problems {
  readonly messages: string[] = [];
  count = 0;
  readonly limit: number;

  constructor(limit = 20) {
    this.limit = limit;
  }

  add(message: string) {
    this.count++;
    if (this.messages.length < this.limit) this.messages.push(message);
  }

  summary() {
    if (this.count === 0) return "none";
    const more =
      this.count > this.messages.length ? `\n… and ${this.count - this.messages.length} more` : "";
    return `${this.count}:\n${this.messages.join("\n")}${more}`;
  }
}

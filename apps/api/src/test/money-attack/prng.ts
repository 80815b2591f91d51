/**
 * A small seeded PRNG (mulberry32): the same seed gives the same choices, so a failing seed can
 * be replayed (only timing differs between runs).
 */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One entry of a table, with probability proportional to its weight. */
  weighted<T extends { weight: number }>(table: readonly T[]): T {
    const total = table.reduce((sum, entry) => sum + entry.weight, 0);
    let roll = this.next() * total;
    for (const entry of table) {
      roll -= entry.weight;
      if (roll < 0) return entry;
    }
    return table[table.length - 1] as T;
  }

  /** An independent stream for one actor, derived from this seed. */
  fork(index: number): Prng {
    return new Prng(Math.imul(this.state ^ (index + 1), 2_654_435_761) ^ (index * 40_503));
  }
}

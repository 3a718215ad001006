import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PublishedText } from "./published-text.ts";

// pieces as a partial text makes them: plain text, non-Latin-1, astral characters and lone surrogates (a
// piece may end inside a pair), from empty to past the span it joins (256 Ki characters)
const unit = fc.constantFrom("a", "b", " ", "\n", "é", "€", "😀", "\ud83d", "\ude00");
const piece = fc.oneof(
  fc.array(unit, { maxLength: 40 }).map((units) => units.join("")),
  fc
    .tuple(fc.array(unit, { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 40_000 }))
    .map(([units, times]) => units.join("").repeat(times)),
);

describe("PublishedText", () => {
  it("reads back every published length, in order or not, with the extra after it", () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (pieces, reads) => {
          const store = new PublishedText();
          let whole = "";
          const lengths: number[] = [0];
          for (const [index, next] of pieces.entries()) {
            store.append(next);
            whole += next;
            lengths.push(store.length);
            expect(store.length).toBe(whole.length);
            // in order, as a consumer that reads each event's text does
            if (index % 3 === 0) expect(store.textAt(store.length, "")).toBe(whole);
          }
          // any earlier event, later and in any order
          for (const read of reads) {
            const length = lengths[read % lengths.length] as number;
            expect(store.textAt(length, "xy")).toBe(`${whole.slice(0, length)}xy`);
          }
          expect(store.textAt(store.length, "")).toBe(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reads lengths that end inside a piece (decoded from the store)", () => {
    const store = new PublishedText();
    store.append("héllo 😀 wörld");
    store.append("x".repeat(300_000));
    store.append("tail");
    const whole = `héllo 😀 wörld${"x".repeat(300_000)}tail`;
    for (const length of [3, 7, 8, 9, 20_001, 262_144, whole.length - 2, whole.length])
      expect(store.textAt(length, "")).toBe(whole.slice(0, length));
  });

  it("reads a long run of small pieces in order, across the joins", () => {
    const store = new PublishedText();
    let whole = "";
    for (let index = 0; index < 300_000; index++) {
      const next = `${index % 10}${index % 7 === 0 ? "\n" : ""}`;
      store.append(next);
      whole += next;
      if (index % 97 === 0) expect(store.textAt(store.length, "").length).toBe(whole.length);
    }
    expect(store.textAt(store.length, "")).toBe(whole);
    expect(store.textAt(5, "!")).toBe(`${whole.slice(0, 5)}!`);
  });
});

import { describe, expect, it } from "vitest";
import { pickedText, togglePicked, visibleTags } from "./tags";

const tags = [
  { id: "t1", name: "run42", samples: 12 },
  { id: "t2", name: "Demo", samples: 1 },
  { id: "t3", name: "plate-7", samples: 96 },
];

describe("the tags list", () => {
  it("sorts by name or by samples, most first", () => {
    expect(visibleTags(tags, "", "name").map((t) => t.name)).toEqual(["Demo", "plate-7", "run42"]);
    expect(visibleTags(tags, "", "samples").map((t) => t.name)).toEqual(["plate-7", "run42", "Demo"]);
    expect(visibleTags(tags, " RUN", "name").map((t) => t.id)).toEqual(["t1"]);
  });
  it("picks and unpicks tags, and says what will be shown", () => {
    let picked = togglePicked([], "t1");
    picked = togglePicked(picked, "t3");
    expect(picked).toEqual(["t1", "t3"]);
    expect(pickedText(tags, picked, false)).toBe("Samples tagged run42 and plate-7");
    expect(pickedText(tags, picked, true)).toBe("Samples tagged run42 or plate-7");
    expect(pickedText(tags, togglePicked(picked, "t1"), false)).toBe("Samples tagged plate-7");
    expect(pickedText(tags, [], false)).toContain("Pick one or more tags");
  });
});

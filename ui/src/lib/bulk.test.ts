import { describe, expect, it } from "vitest";
import { outcomeText, projectNameProblem, tagChange } from "./bulk";

const tags = [
  { id: "t1", name: "MiSeq" },
  { id: "t2", name: "outbreak-7" },
];

describe("bulk changes", () => {
  it("reuses an existing tag by name, whatever its case, and makes a new one otherwise", () => {
    expect(tagChange(" miseq ", tags)).toEqual({ add_tags: ["t1"] });
    expect(tagChange("ward-3", tags)).toEqual({ new_tags: ["ward-3"] });
    expect(tagChange("   ", tags)).toBeNull();
  });
  it("says what was done and why the rest was not", () => {
    expect(outcomeText({ done: 3, failed: [] }, "Tagged")).toBe("Tagged 3 samples.");
    expect(outcomeText({ done: 1, failed: [{ id: "a", message: "Only the owner may change this sample." }] }, "Deleted")).toBe(
      "Deleted 1 sample. 1 sample could not be changed: Only the owner may change this sample.",
    );
    expect(
      outcomeText({ done: 0, failed: [{ id: "a", message: "Gone." }, { id: "b", message: "Gone." }] }, "Moved"),
    ).toBe("2 samples could not be changed: Gone. (and 1 more)");
  });
});

describe("a new project's short name", () => {
  it("is checked as the service checks it, saying what is wrong", () => {
    expect(projectNameProblem(" outbreak_7 ")).toBeNull();
    expect(projectNameProblem("ab")).toBe("A project's short name has 3 to 15 characters; “ab” has 2.");
    expect(projectNameProblem("outbreak seven")).toBe("A project's short name uses only letters, digits, - and _ (no spaces); “outbreak seven” does not.");
    expect(projectNameProblem("a-very-long-project-name")).toContain("3 to 15 characters");
  });
});

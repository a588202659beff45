import { describe, expect, it } from "vitest";
import { groupCounts, permissionsText, projectNameProblem, sharingText, visibleProjects, type ProjectRow } from "./projects";

const person = (email: string, me = false) => ({ id: email, email, me });
const project = (short_name: string, role: "owner" | "member" | "public", description: string | null = null): ProjectRow => ({
  id: short_name,
  short_name,
  name: short_name,
  description,
  public: role === "public",
  owner: role === "owner" ? person("me@local.mgds", true) : person("anna@lab.org"),
  role,
  permissions: role === "public" ? [] : ["can_see_files", "can_add_files", "can_edit_metadata", "can_download_files"],
});
const rows = [project("outbreak_7", "owner", "Ward 3 isolates"), project("amr-survey", "member"), project("Public_ref", "public")];

describe("the projects list", () => {
  it("groups by how the user relates to each project", () => {
    expect(groupCounts(rows)).toEqual({ all: 3, owner: 1, member: 1, public: 1 });
    expect(visibleProjects(rows, "member", "").map((p) => p.short_name)).toEqual(["amr-survey"]);
  });
  it("finds by name, description or owner, in short-name order", () => {
    expect(visibleProjects(rows, "all", "").map((p) => p.short_name)).toEqual(["amr-survey", "outbreak_7", "Public_ref"]);
    expect(visibleProjects(rows, "all", "ward").map((p) => p.short_name)).toEqual(["outbreak_7"]);
    expect(visibleProjects(rows, "all", "anna@").map((p) => p.short_name)).toEqual(["amr-survey", "Public_ref"]);
  });
  it("checks a short name as the service does", () => {
    expect(projectNameProblem("outbreak_7")).toBeNull();
    expect(projectNameProblem("outbreak 7")).toContain("no spaces");
  });
});

describe("permissions and sharing in words", () => {
  it("says what a member may do", () => {
    expect(permissionsText(["can_see_files", "can_add_files", "can_edit_metadata", "can_download_files"])).toBe("May do everything but change the project.");
    expect(permissionsText(["can_see_files", "can_download_files"])).toBe("May see samples and download files.");
    expect(permissionsText(["can_see_files"])).toBe("May see samples.");
    expect(permissionsText([])).toBe("May see the project only.");
  });
  it("says who sees a public or private project", () => {
    expect(sharingText(true)).toContain("anyone with access to this service");
    expect(sharingText(false)).toContain("only you and the members you add");
  });
});

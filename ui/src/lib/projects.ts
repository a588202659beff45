// The Projects screen: projects grouped by how the user relates to them, and members'
// permissions in words. A new project's short name is checked as the service checks it
// (`projectNameProblem`, shared with the selection bar's "New project…").
import type { ProjectRow, Role } from "./bindings";

export { projectNameProblem } from "./bulk";
export type { Access, Member, NewProject, ProjectChange, ProjectDetail, ProjectRow, Role } from "./bindings";

/** The rule a short name must follow, as the form states it before anything is sent. */
export const SHORT_NAME_RULE = "3 to 15 letters, digits, - or _ (no spaces); unique in your organisation.";

export const ROLE_TEXT: Record<Role, string> = { owner: "Yours", member: "Member", public: "Public" };

export type ProjectGroup = "all" | Role;

/** The projects of `group` whose names or description contain `text`, by short name. */
export function visibleProjects(rows: ProjectRow[], group: ProjectGroup, text: string): ProjectRow[] {
  const needle = text.trim().toLowerCase();
  return rows
    .filter((p) => group === "all" || p.role === group)
    .filter(
      (p) =>
        !needle ||
        [p.short_name, p.name, p.description ?? "", p.owner.email ?? ""].some((s) => s.toLowerCase().includes(needle)),
    )
    .sort((a, b) => a.short_name.toLowerCase().localeCompare(b.short_name.toLowerCase()));
}

/** How many projects each group holds. */
export function groupCounts(rows: ProjectRow[]): Record<ProjectGroup, number> {
  const n = (r: Role) => rows.filter((p) => p.role === r).length;
  return { all: rows.length, owner: n("owner"), member: n("member"), public: n("public") };
}

const PERMISSIONS: [string, string][] = [
  ["can_see_files", "see samples"],
  ["can_add_files", "add samples and run analyses"],
  ["can_edit_metadata", "edit metadata and tags"],
  ["can_download_files", "download files"],
];

/** "May see samples and download files." */
export function permissionsText(perms: string[]): string {
  const words = PERMISSIONS.filter(([p]) => perms.includes(p)).map(([, w]) => w);
  if (words.length === 0) return "May see the project only.";
  if (words.length === PERMISSIONS.length) return "May do everything but change the project.";
  const last = words.pop();
  return `May ${words.length ? `${words.join(", ")} and ${last}` : last}.`;
}

/** What making a project public or private does, for the switch's description. */
export function sharingText(isPublic: boolean): string {
  return isPublic
    ? "Public: anyone with access to this service sees the project and its shared samples; only members see who belongs to it."
    : "Private: only you and the members you add see it.";
}

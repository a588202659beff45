// The Tags screen: the tags with their sample counts, found by name, sorted by name or count,
// and the ones picked to filter the samples table.
import type { TagCount } from "./bindings";

export type { TagCount };

export type TagSort = "name" | "samples";

/** The tags whose name contains `text`, by name (A to Z) or by samples (most first). */
export function visibleTags(tags: TagCount[], text: string, sort: TagSort): TagCount[] {
  const needle = text.trim().toLowerCase();
  const kept = tags.filter((t) => !needle || t.name.toLowerCase().includes(needle));
  return [...kept].sort((a, b) =>
    sort === "samples" && b.samples !== a.samples ? b.samples - a.samples : a.name.toLowerCase().localeCompare(b.name.toLowerCase()),
  );
}

/** `picked` with `id` added, or taken off if it was there. */
export function togglePicked(picked: string[], id: string): string[] {
  return picked.includes(id) ? picked.filter((p) => p !== id) : [...picked, id];
}

/** "Samples tagged run42 and soil" / "… run42 or soil". */
export function pickedText(tags: TagCount[], picked: string[], any: boolean): string {
  const names = picked.map((id) => tags.find((t) => t.id === id)?.name ?? "a tag");
  if (names.length === 0) return "Pick one or more tags to see their samples.";
  if (names.length === 1) return `Samples tagged ${names[0]}`;
  const last = names.pop();
  return `Samples tagged ${names.join(", ")} ${any ? "or" : "and"} ${last}`;
}

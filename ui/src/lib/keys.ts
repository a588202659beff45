// Keyboard habits shared by the screens' forms.

/**
 * Svelte action: Escape inside the element (a form, a panel) calls `close`, and goes no
 * further, so it does not also take the window back a screen.
 */
export function closeOnEscape(node: HTMLElement, close: () => void) {
  let current = close;
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== "Escape") return;
    e.preventDefault();
    e.stopPropagation();
    current();
  };
  node.addEventListener("keydown", onKey);
  return {
    update(next: () => void) {
      current = next;
    },
    destroy() {
      node.removeEventListener("keydown", onKey);
    },
  };
}
